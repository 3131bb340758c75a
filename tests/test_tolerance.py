"""The float acceptance rules never fail a correct implementation and still
fail wrong ones.

"Correct" devices here are legal evaluations the specs allow (any order, any
blocking, round-to-nearest or truncation per step, 16-bit accumulators that
round every step); each runs the random and special tiers of every float
built-in and must pass Rule F.  Wrong devices (a dropped product, products
rounded to bf16, C added twice) must fail.
"""

import ml_dtypes
import numpy as np
import pytest

from cts.backends.emulator import EmulatorBackend
from cts.families.intel import intel_mma_cases
from cts.runs.intel import run_intel_mma
from reference import dtypes
from reference.tolerance import PROFILES, gamma, mma_float_bound


def _round_to(x, acc, mode):
    """Round float64 values to the accumulator format, nearest or toward zero."""
    if acc == "f32":
        f = x.astype(np.float32)
        if mode == "rz":
            back = f.astype(np.float64)
            over = np.abs(back) > np.abs(x)
            f = np.where(over, np.nextafter(f, np.float32(0)), f)
        return f.astype(np.float64)
    if acc == "f16":
        return x.astype(np.float16).astype(np.float64)
    return x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


class LegalDevice(EmulatorBackend):
    """Accumulates in the accumulator format with rounding after each block."""

    def __init__(self, order="ascending", block=1, mode="rn", c_first=True):
        super().__init__()
        self.order, self.block, self.mode, self.c_first = order, block, mode, c_first
        self.acc = "f32"

    def run_intel_mma(self, case, a, b, c):
        self.acc = case.acc
        return super().run_intel_mma(case, a, b, c)

    def _mad(self, A, B, C, is_int):
        if is_int:
            return super()._mad(A, B, C, is_int)
        K = A.shape[2]
        ks = list(range(K)) if self.order == "ascending" else list(range(K - 1, -1, -1))
        acc = C.copy() if self.c_first else np.zeros_like(C)
        with np.errstate(invalid="ignore", over="ignore"):
            for i in range(0, K, self.block):
                blk = ks[i : i + self.block]
                part = sum(A[:, :, k, None] * B[:, None, k, :] for k in blk)
                acc = _round_to(acc + part, self.acc, self.mode)
            if not self.c_first:
                acc = _round_to(acc + C, self.acc, self.mode)
        return acc


class WrongDevice(EmulatorBackend):
    def __init__(self, how):
        super().__init__()
        self.how = how

    def _mad(self, A, B, C, is_int):
        A = A.copy()
        if self.how == "drop_last_product":
            A[:, :, -1] = 0
        elif self.how == "products_to_bf16":
            with np.errstate(invalid="ignore", over="ignore"):
                p = A[:, :, :, None] * B[:, None, :, :]
                p = p.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
                return p.sum(axis=2) + C
        elif self.how == "c_twice":
            C = 2 * C
        return super()._mad(A, B, C, is_int)


FLOAT_CASES = [c for c in intel_mma_cases(("random", "special")) if c.is_float and c.M in (1, 8)]


@pytest.mark.parametrize(
    "device",
    [
        LegalDevice("ascending", 1, "rn"),
        LegalDevice("descending", 1, "rz", c_first=False),
        LegalDevice("ascending", 4, "rz"),
        LegalDevice("descending", 16, "rn", c_first=False),
    ],
    ids=["seq-rn", "rev-rz-c-last", "block4-rz", "block16-rn-c-last"],
)
def test_legal_devices_pass(device):
    bad = []
    for case in FLOAT_CASES:
        r = run_intel_mma(case, device, seed=7, subgroups=8)
        if not r.verdict.passed:
            bad.append((case.id, r.verdict.mismatches[0].line()))
    assert bad == []


@pytest.mark.parametrize("how", ["drop_last_product", "products_to_bf16", "c_twice"])
def test_wrong_devices_fail(how):
    cases = [c for c in intel_mma_cases(("random",)) if c.is_float and c.a != "bf16"]
    failed = [
        c.id for c in cases if not run_intel_mma(c, WrongDevice(how), seed=7, subgroups=8).verdict.passed
    ]
    assert len(failed) >= len(cases) // 2, failed


