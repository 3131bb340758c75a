"""Execution of one SPIR-V subgroup-MMA case: data -> register images ->
backend (module with OpSubgroupMatrixMultiplyAccumulateINTEL) -> logical
result -> verdict.

The register images come from ``reference.layout`` (SPV_INTEL_subgroup_matrix_multiply_accumulate,
Mapping Matrix Data to Invocations, the SPIR-V extension's own mapping rules); the verdict from
``reference.mma``
and ``reference.tolerance`` under the same rules as the OpenCL built-ins
(integers exact with wrap, floats Rule E / R / F).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cts.judge import (
    CaseResult,
    MmaRules,
    Rule,
    compare,
    exact_verdict,
    judge_mma_float,
    same_bits_or_nan,
    sentinel,
)
from reference import layout
from reference.data import case_rng, mma_operands, tf32_convert_inputs
from reference.dtypes import etype
from reference.intel import k_dim_value, round_f_to_tf32
from reference.mma import mma_int
from reference.tolerance import PROFILES, Profile

__all__ = [
    "CaseResult",
    "run_spirv_intel_mma",
    "case_registers",
    "CrossCheckCase",
    "crosscheck_cases",
    "run_builtin_crosscheck",
    "run_spirv_tf32_round",
    "SUBGROUPS_PER_CASE",
    "TF32_ROUND_ITEMS",
]

SUBGROUPS_PER_CASE = 32
TF32_ROUND_ITEMS = 256  # work-items of an OpRoundFToTF32INTEL case, one operand each


# SPV_INTEL_subgroup_matrix_multiply_accumulate: precision implementation-defined
# (SPV_INTEL_subgroup_matrix_multiply_accumulate, OpSubgroupMatrixMultiplyAccumulateINTEL)
SPIRV_RULES = MmaRules(full_precision=False)


def case_registers(case, seed: int, subgroups: int) -> dict:
    """Logical operands and the per-invocation register images of a case.

    A slots the spec says are ignored (N > K with rows past M) carry random
    junk, so a device that reads them fails.
    """
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    a_t, b_t, c_t = etype(case.a), etype(case.b), etype(case.c)
    N, K, M = case.sg, case.k, case.M
    A, B, C = mma_operands(case.tier, case.a, case.b, case.c, M, K, N, subgroups, rng, acc_type=case.result)
    a_regs = layout.a_register_image(a_t.encode(A), N, case.a_elem_bits)
    for inv, comp in layout.a_ignored_lanes(M, K, N):
        a_regs[:, inv, comp] = rng.integers(0, 1 << case.a_container_bits, size=subgroups, dtype=np.uint64)
    b_regs = layout.b_register_image(b_t.encode(B), case.b_elem_bits)
    c_regs = layout.c_register_image(c_t.encode(C))
    return {"A": A, "B": B, "C": C, "a_regs": a_regs, "b_regs": b_regs, "c_regs": c_regs}


def run_spirv_intel_mma(
    case, backend, seed: int, profile: Profile = PROFILES["default"], subgroups: int = SUBGROUPS_PER_CASE
) -> CaseResult:
    """Run ``case`` on ``backend`` and judge the Result against the reference."""
    _check_k_dim(case)
    ops = case_registers(case, seed, subgroups)
    A, B, C = ops["A"], ops["B"], ops["C"]
    r_t, a_t = etype(case.result), etype(case.a)
    d_regs = np.asarray(backend.run(case, a=ops["a_regs"], b=ops["b_regs"], c=ops["c_regs"]))
    if d_regs.shape != (subgroups, case.sg, case.M):
        raise ValueError(f"backend returned Result registers of shape {d_regs.shape}")
    D_bits = layout.c_from_registers(d_regs) & np.uint64(r_t.mask)

    def where(s, r, c):  # Result element (r, c) lives in invocation c, component r
        return c, r

    hint = _onehot_hint(A, B, C, D_bits, r_t) if case.tier == "onehot" else None
    never = D_bits == np.uint64(sentinel.sentinel_bits(r_t))  # the backend's fill is still there
    if not a_t.is_float:
        exp_bits = r_t.encode(mma_int(A, B, C, r_t.bits))
        v = compare(exp_bits, D_bits, r_t, exp_bits == D_bits, Rule.I, where, hint=hint, unwritten=never)
        return _noted(case, CaseResult(v, ops, exp_bits, D_bits))
    v, exp_bits, _ = judge_mma_float(
        A,
        B,
        C,
        D_bits,
        r_t,
        tier=case.tier,
        profile=profile,
        rules=SPIRV_RULES,
        terms=case.k,
        types=(case.a, case.b, case.c),
        where=where,
        hint=hint,
        unwritten=never,
    )
    return _noted(case, CaseResult(v, ops, exp_bits, D_bits))


def _check_k_dim(case) -> None:
    """The K the module's K Dim yields once built (reference.intel.k_dim_value:
    a constant's value, or a specialization constant's value as the build
    sets it) must be the case's K, the K of the operands and the oracle."""
    from cts.errors import HarnessError
    from cts.kernels.spirv_intel import k_dim_operand, specialization

    k = k_dim_value(*k_dim_operand(case), specialization(case))
    if k != case.k:
        raise HarnessError(f"the module of {case.id} computes with K Dim {k}, not the case's K = {case.k}")


