"""Conversions between component types (OpFConvert / OpSConvert /
OpUConvert / OpConvertFToS ... on cooperative matrices): the inputs whose
conversion is defined, the special tier's infinities, NaN and signed zeros,
and the verdict (Rule C to a float type, exact to an integer type)."""

from __future__ import annotations

import numpy as np

from cts.families.coop import (
    CoopCase,
)
from cts.judge import CaseResult, Rule, sentinel
from cts.runs.coop.data import (
    bits,
    launch,
    wrap,
)
from cts.runs.coop.judge import (
    exact_out,
    fill_out,
    range_verdict,
)
from reference import coop as rc
from reference.data import choose
from reference.dtypes import ElemType, etype

__all__ = ["run_convert", "convert_inputs", "special_convert_inputs"]


def run_convert(case: CoopCase, backend, rng, t: ElemType, shape, flat) -> CaseResult:
    """A conversion to ``case.to``: Rule C to a float type (E on the ``special`` tier's
    infinities, NaN and signed zeros), exact to an integer type."""
    d = etype(case.to)
    x = (special_convert_inputs if case.tier == "special" else convert_inputs)(rng, t, d, shape)
    lo, hi = rc.convert_accept(x, t, d)
    bufs = {"x": bits(x, t).reshape(flat), "out": fill_out(d, flat, bits(lo, d))}
    got = launch(backend, case, bufs)
    act = got["out"].reshape(shape)
    never = sentinel.unwritten(act, bufs["out"].reshape(shape), d)
    if d.is_float:
        v = range_verdict(lo, hi, act, d, Rule.C, zero_sign=case.tier == "special", unwritten=never)
    else:
        v = exact_out(bits(lo, d), act, d, never)
    return wrap(v, bufs, bits(lo, d), act)


def convert_inputs(rng, t: ElemType, d: ElemType, shape) -> np.ndarray:
    """Values whose conversion is defined: in the destination's range (float
    -> int truncates; negative -> unsigned avoided), finite, normal."""
    if t.is_float:
        if d.is_float:
            mag = np.exp2(rng.uniform(-6, 6, size=shape))
            return t.round(mag * choose(rng, [-1.0, 1.0], size=shape))
        hi = min(d.max, t.max_finite / 2, 1e6)
        lo = 0 if d.kind == "uint" else max(d.min, -hi)
        return t.round(rng.uniform(lo, hi, size=shape) * choose(rng, [1.0, 2.0**-8], size=shape))
    if d.is_float:
        lim = min(t.max, d.max_finite / 2)
        return rng.integers(max(t.min, -lim), lim + 1, size=shape, dtype=np.int64)
    return rng.integers(t.min, t.max + 1, size=shape, dtype=np.int64)


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