def test_bound_components():
    # fp32 accumulator, fp32 result, K = 16: gamma_17(2u) * sum + 17 * tiny + reference error
    b = mma_float_bound(np.array([1.0]), np.array([0.5]), 16, "f32", "f32")
    u = 2.0**-24
    want = gamma(17, 2 * u) + 17 * 2.0**-126 + gamma(17, 2.0**-53)
    assert b[0] == pytest.approx(want, rel=1e-12)
    # a 16-bit result adds one ulp of the result format under the default profile
    b16 = mma_float_bound(np.array([1.0]), np.array([1.0]), 16, "f32", "bf16")
    assert b16[0] > 2.0**-7
    strict = mma_float_bound(np.array([1.0]), np.array([1.0]), 16, "f32", "f32", PROFILES["strict"])
    assert strict[0] < b[0]


def test_dtype_facts():
    t = dtypes.etype("i4")
    assert t.decode(np.array([0x8, 0xF, 0x7])).tolist() == [-8, -1, 7]
    assert dtypes.etype("u4").decode(np.array([0xF])).tolist() == [15]
    bf = dtypes.etype("bf16")
    # round to nearest even: 1 + 2^-8 is a tie -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6
    assert bf.encode(np.array([1 + 2**-8, 1 + 3 * 2**-8])).tolist() == [0x3F80, 0x3F82]
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, np.inf, 3.4028235e38], dtype=np.float32)
    r = dtypes.round_to_tf32(x)
    assert r[0] == 1.0 and r[1] == np.float32(1 + 2**-9) and np.isinf(r[2]) and np.isinf(r[3])
    assert np.isnan(dtypes.round_to_tf32(np.array([np.nan], dtype=np.float32)))[0]
    assert dtypes.etype("f16").ulp(np.array([1.0]))[0] == 2.0**-10


class Tf32RoundingDevice(EmulatorBackend):
    """Rounds the tf32 containers to nearest even instead of truncating them:
    legal (cl_intel_subgroup_matrix_multiply_accumulate_tf32 says only which bits take part, not how)."""

    def _elements(self, raw, tname):
        if tname != "tf32":
            return super()._elements(raw, tname)
        f = (np.asarray(raw).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        return dtypes.round_to_tf32(f).astype(np.float64)


TF32_CASES = [c for c in intel_mma_cases(("random", "special")) if c.a == "tf32"]


def test_tf32_inputs_truncated_or_rounded_both_pass_full_precision_fails():
    assert len(TF32_CASES) == 8
    for case in TF32_CASES:
        for dev in (EmulatorBackend(), Tf32RoundingDevice()):
            r = run_intel_mma(case, dev, seed=3, subgroups=8)
            assert r.verdict.passed, (case.id, type(dev).__name__, r.verdict.summary())
        wrong = run_intel_mma(case, EmulatorBackend(("tf32_inputs_full_precision",)), seed=3, subgroups=8)
        assert not wrong.verdict.passed, case.id


def test_rule_r_faithful_accepts_either_neighbour_and_nothing_else():
    """Rule R: the default admits round-down and round-up of the exact sum
    (any direction of one conversion), strict admits RNE only; a value two
    steps away, or from the wrong side of a binade, fails both."""
    from reference.dtypes import etype
    from reference.tolerance import rounding_tier_check

    t = etype("bf16")
    # exact sums between bf16 neighbours (spacing 2^-7 in [1, 2), 2^-6 in [2, 4)):
    # 1 + 2^-8 (a tie), 1 + 3*2^-9, -(2 + 2^-7) (negative tie), 2 - 2^-10 (below a binade)
    s = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-9, -(2 + 2.0**-7), 2 - 2.0**-10])
    lo = np.array([1.0, 1.0, -2.0, 2 - 2.0**-7])  # toward zero
    hi = np.array([1 + 2.0**-7, 1 + 2.0**-7, -(2 + 2.0**-6), 2.0])  # away from zero
    for v in (lo, hi):
        ok, bound = rounding_tier_check(t, s, v, "faithful")
        assert ok.all(), (v, ok)
        assert (bound > 0).all()
    rne = t.round(s)
    assert rounding_tier_check(t, s, rne, "nearest")[0].all()
    wrong_dir = np.where(rne == lo, hi, lo)
    assert not rounding_tier_check(t, s, wrong_dir, "nearest")[0].any()
    two_away = np.array([1 + 2.0**-6, 1 - 2.0**-8, -(2 + 2.0**-5), 2 + 2.0**-6])
    assert not rounding_tier_check(t, s, two_away, "faithful")[0].any()
    assert rounding_tier_check(t, np.array([1.5]), np.array([1.5]), "faithful")[
        0
    ].all()  # representable: itself
    assert not rounding_tier_check(t, np.array([1.5]), np.array([1.5078125]), "faithful")[0].any()
