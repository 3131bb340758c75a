"""MulAdd of cooperative matrices (OpCooperativeMatrixMulAddKHR): the
operands of each tier, the exact integer result (wrap, or clamp with
SaturatingAccumulation), the verdict (Rule I, E or F), the plain, chained
and gemm forms, and MulAdd on values for experiments (``coop_muladd``,
``device_muladd``).

The MulAdd forms of the KHR axes (``CoopCase.var`` in ``MULADD_VARIANTS``)
have the same exact reference as the plain MulAdd (``judge_muladd``), with
the buffers each form's kernel reads:

* ``func`` / ``funcconst`` / ``struct`` / ``wg4`` / ``sgmin`` / ``sgmax``: the
  plain row-major buffers (the kernel differs, the data contract does not).
* ``array``: buffer ``a`` holds two A matrices per subgroup, a decoy then the
  one the MulAdd must use (array element 1): a device that reads element 0
  fails.
* ``colacc``: C and the Result as ColumnMajor images (element (r, c) at
  c * M + r).
* ``stride0``: A and B loaded with Stride 0: buffer ``a`` holds one row of K
  elements, ``b`` one row of N per subgroup; the logical A (B) repeats it
  (SPV_KHR_cooperative_matrix, OpCooperativeMatrixLoadKHR: Stride 0 reads every row from the same place).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cts.errors import Unsupported
from cts.families.coop import (
    CHAIN,
    GEMM_TILES,
    CoopCase,
    CoopEntry,
    region_len,
    storage_dtype,
)
from cts.judge import CaseResult, MmaRules, Verdict, judge_mma_float, sentinel
from cts.runs.coop.data import (
    bits,
    launch,
)
from cts.runs.coop.judge import (
    exact_out,
    fill_out,
    nowhere,
)
from reference import coop as rc
from reference.data import mma_operands
from reference.dtypes import etype

__all__ = ["muladd_variant", "run_muladd", "judge_muladd", "coop_muladd", "device_muladd", "is_coop_device"]


def muladd_variant(case: CoopCase, backend, rng, S: int, profile) -> CaseResult:
    e = case.entry
    M, N, K = e.M, e.N, e.K
    at, bt, ct = etype(e.A), etype(e.B), etype(e.C)
    A, B, C = operands(case, rng, M, K, N, S)
    a_img, b_img, c_img = A, B, C
    if case.var == "array":
        decoy, _, _ = operands(case, rng, M, K, N, S)
        a_img = np.concatenate([decoy.reshape(S, -1), A.reshape(S, -1)], axis=1)
    elif case.var == "colacc":
        c_img = C.transpose(0, 2, 1)
    elif case.var == "stride0":
        A = np.broadcast_to(A[:, :1, :], A.shape).copy()
        B = np.broadcast_to(B[:, :1, :], B.shape).copy()
        a_img = np.zeros((S, region_len(K, e.A)), np.int64 if e.is_int else np.float64)
        b_img = np.zeros((S, region_len(N, e.B)), a_img.dtype)
        a_img[:, :K], b_img[:, :N] = A[:, 0, :], B[:, 0, :]
    bufs = {
        "a": bits(a_img, at).reshape(S, -1),
        "b": bits(b_img, bt).reshape(S, -1),
        "c": bits(c_img, ct).reshape(S, -1),
    }
    filled = d_fill(case, A, B, C, 1, (S, M, N))  # logical (S, M, N); the buffer in the form's order
    bufs["d"] = (filled.transpose(0, 2, 1) if case.var == "colacc" else filled).reshape(S, -1).copy()
    got = launch(backend, case, bufs)
    d = got["d"].astype(np.uint64)
    act = d.reshape(S, N, M).transpose(0, 2, 1) if case.var == "colacc" else d.reshape(S, M, N)
    v = judge_muladd(case, A, B, C, np.ascontiguousarray(act), 1, profile, filled)
    if case.var == "colacc":
        v.notes.append("colacc: the Result is read back from its ColumnMajor image")
    return CaseResult(v, {"A": A, "B": B, "C": C, **bufs}, np.zeros(0), act)


# ---------------------------------------------------------------- MulAdd
def planted_int(rng, e: CoopEntry, M, K, N, S):
    """Tiers ``wrap`` / ``sat``: products of one sign per row half and C at
    the edge of the Result range, so C + sum(A*B) leaves the range (the
    A x B intermediate itself stays in range: its overflow is undefined
    with SaturatingAccumulation, SPV_KHR_cooperative_matrix Rev 6 OpCooperativeMatrixMulAddKHR)."""
    at, bt, ct, rt = etype(e.A), etype(e.B), etype(e.C), etype(e.R)
    A = rng.integers(0, at.max + 1, size=(S, M, K), dtype=np.int64)
    B = rng.integers(0, bt.max + 1, size=(S, K, N), dtype=np.int64)
    neg = np.zeros((M, N), bool)  # elements whose products are made negative
    if rt.kind == "int" and at.kind == "int":
        A[:, M // 2 :, :] *= -1
        neg[M // 2 :, :] = True
    elif rt.kind == "int" and bt.kind == "int":
        B[:, :, N // 2 :] *= -1
        neg[:, N // 2 :] = True
    small = rng.integers(0, 1000, size=(S, M, N), dtype=np.int64)
    C = np.where(neg, max(rt.min, ct.min) + small, min(rt.max, ct.max) - small)
    return A, B, C


# SPV_KHR_cooperative_matrix: the internal precision is "defined by the client API" and Vulkan
# fixes none (SPV_KHR_cooperative_matrix Rev 6, OpCooperativeMatrixMulAddKHR)
COOP_RULES = MmaRules(full_precision=False)


def operands(case: CoopCase, rng, M, K, N, S):
    e = case.entry
    if case.tier in ("wrap", "sat"):
        return planted_int(rng, e, M, K, N, S)
    A, B, C = mma_operands(case.tier, e.A, e.B, e.C, M, K, N, S, rng, acc_type=e.R)
    if e.is_int:  # values as the component types hold them (e.g. -1 in a u32 C is 2^32-1)
        A, B, C = (etype(t).decode(etype(t).encode(x)) for t, x in ((e.A, A), (e.B, B), (e.C, C)))
    return A, B, C


def int_expected(case, A, B, C, steps: int) -> np.ndarray:
    """Result bits of an integer MulAdd chain of ``steps`` (wrap or saturate per step)."""
    e = case.entry
    K = A.shape[2] // steps
    As = np.stack([A[:, :, i * K : (i + 1) * K] for i in range(steps)], axis=1)
    Bs = np.stack([B[:, i * K : (i + 1) * K, :] for i in range(steps)], axis=1)
    return etype(e.R).encode(rc.chain_int(As, Bs, C, e.R, e.sat))


def d_fill(case, A, B, C, steps: int, shape) -> np.ndarray:
    """The sentinel-filled Result buffer of a MulAdd case (integers: unlike the expected value)."""
    e = case.entry
    exp = int_expected(case, A, B, C, steps) if e.is_int else None
    return fill_out(etype(e.R), shape, exp)


def judge_muladd(case, A, B, C, act, steps: int, profile, filled=None) -> Verdict:
    """A (S,M,Ktot), B (S,Ktot,N) where Ktot = steps*K; one rounding into the
    Result per step (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR).  ``filled``: the Result buffer as
    filled before the launch (elements still holding it are never written)."""
    e = case.entry
    rt = etype(e.R)
    never = None if filled is None else sentinel.unwritten(act, np.asarray(filled).reshape(act.shape), rt)
    if e.is_int:
        return exact_out(int_expected(case, A, B, C, steps), act, rt, never)
    n_terms = steps * (A.shape[2] // steps + 1)
    if steps > 1:
        # between chained MulAdds the value *is* a Result-typed matrix (SPV_KHR_cooperative_matrix
        # types): whatever wider format a profile assumes inside one MulAdd, every
        # step rounds into the Result type, so the bound uses its precision.
        profile = replace(profile, acc_format={})
    v, _, _ = judge_mma_float(
        A,
        B,
        C,
        act,
        rt,
        tier=case.tier,
        profile=profile,
        rules=COOP_RULES,
        terms=n_terms - 1,
        types=(e.A, e.B, e.C),
        where=nowhere,
        unwritten=never,
    )
    return v


def run_muladd(case: CoopCase, backend, rng, S, profile) -> CaseResult:
    e = case.entry
    M, N, K = e.M, e.N, e.K
    at, bt, ct = etype(e.A), etype(e.B), etype(e.C)
    if case.op == "gemm":
        tm, tn, tk = GEMM_TILES
        P = max(2, S // (tm * tn))
        A, B, C = operands(case, rng, tm * M, tk * K, tn * N, P)
        bufs = {
            "a": bits(A, at).reshape(P, -1),
            "b": bits(B, bt).reshape(P, -1),
            "c": bits(C, ct).reshape(P, -1),
        }
        steps = tk
    elif case.op == "chain":
        A, B, C = operands(case, rng, M, CHAIN * K, N, S)
        As = np.stack([A[:, :, i * K : (i + 1) * K] for i in range(CHAIN)], axis=1)  # (S, L, M, K)
        Bs = np.stack([B[:, i * K : (i + 1) * K, :] for i in range(CHAIN)], axis=1)
        bufs = {
            "a": bits(As, at).reshape(S, -1),
            "b": bits(Bs, bt).reshape(S, -1),
            "c": bits(C, ct).reshape(S, -1),
        }
        steps = CHAIN
    else:
        A, B, C = operands(case, rng, M, K, N, S)
        a_img = A if case.layout == "row" else A.transpose(0, 2, 1)
        b_img = B if case.layout == "row" else B.transpose(0, 2, 1)
        bufs = {
            "a": bits(a_img, at).reshape(S, -1),
            "b": bits(b_img, bt).reshape(S, -1),
            "c": bits(C, ct).reshape(S, -1),
        }
        steps = 1
    bufs["d"] = d_fill(case, A, B, C, steps, (C.shape[0], C.shape[1] * C.shape[2]))
    got = launch(backend, case, bufs)
    act = got["d"].reshape(C.shape).astype(np.uint64)
    v = judge_muladd(case, A, B, C, act, steps, profile, bufs["d"])
    inputs = {"A": A, "B": B, "C": C, **bufs}
    return CaseResult(v, inputs, np.zeros(0), act)


def coop_muladd(backend, entry: CoopEntry, A: np.ndarray, B: np.ndarray, C: np.ndarray, sg: int = 32):
    """D = MulAdd(A, B, C) for one or many tiles on any backend that has
    ``run_coop_matrix`` (the public entry point for experiments).

    A (T, M, K) / (M, K), B (T, K, N), C (T, M, N) are *values*; they are
    encoded to the entry's component types (floats rounded to nearest even,
    integers wrapped) and D comes back as values of the Result type (float64
    or int64), same leading shape as A.
    """
    one = np.ndim(A) == 2
    A, B, C = (np.asarray(x)[None] if one else np.asarray(x) for x in (A, B, C))
    T = A.shape[0]
    if (
        A.shape[1:] != (entry.M, entry.K)
        or B.shape[1:] != (entry.K, entry.N)
        or C.shape[1:] != (entry.M, entry.N)
    ):
        raise ValueError(f"operand shapes {A.shape} {B.shape} {C.shape} do not match {entry.tag}")
    at, bt, ct, rt = etype(entry.A), etype(entry.B), etype(entry.C), etype(entry.R)
    case = CoopCase("muladd", "vk", entry=entry, tier="random", sg=sg)
    bufs = {
        "a": bits(A, at).reshape(T, -1),
        "b": bits(B, bt).reshape(T, -1),
        "c": bits(C, ct).reshape(T, -1),
        "d": np.zeros((T, entry.M * entry.N), storage_dtype(entry.R)),
    }
    d = rt.decode(backend.run(case, bufs=bufs)["d"].reshape(T, entry.M, entry.N))
    return d[0] if one else d


def is_coop_device(backend) -> bool:
    """A backend that reports its cooperative-matrix entries and runs them
    (Vulkan; OpenCL with cl_khr_cooperative_matrix)."""
    return hasattr(backend, "coop_entries") and hasattr(backend, "run_coop_matrix")


def device_muladd(backend, entry: CoopEntry, A, B, C) -> np.ndarray:
    """D = MulAdd(A, B, C) on a cooperative-matrix device for one tile (A
    (M,K)) or many (A (T,M,K); more than the backend's ``max_groups`` per
    dispatch are split).  Inputs are values, encoded to the entry's types
    (floats RNE, ints wrapped); D comes back as values of the Result type.
    Raises Unsupported when the device does not report ``entry``."""
    sg = int(getattr(backend, "subgroup_size", 32) or 32)
    case = CoopCase("muladd", "vk", entry=entry, sg=sg)
    reason = backend.unsupported(case)
    if reason:
        raise Unsupported(reason)
    A = np.asarray(A)
    step = getattr(backend, "max_groups", None)
    if A.ndim == 2 or not step or A.shape[0] <= step:
        return coop_muladd(backend, entry, A, B, C, sg=sg)
    parts = [
        coop_muladd(backend, entry, A[i : i + step], B[i : i + step], C[i : i + step], sg=sg)
        for i in range(0, A.shape[0], step)
    ]
    return np.concatenate(parts)
