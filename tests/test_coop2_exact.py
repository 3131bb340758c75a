"""The NV cooperative matrix 2 checks are exact (cts/runs/coop2.py): every
per-element case of every built-in profile must give the reference's one
rounding of the exact value also on a correct device that rounds each step
of Func in the component type (the converted index, x * s, 2 * y, x - 2y,
the sum).  Before the family kept to exact types, bf16 16x32 (the amx
profiles) failed a correct device: bf16(bf16(511) + 3) = 516, bf16(514) = 512."""

import ml_dtypes
import numpy as np
import pytest

from cts.families.coop import load_profile, profile_names
from cts.families.coop2 import ASSUMED, PERELEM_SCALAR, coop2_cases

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}


def _step_rounded(variant, x, y, idx, T):
    r = lambda v: np.asarray(v, np.float64).astype(T).astype(np.float64)  # noqa: E731
    i = r(idx)
    if variant == "rc":
        return r(x + i)
    if variant == "scalar":
        return r(r(x * PERELEM_SCALAR) + i)
    return r(r(x - r(2 * y)) + i)


def _once(variant, x, y, idx, T):
    v = {"rc": x, "scalar": x * PERELEM_SCALAR, "mat": x - 2 * y}[variant] + idx
    return np.asarray(v, np.float64).astype(T).astype(np.float64)


@pytest.mark.parametrize("profile", profile_names())
def test_perelem_float_results_are_exact_under_step_rounding(profile):
    p = load_profile(profile)
    cases = [c for c in coop2_cases(p.entries, ASSUMED, p.subgroup_size) if c.op == "perelem" and c.t in NP]
    # every index with every operand value the run draws (x in [-4, 4], y in [-2, 2])
    idx, x, y = np.meshgrid(np.arange(0, 16 * 64), np.arange(-4, 5), np.arange(-2, 3), indexing="ij")
    for c in cases:
        keep = idx < c.rows * c.cols
        T = NP[c.t]
        got = _step_rounded(c.variant, x[keep], y[keep], idx[keep], T)
        want = _once(c.variant, x[keep], y[keep], idx[keep], T)
        assert np.array_equal(got, want), c.id


def test_step_rounding_check_can_fail():
    # the check itself: bf16 over a 16x32 index range does not hold
    idx = np.arange(512.0)
    T = ml_dtypes.bfloat16
    assert not np.array_equal(_step_rounded("rc", 3.0, 0.0, idx, T), _once("rc", 3.0, 0.0, idx, T))
