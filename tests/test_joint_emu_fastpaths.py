"""The joint_matrix emulator's and runner's fast paths give exactly what
their plain formulations give (bit for bit, signed zeros included): the
BLAS product where every partial sum is exact, the narrow loads, and the
memory images built around their stores."""

from __future__ import annotations

import numpy as np
import pytest

from cts.backends.emu_joint import JointEmulation, _exact_sums
from cts.runs import joint as RJ
from reference import joint as J


class _Emu(JointEmulation):
    faults = frozenset()


def _k_order(A, B, C):
    """The device's plain order: small tiles one reduction over k from +0,
    big tiles a running sum from the k = 0 product."""
    S, M, K = A.shape
    N = B.shape[2]
    if S * M * N < 4096 or K < 2:
        return (A[:, :, :, None] * B[:, None, :, :]).sum(axis=2) + C
    acc = A[:, :, 0, None] * B[:, None, 0, :]
    for k in range(1, K):
        acc = acc + A[:, :, k, None] * B[:, None, k, :]
    return acc + C


@pytest.mark.parametrize("shape", [(2, 3, 8, 5), (32, 8, 16, 16), (4, 16, 2, 64), (16, 1, 32, 64)])
def test_blas_mad_equals_the_k_order_with_signed_zeros(shape):
    S, M, K, N = shape
    rng = np.random.default_rng(3)
    for scale in (0.5, 2.0**-6, 2.0**20):
        A = rng.integers(-3, 4, (S, M, K)) * scale
        B = rng.integers(-2, 3, (S, K, N)) * 1.0
        A[rng.random(A.shape) < 0.5] = 0.0
        B[rng.random(B.shape) < 0.3] = 0.0
        A[rng.random(A.shape) < 0.2] *= -1.0  # -0.0 among the zeros
        B = np.where(rng.random(B.shape) < 0.5, -B, B)
        A[0, 0, :] = -0.0  # a row of -0 products: -0 in the running sum
        B[0, :, 0] = 1.0
        C = np.where(rng.random((S, M, N)) < 0.5, -0.0, 0.0)
        assert _exact_sums(A, B)
        got, want = _Emu()._jm_mad(A, B, C, False), _k_order(A, B, C)
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


def test_inexact_sums_keep_the_k_order():
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((8, 32, 16)), rng.standard_normal((8, 16, 64))
    C = rng.standard_normal((8, 32, 64))
    assert not _exact_sums(A, B)
    got, want = _Emu()._jm_mad(A, B, C, False), _k_order(A, B, C)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("t", ["i8", "u8", "i16", "i32", "f16", "bf16", "f32", "tf32", "f64"])
@pytest.mark.parametrize("layout", ["row", "col", "packed"])
def test_narrow_loads_equal_the_decoded_gather(t, layout):
    emu = _Emu()
    R, C, stride = 8, 4, 40
    mem = np.random.default_rng(6).integers(0, 2**63, (3, 400), dtype=np.uint64)
    got = emu._jm_load(mem, layout, R, C, t, stride)
    want = emu._jm_dec(emu._jm_gather(mem, emu._jm_addr(layout, R, C, t, stride)), t)
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("t", ["u8", "f16", "bf16", "f32", "tf32", "f64", "i32"])
@pytest.mark.parametrize("layout, f", [("row", 1), ("col", 1), ("packed", 2), ("packed_a", 2)])
def test_images_built_around_the_store_equal_the_canary_stored_over(t, layout, f):
    S, R, C = 3, 4, 6
    stride = J.min_stride(R, C, layout, f) + 5
    X = np.random.default_rng(1).integers(0, 255, (S, R, C)).astype(np.uint64)
    size = J.image_size(R, C, layout, f, stride) + 8
    canary = RJ._random_bits(np.random.default_rng(8), t, (S, size))
    want = J.store_image(canary, X, layout, f, stride)
    got = RJ._image(np.random.default_rng(8), t, X, layout, f, stride)
    assert np.array_equal(got, want)
