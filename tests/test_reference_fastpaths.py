"""The reference model's fast paths give exactly what their
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


def _generators(held: bool):
    """Two equal PCG64 generators; ``held``: each with half of a 64-bit output kept back."""
    mine, ref = (np.random.default_rng(77) for _ in range(2))
    if held:
        mine.integers(0, 2, size=1)
        ref.integers(0, 2, size=1)
    return mine, ref


@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize("n", [1, 6, 1001])
def test_raw_bits_are_numpys_integers_and_leave_the_same_stream(held, n):
    from reference.draws import random_uint_bits, random_uint_bits_many

    for bits in (8, 16, 32, 64):
        mine, ref = _generators(held)
        got = random_uint_bits(mine, bits, (n,))
        if bits == 64:
            want = ref.integers(0, 2**63, size=n, dtype=np.uint64) | (
                ref.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(63)
            )
        else:
            want = ref.integers(0, 1 << bits, size=n, dtype=np.uint64)
        assert got.dtype == np.uint64 and np.array_equal(got, want)
        assert np.array_equal(mine.integers(0, 1000, 7), ref.integers(0, 1000, 7))
    mine, ref = _generators(held)
    parts = random_uint_bits_many(mine, [(16, (2, n)), (8, (n,)), (32, (3,))])
    want = [
        ref.integers(0, 1 << b, size=s, dtype=np.uint64) for b, s in ((16, (2, n)), (8, (n,)), (32, (3,)))
    ]
    assert all(np.array_equal(p.astype(np.uint64), w) for p, w in zip(parts, want))
    assert np.array_equal(mine.random(5), ref.random(5))


@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize(
    "lo, hi", [(0, 2), (-16, 17), (-3, 4), (0, 11), (-128, 128), (0, 2**31 + 1), (-(2**31), 2**31)]
)
def test_bounded_ints_are_numpys_integers_and_leave_the_same_stream(held, lo, hi):
    from reference.draws import bounded_ints

    for forced in (False, True):  # as called (numpy's own below the sizes where the bulk draw pays) and
        mine, ref = _generators(held)  # the bulk draw at every size
        for size in (5, (3, 4), 2001, 9000):  # 2^31 + 1: about half the draws are dropped and drawn again
            got, want = bounded_ints(mine, lo, hi, size, _checked=forced), ref.integers(lo, hi, size=size)
            assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(mine.integers(0, 1000, 7), ref.integers(0, 1000, 7))
