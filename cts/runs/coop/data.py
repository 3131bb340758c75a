"""The data of cooperative-matrix cases: element values of each kind
(small exactly representable, random, random finite bit patterns), their
bits in the storage type of a buffer, the launch on copies of the buffers
(so the sentinel fills stay for the verdict) and the result of a case."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from cts.families.coop import (
    CoopCase,
    storage_dtype,
)
from cts.judge import CaseResult, Verdict
from reference.dtypes import ElemType

__all__ = [
    "SUBGROUPS_PER_CASE",
    "FLOAT_NP",
    "kind_of",
    "bits",
    "random_finite_bits",
    "small",
    "away_from_zero",
    "random_values",
    "launch",
    "wrap",
    "stride_buf",
]


SUBGROUPS_PER_CASE = 32


def kind_of(t: ElemType) -> str:
    return "float" if t.is_float else t.kind


FLOAT_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def bits(v: np.ndarray, t: ElemType) -> np.ndarray:
    """t.encode(v) in the storage dtype (floats cast straight to the storage
    width, integers wrapped by the narrowing cast: the same bits)."""
    v = np.asarray(v)
    store = storage_dtype(t.name)
    if t.name in FLOAT_NP:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(v, dtype=np.float64).astype(FLOAT_NP[t.name]).view(store)
    if not t.is_float and v.dtype.kind in "ui" and t.bits == np.dtype(store).itemsize * 8:
        return v.astype(store)
    return t.encode(v).astype(store)


def random_finite_bits(rng, t: ElemType, shape) -> np.ndarray:
    b = rng.integers(0, 1 << t.bits, size=shape, dtype=np.uint64)
    if t.is_float:  # exponent all ones -> clear its top bit (finite values only)
        e_mask = ((1 << t.exp_bits) - 1) << t.man_bits
        top = 1 << (t.man_bits + t.exp_bits - 1)
        b = np.where((b & np.uint64(e_mask)) == np.uint64(e_mask), b & ~np.uint64(top), b)
    return b.astype(storage_dtype(t.name))


def small(rng, t: ElemType, shape, amax=8) -> np.ndarray:
    """Exactly representable small values: half-integers for floats."""
    if t.is_float:
        return rng.integers(-2 * amax, 2 * amax + 1, size=shape) * 0.5
    lo = max(t.min, -100)
    return rng.integers(lo, min(t.max, 100) + 1, size=shape, dtype=np.int64)


def away_from_zero(v: np.ndarray, t: ElemType, floor: float = 0.125) -> np.ndarray:
    """Values of magnitude below ``floor`` moved out by ``floor`` (sign kept)."""
    return t.round(np.where(np.abs(v) < floor, v + np.copysign(floor, v), v))


def random_values(rng, t: ElemType, shape) -> np.ndarray:
    if t.is_float:
        mag = rng.uniform(-4, 4, size=shape) * np.exp2(rng.uniform(-3, 3, size=shape))
        return t.round(mag)
    return rng.integers(t.min, t.max + 1, size=shape, dtype=np.int64) if t.bits < 64 else None


def launch(backend, case, bufs) -> dict:
    """Launch on copies: ``bufs`` keep the sentinel fills the verdict compares with."""
    return backend.run(case, bufs={k: np.array(v, copy=True) for k, v in bufs.items()})


def wrap(v: Verdict, bufs, exp, act) -> CaseResult:
    return CaseResult(v, dict(bufs), np.asarray(exp), np.asarray(act))


def stride_buf(case: CoopCase, S: int, stride: int) -> dict:
    """``sbuf``: the Stride a load/store kernel reads from a storage buffer at run time."""
    return {"st": np.full((S, 4), stride, np.uint32)} if case.var == "sbuf" else {}
