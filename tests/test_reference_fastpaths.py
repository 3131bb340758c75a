"""The reference model's fast paths (issue 15) give exactly what their
plain definitions give: the per-case RNG is numpy's own seeded stream, the
BLAS-backed exact sums equal the explicit products summed over k, and the
int products equal int64 arithmetic.  (The oracle may be fast only where
it is provably the same oracle.)"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from reference.data import case_rng
from reference.mma import matmul_int, mma_float


@pytest.mark.parametrize("seed, cid", [(1, "sg8-i8_i8-k32-M1-acc_i32-exact"), (2**33 + 7, "x"), (0, "")])
def test_case_rng_is_numpys_default_rng_of_seed_and_crc32(seed, cid):
    mine = case_rng(seed, cid)
    ref = np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(cid.encode())])
    assert np.array_equal(mine.integers(0, 2**63, 64), ref.integers(0, 2**63, 64))
    assert np.array_equal(mine.random(16), ref.random(16))


def _explicit(A, B, C):
    prods = A[:, :, :, None] * B[:, None, :, :]
    return prods.sum(axis=2) + C, np.abs(prods).sum(axis=2) + np.abs(C)


@pytest.mark.parametrize("grid", [True, False])
def test_mma_float_equals_the_explicit_sum_over_k(grid):
    rng = np.random.default_rng(5)
    for shape in ((3, 8, 16, 8), (2, 1, 32, 16), (1, 16, 8, 16)):
        S, M, K, N = shape
        if grid:  # the exact/one-hot/rounding tiers: small multiples of 2^-12 (the BLAS path)
            A = rng.integers(-64, 64, (S, M, K)) / 4096.0
            B = rng.integers(-64, 64, (S, K, N)) / 8.0
        else:  # random floats: the explicit path
            A, B = rng.standard_normal((S, M, K)), rng.standard_normal((S, K, N))
        C = rng.standard_normal((S, M, N))
        ref = mma_float(A, B, C)
        value, abs_sum = _explicit(A, B, C)
        assert np.array_equal(ref.value, value) and np.array_equal(ref.abs_sum, abs_sum)
    zero = mma_float(np.array([[[-0.0, 0.0]]]), np.array([[[1.0], [1.0]]]), np.array([[[0.0]]]))
    assert np.signbit(zero.value).sum() == 0  # a zero sum is +0, as the reduction over k gives it


def test_matmul_int_is_int64_matmul_on_both_sides_of_the_float_limits():
    rng = np.random.default_rng(9)
    for lo, hi in ((-8, 8), (-128, 128), (-(2**15), 2**15), (-(2**31), 2**31)):
        A = rng.integers(lo, hi, (2, 4, 64), dtype=np.int64)
        B = rng.integers(lo, hi, (2, 64, 4), dtype=np.int64)
        assert np.array_equal(matmul_int(A, B), np.matmul(A, B))
