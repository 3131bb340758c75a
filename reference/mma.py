"""The exact reference for D = A x B + C.

Integers (SPV_INTEL_subgroup_matrix_multiply_accumulate, OpCooperativeMatrixMulAddKHR): computed exactly
in 64-bit from the exact element values, then the low-order ``result_bits`` of the exact value, read as
two's complement (wrap-around); or, for cooperative matrix with
SaturatingAccumulation, clamped to the result range.

Floats: every product of two fp16, bf16 or tf32 values (<= 11-bit
significands, exponents within float64 range) is exact in float64, as is C.
The sum is formed in float64, whose own error is accounted for in the bound
(see ``reference.tolerance``).  ``abs_sum`` = sum |a_k b_k| + |c| is the scale
the error bound is proportional to.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import sign_extend

__all__ = ["FloatRef", "mma_int", "mma_float", "matmul_int", "wrap", "saturate"]


def wrap(values: np.ndarray, bits: int, signed: bool = True) -> np.ndarray:
    """Low-order ``bits`` of an exact integer, as signed or unsigned."""
    v = np.asarray(values).astype(np.int64)
    if bits >= 64:
        return v
    if bits in (8, 16, 32):  # a narrowing cast keeps the low-order bits
        return v.astype(f"{'i' if signed else 'u'}{bits // 8}").astype(np.int64)
    low = v & ((1 << bits) - 1)
    return sign_extend(low, bits) if signed else low


def saturate(values: np.ndarray, bits: int, signed: bool = True) -> np.ndarray:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(np.asarray(values).astype(np.int64), lo, hi)


def mma_int(
    A: np.ndarray, B: np.ndarray, C: np.ndarray, result_bits: int = 32, signed: bool = True
) -> np.ndarray:
    """Exact integer A (S,M,K) x B (S,K,N) + C (S,M,N), wrapped to the result width.

    |products| < 2^16 and K <= 64, so the int64 sum cannot overflow for the
    8- and 4-bit types; C is already within its 32-bit range.
    """
    exact = matmul_int(A, B) + np.asarray(C, dtype=np.int64)
    return wrap(exact, result_bits, signed)


def matmul_int(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Exact int64 A (S,M,K) @ B (S,K,N).  When K * max|a| * max|b| is below
    2^24 (2^53) every product and every partial sum is an integer that
    float32 (float64) holds exactly, so the BLAS float product is the exact
    one, whatever its summation order; otherwise numpy's int64 matmul."""
    A = np.asarray(A, dtype=np.int64)
    B = np.asarray(B, dtype=np.int64)
    if A.size and B.size:
        amax = max(-int(A.min()), int(A.max()))
        bmax = max(-int(B.min()), int(B.max()))
        bound = A.shape[-1] * amax * bmax
        for limit, ftype in ((1 << 24, np.float32), (1 << 53, np.float64)):
            if bound < limit:
                return np.matmul(A.astype(ftype), B.astype(ftype)).astype(np.int64)
    return np.matmul(A, B)


class FloatRef:
    """Exact value (float64) and the scale sum |a_k b_k| + |c| per element.

    ``FloatRef(value, abs_sum)``; :func:`mma_float` leaves ``abs_sum`` to be
    formed when first read (the exact and rounding rules never read it)."""

    __slots__ = ("value", "_abs_sum", "_pending")

    def __init__(self, value: np.ndarray, abs_sum: np.ndarray | None = None, _pending=None):
        self.value = value
        self._abs_sum = abs_sum
        self._pending = _pending  # () -> abs_sum, until abs_sum is read

    @property
    def abs_sum(self) -> np.ndarray:
        if self._abs_sum is None and self._pending is not None:
            self._abs_sum = self._pending()
            self._pending = None
        return self._abs_sum

    def __repr__(self) -> str:
        return f"FloatRef(value={self.value!r}, abs_sum={self.abs_sum!r})"


# Operands on this grid (finite multiples of 2^-12, see _exact_in_any_order) have exact sums.
_GRID = 4096.0


def _exact_in_any_order(A: np.ndarray, B: np.ndarray) -> bool:
    """True when every product a*b and every sum of up to K of them is exact in
    float64: A and B finite multiples of 2^-12 and K * max|a| * max|b| < 2^29
    (so every partial sum is a multiple of 2^-24 below 2^29: 53 bits).  Then
    the sum does not depend on the order it is formed in."""
    K = A.shape[2]
    if A.size == 0 or B.size == 0:
        return False
    # max |x| as the larger of max and -min (a NaN anywhere makes both NaN)
    amax, bmax = max(float(A.max()), -float(A.min())), max(float(B.max()), -float(B.min()))
    if not (math.isfinite(amax) and math.isfinite(bmax)) or K * amax * bmax >= 2.0**29:
        return False
    for X in (A, B):
        scaled = X * _GRID  # exact: a power of two, far from overflow
        if not (scaled == np.trunc(scaled)).all():
            return False
    return True


def _plus_zero(S: np.ndarray) -> np.ndarray:
    """``S`` with its zeros made +0: numpy's k reduction starts from +0, so a
    zero sum is +0 whatever the signs of its (zero) terms."""
    S[S == 0] = 0.0
    return S


def mma_float(A: np.ndarray, B: np.ndarray, C: np.ndarray) -> FloatRef:
    """A (S,M,K), B (S,K,N), C (S,M,N) as float64 values (exact inputs).

    IEEE special values follow float64 arithmetic: inf*0 and inf-inf give NaN,
    NaN propagates.  np.matmul would hide inf*0 in BLAS, so the products are
    formed explicitly and summed over k.  Where every partial sum is exact
    (:func:`_exact_in_any_order`: finite data on a grid, the exact, one-hot
    and rounding tiers) the sum is order-free, and the BLAS product gives the
    same values (zero sums +0, as the reduction gives them).
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if A.ndim == 3 and B.ndim == 3 and _exact_in_any_order(A, B):
        with np.errstate(invalid="ignore", over="ignore"):
            value = _plus_zero(np.matmul(A, B)) + C
        return FloatRef(value, _pending=lambda: _plus_zero(np.matmul(np.abs(A), np.abs(B))) + np.abs(C))
    with np.errstate(invalid="ignore", over="ignore"):
        prods = A[:, :, :, None] * B[:, None, :, :]  # (S, M, K, N)
        value = prods.sum(axis=2) + C

    def abs_sum() -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            np.abs(prods, out=prods)
            return prods.sum(axis=2) + np.abs(C)

    return FloatRef(value, _pending=abs_sum)
