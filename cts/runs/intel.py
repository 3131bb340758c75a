"""Execution of one Intel subgroup-MMA case: data -> registers -> backend ->
logical result -> verdict.

Split form (cl_intel_subgroup_split_matrix_multiply_accumulate): the run
flow and its pairing-agnostic oracle live in ``cts.runs.split``; the
verdict on one pairing is ``cts.runs.intel_judge.judge_mma``, shared by both.
"""

from __future__ import annotations

import numpy as np

from cts.judge import (
    CaseResult,
    Rule,
    exact_verdict,
    same_bits_or_nan,
    sentinel,
)
from cts.runs.intel_judge import SUBGROUPS_PER_CASE, judge_mma, poison_ignored
from reference import layout
from reference.data import case_rng, mma_operands, tf32_convert_inputs
from reference.dtypes import etype, round_to_tf32
from reference.tolerance import PROFILES, Profile

__all__ = ["run_intel_mma", "judge_mma", "run_tf32_convert", "SUBGROUPS_PER_CASE"]


# tf32 operands of these tiers carry random bits below tf32 precision (see _tf32_junk)
TF32_JUNK_TIERS = ("random", "special")


def _tf32_junk(bits: np.ndarray, rng) -> np.ndarray:
    """Fill the 13 mantissa bits below tf32 precision of finite tf32 operands
    with random bits.  Spec-digest 1.5: a and b are float bits of which only
    sign, exponent and the upper 10 mantissa bits take part in the math, so the
    result must be that of the tf32 value; whether a device truncates or
    rounds the container to tf32 is not said, both are accepted
    (``cts.runs.intel_judge.judge_mma``).  A device that multiplies the full fp32 values
    fails (products off by up to 2^-9 relative, far beyond Rule F's bound)."""
    u = np.asarray(bits).astype(np.uint64)
    finite = (u & np.uint64(0x7F800000)) != np.uint64(0x7F800000)
    junk = rng.integers(0, 1 << 13, size=u.shape, dtype=np.uint64)
    return np.where(finite, u | junk, u)


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
    poison_ignored(a_regs, case, rng, M)
    d_regs = np.asarray(backend.run(case, a=a_regs, b=b_regs, c=c_regs))
    D_bits = layout.c_from_registers(d_regs) & np.uint64(acc_t.mask)
    inputs = {"A": A, "B": B, "C": C, "a_regs": a_regs, "b_regs": b_regs, "c_regs": c_regs}
    tf32_bits = (A_bits, B_bits) if junk else None
    never = D_bits == np.uint64(sentinel.sentinel_bits(acc_t))  # the backend's fill is still there
    v, exp_bits, _ = judge_mma(case, A, B, C, D_bits, profile, tf32_bits=tf32_bits, unwritten=never)
    return CaseResult(v, inputs, exp_bits, D_bits)


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