def _noted(case, result: CaseResult) -> CaseResult:
    """Extended combinations: a failure departs from the instruction's
    mapping rules, but the OpenCL SPIR-V environment does not require them."""
    if case.level == "extended" and not result.verdict.passed:
        result.verdict.notes.append(
            "extended combination: defined by the SPV_INTEL mapping rules "
            "(SPV_INTEL_subgroup_matrix_multiply_accumulate, Mapping Matrix Data to Invocations) but not "
            "in the OpenCL SPIR-V environment's required list (cl_intel_subgroup_matrix_multiply_accumulate), "
            "where other forms are undefined behaviour"
        )
    return result


def _onehot_hint(A, B, C, D_bits, r_t):
    """One-hot tier: name the input element a wrong Result element used
    (the Result decoded only when a mismatch asks)."""
    decoded: list = []

    def hint(s: int, r: int, c: int) -> str:
        if not decoded:
            decoded.append(r_t.decode(D_bits))
        D = decoded[0]
        got = D[s, r, c] - C[s, r, c]
        hot = np.flatnonzero(A[s, r])
        if hot.size == 1:  # D[r, c] should be B[k, c] + C[r, c]
            k = int(hot[0])
            rows = [int(j) for j in np.flatnonzero(B[s, :, c] == got) if j != k]
            if rows:
                return f"A row {r} is one-hot at k={k}; Result matches B[{rows[0]},{c}] (A column/packing mix-up)"
            cols = [int(j) for j in np.flatnonzero(B[s, k, :] == got) if j != c]
            if cols:
                return f"Result matches B[{k},{cols[0]}]: B column / invocation mix-up"
        hot = np.flatnonzero(B[s, :, c])
        if hot.size == 1:  # D[r, c] should be A[r, k] + C[r, c]
            k = int(hot[0])
            cols = [int(j) for j in np.flatnonzero(A[s, r, :] == got) if j != k]
            if cols:
                return (
                    f"B column {c} is one-hot at k={k}; Result matches A[{r},{cols[0]}] (B row/VNNI mix-up)"
                )
            rows = [int(j) for j in np.flatnonzero(A[s, :, k] == got) if j != r]
            if rows:
                return f"Result matches A[{rows[0]},{k}]: A row / component mix-up"
        if got == 0 and D[s, r, c] == C[s, r, c]:
            return "Result equals C: the product was lost"
        return ""

    return hint


