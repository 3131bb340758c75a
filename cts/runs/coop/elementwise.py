"""Element-wise arithmetic on cooperative matrices (add, sub, mul, div,
negate, scale by a scalar): exact on exactly representable data, Rule C on
random data (the exact value or a neighbour), Rule D for division."""

from __future__ import annotations

import numpy as np

from cts.families.coop import (
    SCALE,
)
from cts.judge import CaseResult, Rule, compare, sentinel
from cts.runs.coop.data import (
    away_from_zero,
    bits,
    launch,
    random_values,
    small,
    wrap,
)
from cts.runs.coop.judge import (
    exact_out,
    fill_out,
    nowhere,
    range_verdict,
)
from reference import coop as rc
from reference.data import choose
from reference.dtypes import etype
from reference.tolerance import float_close

__all__ = ["run_elementwise"]


def run_elementwise(case, backend, rng, S, t, shape, flat, kind) -> CaseResult:
    op = case.op
    exact = case.tier == "exact"
    if t.is_float and exact:
        x = small(rng, t, shape, 4 if op in ("mul", "div") else 8)
        y = small(rng, t, shape, 8)
        if op == "mul":
            y = np.trunc(y / 2)  # integers: the product keeps <= 6 significant bits
        if op == "div":
            y = choose(rng, [-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0], size=shape)
            x = x * y  # exact quotient
    elif t.is_float:
        # |x|, |y| >= 1/8: no result is subnormal (products >= 2^-6, quotients >= 2^-6, and sums
        # or differences are multiples of an ulp >= 2^-13 for fp16, so exact zero or normal):
        # Vulkan lets a device flush subnormal results unless DenormPreserve is declared
        x, y = (away_from_zero(random_values(rng, t, shape), t) for _ in range(2))
        if op == "div":  # |y| >= 1/4: the quotient stays far from overflow
            y = t.round(choose(rng, [-1.0, 1.0], size=shape) * np.exp2(rng.uniform(-2, 3, size=shape)))
    else:
        x = small(rng, t, shape) if exact else random_values(rng, t, shape)
        y = small(rng, t, shape) if exact else random_values(rng, t, shape)
        if op == "div":
            y = np.where(y == 0, 1, y)
            if t.kind == "int":
                y = np.where((x == t.min) & (y == -1), 1, y)  # overflow is undefined
    y_in = y if op not in ("neg", "scale") else np.zeros(shape)
    val = rc.elementwise(op, x, y, t, SCALE[kind])
    bufs = {
        "x": bits(x, t).reshape(flat),
        "y": bits(y_in, t).reshape(flat),
        "out": fill_out(t, flat, bits(val, t)),
    }
    got = launch(backend, case, bufs)
    act = got["out"].reshape(shape)
    never = sentinel.unwritten(act, bufs["out"].reshape(shape), t)
    if not t.is_float or exact:
        exp = bits(val, t)
        return wrap(exact_out(exp, act, t, never), bufs, exp, act)
    if op == "div":  # within 3 ulp of the exact quotient
        b = 3 * t.ulp(val)
        av = t.decode(act)
        ok = float_close(val, av, b)
        err = np.abs(av - val)
        v = compare(
            bits(val, t), act.astype(np.uint64), t, ok, Rule.D, nowhere, error=err, bound=b, unwritten=never
        )
        return wrap(v, bufs, bits(val, t), act)
    lo, hi = rc.convert_accept(val, etype("f64"), t)
    return wrap(range_verdict(lo, hi, act, t, Rule.C, unwritten=never), bufs, bits(val, t), act)
