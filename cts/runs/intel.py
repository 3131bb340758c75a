"""Execution of one Intel subgroup-MMA case: data -> registers -> backend ->
logical result -> verdict.

Split form (cl_intel_subgroup_split_matrix_multiply_accumulate): the run
flow and its pairing-agnostic oracle live in ``cts.runs.split``; the
verdict on one pairing is ``judge_mma`` below, shared by both.
"""

from __future__ import annotations

import numpy as np

from cts.judge import (
    CaseResult,
    MmaRules,
    Rule,
    Verdict,
    compare,
    exact_verdict,
    judge_mma_float,
    same_bits_or_nan,
    sentinel,
)
from reference import layout
from reference.data import case_rng, mma_operands, tf32_convert_inputs
from reference.dtypes import etype, round_to_tf32
from reference.mma import mma_int
from reference.tolerance import PROFILES, Profile

__all__ = ["run_intel_mma", "judge_mma", "run_tf32_convert", "SUBGROUPS_PER_CASE"]

SUBGROUPS_PER_CASE = 32


# the Intel OpenCL extensions promise a "full precision" accumulator
# (cl_intel_subgroup_matrix_multiply_accumulate)
INTEL_RULES = MmaRules(full_precision=True)


def _poison_ignored(regs: np.ndarray, case, rng, rows: int) -> None:
    """Fill A slots the spec says are ignored (N > K, M = 1) with junk."""
    for inv, comp in layout.a_ignored_lanes(rows, case.k, case.sg):
        regs[..., inv, comp] = rng.integers(0, 1 << case.a_container_bits, size=regs.shape[:-2])


# tf32 operands of these tiers carry random bits below tf32 precision (see _tf32_junk)
TF32_JUNK_TIERS = ("random", "special")


def _tf32_junk(bits: np.ndarray, rng) -> np.ndarray:
    """Fill the 13 mantissa bits below tf32 precision of finite tf32 operands
    with random bits.  Spec-digest 1.5: a and b are float bits of which only
    sign, exponent and the upper 10 mantissa bits take part in the math, so the
    result must be that of the tf32 value; whether a device truncates or
    rounds the container to tf32 is not said, both are accepted
    (``_tf32_candidates``).  A device that multiplies the full fp32 values
    fails (products off by up to 2^-9 relative, far beyond Rule F's bound)."""
    u = np.asarray(bits).astype(np.uint64)
    finite = (u & np.uint64(0x7F800000)) != np.uint64(0x7F800000)
    junk = rng.integers(0, 1 << 13, size=u.shape, dtype=np.uint64)
    return np.where(finite, u | junk, u)


def _tf32_rne_values(bits: np.ndarray) -> np.ndarray:
    """Values of tf32 containers rounded to nearest even (Rule T)."""
    f = (np.asarray(bits).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return round_to_tf32(f).astype(np.float64)


def run_intel_mma(
    case, backend, seed: int, profile: Profile = PROFILES["default"], subgroups: int = SUBGROUPS_PER_CASE
) -> CaseResult:
    if case.split:  # cts.runs.split: the pairing-agnostic oracle of the split extension
        from cts.runs.split import run_intel_split_mma

        return run_intel_split_mma(case, backend, seed, profile, subgroups)
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    a_t, b_t, acc_t = etype(case.a), etype(case.b), etype(case.acc)
    N, K, M = case.sg, case.k, case.M
    S = subgroups

    A, B, C = mma_operands(case.tier, case.a, case.b, case.acc, M, K, N, S, rng)
    A_bits, B_bits, C_bits = a_t.encode(A), b_t.encode(B), acc_t.encode(C)
    junk = case.a == "tf32" and case.tier in TF32_JUNK_TIERS
    if junk:  # A and B keep the tf32 values (= the containers truncated)
        A_bits, B_bits = _tf32_junk(A_bits, rng), _tf32_junk(B_bits, rng)

    b_regs = layout.b_register_image(B_bits, case.b_elem_bits)
    c_regs = layout.c_register_image(C_bits)
    a_regs = layout.a_register_image(A_bits, N, case.a_elem_bits)
    _poison_ignored(a_regs, case, rng, M)
    d_regs = np.asarray(backend.run(case, a=a_regs, b=b_regs, c=c_regs))
    D_bits = layout.c_from_registers(d_regs) & np.uint64(acc_t.mask)
    inputs = {"A": A, "B": B, "C": C, "a_regs": a_regs, "b_regs": b_regs, "c_regs": c_regs}
    tf32_bits = (A_bits, B_bits) if junk else None
    never = D_bits == np.uint64(sentinel.sentinel_bits(acc_t))  # the backend's fill is still there
    v, exp_bits, _ = judge_mma(case, A, B, C, D_bits, profile, tf32_bits=tf32_bits, unwritten=never)
    return CaseResult(v, inputs, exp_bits, D_bits)


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
        hint = _onehot_hint(case, A, B, C, D_bits, acc_t)
    if not a_t.is_float:
        exp_bits = acc_t.encode(mma_int(A, B, C, 32))
        ok = exp_bits == D_bits
        v = compare(exp_bits, D_bits, acc_t, ok, Rule.I, where, hint=hint, unwritten=unwritten)
        return v, exp_bits, ok
    variants = ()
    if tf32_bits is not None:  # truncated (A, B) or rounded to nearest even, per operand
        A_rne, B_rne = _tf32_rne_values(tf32_bits[0]), _tf32_rne_values(tf32_bits[1])
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


def _onehot_hint(case, A, B, C, D_bits, acc_t):
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


def run_tf32_convert(case, backend, seed: int, items: int = 256) -> CaseResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    x = tf32_convert_inputs(case.tier, (items, case.width), rng)
    y = np.asarray(backend.run(case, x=x), dtype=np.float32)
    exp = round_to_tf32(x)
    t = etype("f32")
    eb = exp.view(np.uint32).astype(np.uint64)[None]
    ab = y.view(np.uint32).astype(np.uint64)[None]
    never = ab == np.uint64(sentinel.sentinel_bits(t))  # the backend's fill: a NaN no rounding makes
    v = exact_verdict(
        eb, ab, t, lambda s, r, c: (r, c), rule=Rule.T, ok=same_bits_or_nan(eb, ab, t), unwritten=never
    )
    return CaseResult(v, {"x": x}, eb[0], ab[0])