# ------------------------------------------------------------ cross-check
@dataclass(frozen=True)
class CrossCheckCase:
    """A required SPIR-V form next to its OpenCL C built-in (cl_intel_subgroup_matrix_multiply_accumulate:
    New OpenCL C Functions and the OpenCL SPIR-V environment list describe the same operation with the
    same register images)."""

    spirv: object  # SpirvMmaCase
    family: str = "spirv_intel_mma"

    @property
    def id(self) -> str:
        return f"xcheck-{self.spirv.id}"

    @property
    def tier(self) -> str:
        return self.spirv.tier

    @property
    def spec_row(self) -> str:
        return f"{self.spirv.spec_row} == OpenCL C built-in"

    @property
    def axes(self) -> dict:
        return {**self.spirv.axes, "check": "builtin_vs_spirv"}

    def builtin_case(self):
        from cts.families.intel import IntelMmaCase

        s = self.spirv
        return IntelMmaCase("intel_mma", s.sg, s.a, s.b, s.k, s.M, s.c, s.tier)


def crosscheck_cases(tiers: tuple[str, ...]) -> list[CrossCheckCase]:
    """Every required combination on the random and special tiers."""
    from cts.families.spirv_intel import spirv_intel_cases

    picked = tuple(t for t in tiers if t in ("random", "special"))
    return [CrossCheckCase(c) for c in spirv_intel_cases(picked) if c.kdim == "const"]


def run_builtin_crosscheck(case, backend, seed: int, subgroups: int = SUBGROUPS_PER_CASE) -> CaseResult:
    """Both forms on the same registers; the built-in's Result bits are the
    expectation (bit identity, whatever the float rounding)."""
    from cts.errors import Unsupported

    builtin = case.builtin_case()
    if not hasattr(backend, "run_intel_mma"):
        raise Unsupported(f"backend {backend.name!r} has no OpenCL C built-in form to cross-check")
    reason = backend.unsupported(builtin)
    if reason:
        raise Unsupported(f"no OpenCL C built-in {builtin.builtin}: {reason}")
    s = case.spirv
    ops = case_registers(s, seed, subgroups)
    regs = {"a": ops["a_regs"], "b": ops["b_regs"], "c": ops["c_regs"]}
    d_spirv = np.asarray(backend.run(s, **regs))
    d_builtin = np.asarray(backend.run(builtin, **regs))
    r_t = etype(s.result)
    got = layout.c_from_registers(d_spirv) & np.uint64(r_t.mask)
    want = layout.c_from_registers(d_builtin) & np.uint64(r_t.mask)
    same = same_bits_or_nan(want, got, r_t)
    v = exact_verdict(want, got, r_t, lambda _s, r, c: (c, r), rule=Rule.X, ok=same)
    v.notes.append(f"expected = {builtin.builtin} on the same inputs")
    return CaseResult(v, ops, want, got)


# ------------------------------------------------------ OpRoundFToTF32INTEL
def run_spirv_tf32_round(case, backend, seed: int, items: int = TF32_ROUND_ITEMS) -> CaseResult:
    """OpRoundFToTF32INTEL on ``items`` operands of ``case.width`` floats:
    the data of the tf32 conversion built-ins (``tf32_convert_inputs``),
    judged bit for bit against ``reference.intel.round_f_to_tf32`` (Rule T:
    any NaN for a NaN)."""
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    x = tf32_convert_inputs(case.tier, (items, case.width), rng)
    y = np.asarray(backend.run(case, x=x), dtype=np.float32).reshape(x.shape)
    exp = round_f_to_tf32(x)
    t = etype("f32")
    eb = exp.view(np.uint32).astype(np.uint64)[None]
    ab = y.view(np.uint32).astype(np.uint64)[None]
    ok = same_bits_or_nan(eb, ab, t)
    never = ab == np.uint64(sentinel.sentinel_bits(t))  # the backend's fill: a NaN no rounding makes
    v = exact_verdict(
        eb, ab, t, lambda s, r, c: (r, c), rule=Rule.T, ok=ok, unwritten=never
    )  # element (item r, component c)
    return CaseResult(v, {"x": x}, eb[0], ab[0])
