"""The arithmetic every family's emulation shares: integer matrix products
(with the narrowing faults of an accumulator too narrow), float multiply-add
rounded once per product and sum, and the shared fault of an accumulator
narrower than the Result type.  ``cts.backends.emulator`` and its ``emu_*``
mixins import it; it imports none of them."""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["float_mad", "int_matmul", "narrow_acc_mad", "sign_extend"]


_NARROW_INTS = {8: (np.uint8, np.int8), 16: (np.uint16, np.int16), 32: (np.uint32, np.int32)}


def sign_extend(v: np.ndarray, bits: int) -> np.ndarray:
    if v.dtype.kind in "ui" and bits in _NARROW_INTS:  # the low bits, read as two's complement
        u, i = _NARROW_INTS[bits]
        return v.astype(u).view(i).astype(np.int64)
    if v.dtype.kind in "ui" and bits < 8:  # move the sign bit to bit 7, shift back arithmetically
        up = (v.astype(np.uint8) << np.uint8(8 - bits)).view(np.int8)
        return (up >> np.int8(8 - bits)).astype(np.int64)
    v = v.astype(np.int64) & ((1 << bits) - 1)
    return np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)


def int_matmul(A: np.ndarray, B: np.ndarray, limits: tuple[int, int] | None = None) -> np.ndarray:
    """Exact int64 A (S,M,K) @ B (S,K,N).  Where every product and partial sum
    stays below 2^24 (2^53) in magnitude, the float32 (float64) BLAS product
    is exact in any summation order and far faster than numpy's integer
    matmul loops.  ``limits``: bounds of |a| and |b| the caller knows (the
    element widths), else they are measured."""
    A = np.asarray(A).astype(np.int64, copy=False)
    B = np.asarray(B).astype(np.int64, copy=False)
    if A.size and B.size:
        if limits is None:
            limits = (max(-int(A.min()), int(A.max())), max(-int(B.min()), int(B.max())))
        bound = A.shape[-1] * limits[0] * limits[1]
        for limit, ftype in ((1 << 24, np.float32), (1 << 53, np.float64)):
            if bound < limit:
                return np.matmul(A.astype(ftype), B.astype(ftype)).astype(np.int64)
    return np.matmul(A, B)


def float_mad(A: np.ndarray, B: np.ndarray, C) -> np.ndarray:
    """sum_k A[:, m, k] * B[:, k, n] + C in float64, this device's way: from
    +0, the products of one k at a time added in k order 0, 1, ..., K-1, then
    C.  Finite operands that are multiples of 2^-12 with K*max|a|*max|b| <
    2^29 have exact partial sums, whatever the order: those go through one
    BLAS product (its zero sums made +0, as the k loop would leave them)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim == 3 and B.ndim == 3 and A.size and B.size:
        amax, bmax = float(np.max(np.abs(A))), float(np.max(np.abs(B)))
        if np.isfinite(amax) and np.isfinite(bmax) and A.shape[2] * amax * bmax < 2.0**29:
            a12, b12 = A * 4096.0, B * 4096.0
            if np.array_equal(a12, np.trunc(a12)) and np.array_equal(b12, np.trunc(b12)):
                acc = np.matmul(A, B)
                acc[acc == 0] = 0.0
                with np.errstate(invalid="ignore", over="ignore"):
                    return acc + C
    shape = np.broadcast_shapes(A.shape[:2] + (1,), B.shape[:1] + (1,) + B.shape[2:])
    acc = np.zeros(shape)
    t = np.empty(shape)
    with np.errstate(invalid="ignore", over="ignore"):
        for k in range(A.shape[2]):
            np.multiply(A[:, :, k, None], B[:, None, k, :], out=t)
            acc += t
        return acc + C


# fault acc_one_step_narrower: the emulator's own table of "one step narrower"
_NARROWER_ACC = {"f64": np.float32, "f32": np.float16, "f16": ml_dtypes.bfloat16}


_SIGNIFICAND = {"f64": 53, "f32": 24, "tf32": 11, "f16": 11, "bf16": 8}


def narrow_acc_mad(A: np.ndarray, B: np.ndarray, C, c_type: str, r_type: str = "") -> np.ndarray | None:
    """Fault acc_one_step_narrower: C + sum_k A[:, m, k] * B[:, k, n] with the
    running sum held in the float format one step narrower than the
    accumulator (of the C and Result types, the one with fewer significand
    bits): C rounded to it, then each product added (exactly, in float64)
    and the sum rounded to it again, k ascending.  None where there is no
    narrower format here (the caller computes normally)."""
    r_type = r_type or c_type
    acc = c_type if _SIGNIFICAND.get(c_type, 0) <= _SIGNIFICAND.get(r_type, 0) else r_type
    ft = _NARROWER_ACC.get(acc)
    if ft is None:
        return None
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = np.broadcast_to(np.asarray(C, dtype=np.float64), A.shape[:2] + B.shape[2:]).astype(ft)
        for k in range(A.shape[2]):
            s = (s.astype(np.float64) + A[:, :, k, None] * B[:, None, k, :]).astype(ft)
    return s.astype(np.float64)
