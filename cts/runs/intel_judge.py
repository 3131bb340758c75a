"""The verdict on Intel subgroup-MMA results, shared by the base built-ins
(``cts.runs.intel``) and the split form (``cts.runs.split``): Rule I, E / R
or F with the special-value acceptances, the one-hot mismatch explainer, and
the junk written into the A slots the extension says are ignored (so a device
that reads them fails)."""

from __future__ import annotations

import numpy as np

from cts.judge import MmaRules, Rule, Verdict, compare, judge_mma_float
from reference import layout
from reference.dtypes import etype, round_to_tf32
from reference.mma import mma_int
from reference.tolerance import Profile

__all__ = [
    "INTEL_RULES",
    "SUBGROUPS_PER_CASE",
    "judge_mma",
    "onehot_hint",
    "poison_ignored",
    "tf32_rne_values",
]


SUBGROUPS_PER_CASE = 32


# the Intel OpenCL extensions promise a "full precision" accumulator (cl_intel_subgroup_matrix_multiply_accumulate, Description)
INTEL_RULES = MmaRules(full_precision=True)


def poison_ignored(regs: np.ndarray, case, rng, rows: int) -> None:
    """Fill A slots the spec says are ignored (N > K, M = 1) with junk."""
    for inv, comp in layout.a_ignored_lanes(rows, case.k, case.sg):
        regs[..., inv, comp] = rng.integers(0, 1 << case.a_container_bits, size=regs.shape[:-2])


def tf32_rne_values(bits: np.ndarray) -> np.ndarray:
    """Values of tf32 containers rounded to nearest even (Rule T)."""
    f = (np.asarray(bits).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return round_to_tf32(f).astype(np.float64)


def judge_mma(
    case,
    A: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    D_bits: np.ndarray,
    profile: Profile,
    tf32_bits: tuple[np.ndarray, np.ndarray] | None = None,
    hint=None,
    unwritten: np.ndarray | None = None,
) -> tuple[Verdict, np.ndarray, np.ndarray]:
    """The verdict on result bits ``D_bits`` (S, M, N) for the logical
    operands A (S, M, K), B, C: Rule I, E / R or F with the special-value
    acceptances.  ``tf32_bits``: the (A, B) containers of tf32 operands that
    carry junk below tf32 precision (truncation or RNE accepted).  Returns
    (verdict, expected bits, element acceptance mask).  ``hint``: a mismatch
    explainer replacing the one-hot one."""
    a_t, acc_t = etype(case.a), etype(case.acc)
    K = case.k

    def where(s, r, c):  # result element (r, c) lives in invocation c, component r
        return c, r

    if hint is None and case.tier == "onehot":
        hint = onehot_hint(case, A, B, C, D_bits, acc_t)
    if not a_t.is_float:
        exp_bits = acc_t.encode(mma_int(A, B, C, 32))
        ok = exp_bits == D_bits
        v = compare(exp_bits, D_bits, acc_t, ok, Rule.I, where, hint=hint, unwritten=unwritten)
        return v, exp_bits, ok
    variants = ()
    if tf32_bits is not None:  # truncated (A, B) or rounded to nearest even, per operand
        A_rne, B_rne = tf32_rne_values(tf32_bits[0]), tf32_rne_values(tf32_bits[1])
        variants = ((A_rne, B), (A, B_rne), (A_rne, B_rne))
    return judge_mma_float(
        A,
        B,
        C,
        D_bits,
        acc_t,
        tier=case.tier,
        profile=profile,
        rules=INTEL_RULES,
        terms=K,
        types=(case.a, case.b, case.acc),
        variants=variants,
        where=where,
        hint=hint,
        unwritten=unwritten,
    )


def onehot_hint(case, A, B, C, D_bits, acc_t):
    """Explain a one-hot mismatch: which input element the device used (the
    result decoded only when a mismatch asks)."""
    decoded: list = []

    def hint(s, r, c):
        if not decoded:
            decoded.append(acc_t.decode(D_bits))
        D = decoded[0]
        got = D[s, r, c] - C[s, r, c]
        if D[s, r, c] == (A[s] @ B[s])[r, c]:
            return "accumulator was not added"
        row_hot = np.flatnonzero(A[s, r])
        if row_hot.size == 1:  # D[r,c] should be B[k, c] + C
            k = int(row_hot[0])
            hits = [int(j) for j in np.flatnonzero(B[s, :, c] == got) if j != k]
            if hits:
                return f"A row {r} is one-hot at k={k}; result matches B[{hits[0]},{c}] instead"
            cols = [int(j) for j in np.flatnonzero(B[s, k, :] == got) if j != c]
            if cols:
                return f"result matches B[{k},{cols[0]}]: column/invocation mix-up"
        col_hot = np.flatnonzero(B[s, :, c])
        if col_hot.size == 1:
            k = int(col_hot[0])
            hits = [int(j) for j in np.flatnonzero(A[s, r, :] == got) if j != k]
            if hits:
                return f"B column {c} is one-hot at k={k}; result matches A[{r},{hits[0]}] instead"
            rows = [int(j) for j in np.flatnonzero(A[s, :, k] == got) if j != r]
            if rows:
                return f"result matches A[{rows[0]},{k}]: row/component mix-up"
        return ""

    return hint
