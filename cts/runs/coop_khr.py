"""MulAdd forms of the KHR axes (``CoopCase.var`` in ``MULADD_VARIANTS``,
issue 19 item 1): the same exact reference as the plain MulAdd
(``cts.runs.coop._judge_muladd``), with the buffers each form's kernel reads.

* ``func`` / ``funcconst`` / ``struct`` / ``wg4`` / ``sgmin`` / ``sgmax``: the
  plain row-major buffers (the kernel differs, the data contract does not).
* ``array``: buffer ``a`` holds two A matrices per subgroup, a decoy then the
  one the MulAdd must use (array element 1): a device that reads element 0
  fails.
* ``colacc``: C and the Result as ColumnMajor images (element (r, c) at
  c * M + r).
* ``stride0``: A and B loaded with Stride 0: buffer ``a`` holds one row of K
  elements, ``b`` one row of N per subgroup; the logical A (B) repeats it
  (spec-digest 4.1: Stride 0 reads every row from the same place).
"""

from __future__ import annotations

import numpy as np

from cts.families.coop import CoopCase, region_len
from cts.judge import CaseResult
from reference.dtypes import etype

__all__ = ["muladd_variant", "stride_buf", "special_convert_inputs"]


def special_convert_inputs(rng, t, d, shape) -> np.ndarray:
    """Float -> float conversion data of the ``special`` tier: +-inf, NaN, +-0 and, where the
    source reaches past the destination, finite values beyond its largest finite (the result
    is the infinity or the largest finite of that sign: no rounding mode is fixed, 4.1 of the
    module docstring of reference.coop); the rest normal in both types.  The kernel declares
    SignedZeroInfNanPreserve (without it Vulkan lets a device assume no inf / NaN)."""
    mag = np.exp2(rng.uniform(-6, 6, size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    x = t.round(mag)
    pick = rng.integers(0, 8, size=shape)
    x = np.where(pick == 0, np.inf, np.where(pick == 1, -np.inf, x))
    x = np.where(pick == 2, np.nan, np.where(pick == 3, rng.choice([0.0, -0.0], size=shape), x))
    if t.max_finite > d.max_finite:
        big = t.round(d.max_finite * np.exp2(rng.uniform(1, 8, size=shape)))
        x = np.where(pick == 4, big, np.where(pick == 5, -big, x))
    return x


def stride_buf(case: CoopCase, S: int, stride: int) -> dict:
    """``sbuf``: the Stride a load/store kernel reads from a storage buffer at run time."""
    return {"st": np.full((S, 4), stride, np.uint32)} if case.var == "sbuf" else {}


def muladd_variant(case: CoopCase, backend, rng, S: int, profile) -> CaseResult:
    from cts.runs.coop import _bits, _judge_muladd, _operands, _run, d_fill

    e = case.entry
    M, N, K = e.M, e.N, e.K
    at, bt, ct = etype(e.A), etype(e.B), etype(e.C)
    A, B, C = _operands(case, rng, M, K, N, S)
    a_img, b_img, c_img = A, B, C
    if case.var == "array":
        decoy, _, _ = _operands(case, rng, M, K, N, S)
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
        "a": _bits(a_img, at).reshape(S, -1),
        "b": _bits(b_img, bt).reshape(S, -1),
        "c": _bits(c_img, ct).reshape(S, -1),
    }
    filled = d_fill(case, A, B, C, 1, (S, M, N))  # logical (S, M, N); the buffer in the form's order
    bufs["d"] = (filled.transpose(0, 2, 1) if case.var == "colacc" else filled).reshape(S, -1).copy()
    got = _run(backend, case, bufs)
    d = got["d"].astype(np.uint64)
    act = d.reshape(S, N, M).transpose(0, 2, 1) if case.var == "colacc" else d.reshape(S, M, N)
    v = _judge_muladd(case, A, B, C, np.ascontiguousarray(act), 1, profile, filled)
    if case.var == "colacc":
        v.notes.append("colacc: the Result is read back from its ColumnMajor image")
    return CaseResult(v, {"A": A, "B": B, "C": C, **bufs}, np.zeros(0), act)
