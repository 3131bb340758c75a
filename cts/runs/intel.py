"""Execution of one Intel subgroup-MMA case: data -> registers -> backend ->
logical result -> verdict.

Split form (cl_intel_subgroup_split_matrix_multiply_accumulate): the spec
leaves the pairing to the implementation (its open issue 1).  This suite
pairs the two subgroups of one work-group of 2 x 8 work-items: subgroup 0
passes rows 0 .. M/2-1 of the shared A and subgroup 1 rows M/2 .. M-1.  Each
subgroup passes its *own* B and accumulator and receives its own result
A x B_own + acc_own, so a device that multiplies only its own half of A, or
mixes up the partner's B, fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cts.check import Verdict, compare
from reference import layout
from reference.data import case_rng, mma_operands, tf32_convert_inputs
from reference.dtypes import etype, round_to_tf32
from reference.mma import mma_float, mma_int
from reference.tolerance import (
    PROFILES,
    Profile,
    exact_or_rounding_check,
    float_close,
    flush_subnormals,
    mma_float_bound,
    rounding_mode,
)

__all__ = ["RunResult", "run_intel_mma", "run_tf32_convert", "SUBGROUPS_PER_CASE"]

SUBGROUPS_PER_CASE = 32


@dataclass
class RunResult:
    verdict: Verdict
    inputs: dict  # logical operands (values) and registers, for repro bundles
    expected: np.ndarray  # expected result bits (logical layout)
    actual: np.ndarray


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
) -> RunResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    a_t, b_t, acc_t = etype(case.a), etype(case.b), etype(case.acc)
    N, K, M = case.sg, case.k, case.M
    split = case.split
    P = subgroups // 2 if split else subgroups
    S = 2 * P if split else P

    A, B, C = mma_operands(case.tier, case.a, case.b, case.acc, M, K, N, S, rng)
    if split:  # one A per pair: the first subgroup's A matrix is the shared one
        A = A[0::2]
    A_bits, B_bits, C_bits = a_t.encode(A), b_t.encode(B), acc_t.encode(C)
    junk = case.a == "tf32" and case.tier in TF32_JUNK_TIERS
    if junk:  # A and B keep the tf32 values (= the containers truncated)
        A_bits, B_bits = _tf32_junk(A_bits, rng), _tf32_junk(B_bits, rng)

    b_regs = layout.b_register_image(B_bits, case.b_elem_bits)
    c_regs = layout.c_register_image(C_bits)
    if split:
        a_regs = layout.split_a_register_images(A_bits, N, case.a_elem_bits)
        _poison_ignored(a_regs, case, rng, M // 2)
        b_in = b_regs.reshape(P, 2, *b_regs.shape[1:])
        c_in = c_regs.reshape(P, 2, *c_regs.shape[1:])
        d_regs = backend.run(case, a=a_regs, b=b_in, c=c_in)
        d_regs = np.asarray(d_regs).reshape(S, N, M)
        A_full = np.repeat(A, 2, axis=0)  # each subgroup's logical A
    else:
        a_regs = layout.a_register_image(A_bits, N, case.a_elem_bits)
        _poison_ignored(a_regs, case, rng, M)
        d_regs = np.asarray(backend.run(case, a=a_regs, b=b_regs, c=c_regs))
        A_full = A
    D_bits = layout.c_from_registers(d_regs) & np.uint64(acc_t.mask)

    def where(s, r, c):  # result element (r, c) lives in invocation c, component r
        return c, r

    inputs = {"A": A_full, "B": B, "C": C, "a_regs": a_regs, "b_regs": b_regs, "c_regs": c_regs}
    if not a_t.is_float:
        exp = mma_int(A_full, B, C, 32)
        exp_bits = acc_t.encode(exp)
        ok = exp_bits == D_bits
        hint = _onehot_hint(case, A_full, B, C, D_bits, acc_t) if case.tier == "onehot" else None
        v = compare(exp_bits, D_bits, acc_t, ok, "I", where, hint=hint)
        return RunResult(v, inputs, exp_bits, D_bits)

    ref = mma_float(A_full, B, C)
    actual = acc_t.decode(D_bits)
    exp_bits = acc_t.encode(ref.value)
    rmode = rounding_mode(profile, full_precision=True)  # the Intel extensions: "full precision"
    if case.tier in ("exact", "onehot") or (case.tier == "rounding" and rmode != "bound"):
        ok, rbound, rule, err = exact_or_rounding_check(acc_t, ref.value, actual, case.tier, rmode)
        hint = _onehot_hint(case, A_full, B, C, D_bits, acc_t) if case.tier == "onehot" else None
        v = compare(exp_bits, D_bits, acc_t, ok, rule, where, error=err, bound=rbound, hint=hint)
        return RunResult(v, inputs, exp_bits, D_bits)

    bound = mma_float_bound(ref.abs_sum, ref.value, K, case.acc, case.acc, profile)
    ok = float_close(ref.value, actual, bound)
    notes = []
    operands = [(A_full, B)]
    if junk:  # truncated (A_full, B) or rounded to nearest even, per operand
        A_rne = _tf32_rne_values(A_bits)
        if split:
            A_rne = np.repeat(A_rne, 2, axis=0)
        B_rne = _tf32_rne_values(B_bits)
        operands += [(A_rne, B), (A_full, B_rne), (A_rne, B_rne)]
        notes.append("tf32 operands carry random bits below tf32 precision: truncation or RNE accepted")

    def accepted(Aa, Bb, Cc):
        r = mma_float(Aa, Bb, Cc)
        return float_close(
            r.value, actual, mma_float_bound(r.abs_sum, r.value, K, case.acc, case.acc, profile)
        )

    for Aa, Bb in operands[1:]:
        ok = ok | accepted(Aa, Bb, C)
    if case.tier == "special":
        # subnormal inputs may be flushed to zero (no spec says): accept either
        ok_f = np.zeros_like(ok)
        for Aa, Bb in operands:
            ok_f = ok_f | accepted(
                flush_subnormals(Aa, a_t), flush_subnormals(Bb, b_t), flush_subnormals(C, acc_t)
            )
        only_ftz = ok_f & ~ok
        if only_ftz.any():
            notes.append(f"{int(only_ftz.sum())} elements match only with subnormal inputs flushed")
        ok = ok | ok_f
    with np.errstate(invalid="ignore"):
        err = np.where(np.isfinite(ref.value) & np.isfinite(actual), np.abs(actual - ref.value), 0.0)
    v = compare(exp_bits, D_bits, acc_t, ok, "F", where, error=err, bound=bound)
    v.notes.extend(notes)
    return RunResult(v, inputs, exp_bits, D_bits)


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


def run_tf32_convert(case, backend, seed: int, items: int = 256) -> RunResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    x = tf32_convert_inputs(case.tier, (items, case.width), rng)
    y = np.asarray(backend.run(case, x=x), dtype=np.float32)
    exp = round_to_tf32(x)
    t = etype("f32")
    eb = exp.view(np.uint32).astype(np.uint64)[None]
    ab = y.view(np.uint32).astype(np.uint64)[None]
    ok = (eb == ab) | (np.isnan(exp) & np.isnan(y))[None]
    v = compare(eb, ab, t, ok, "T", lambda s, r, c: (r, c))
    return RunResult(v, {"x": x}, eb[0], ab[0])
