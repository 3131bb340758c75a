"""Reference pieces of cooperative matrix (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR
and its layouts).

* Memory images of Load/Store: RowMajorKHR puts element (r, c) at
  ``Pointer[r * Stride + c]``, ColumnMajorKHR at ``Pointer[c * Stride + r]``;
  Stride counts elements of the pointee type; Stride 0 on Load makes every
  row (column) read the same data (SPV_KHR_cooperative_matrix, layout table).
* Element-wise arithmetic (OpIAdd/FAdd ... OpMatrixTimesScalar) on exact
  values, integers wrapped to the component width.
* Conversions (OpConvertFToS/U, OpConvertS/UToF, OpS/UConvert, OpFConvert):
  integer <-> integer keeps the source value and wraps it to the destination
  width (SConvert / UConvert truncate or extend); float -> integer rounds
  toward zero (values in range only); to a float type: the exact value if
  representable, otherwise either neighbour (no rounding mode is fixed for
  conversions in Vulkan; the Vulkan CTS accepts round-down or round-up too).
* Integer MulAdd (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR): A, B, C elements sign- or
  zero-extended by their Signed bits, products and the sum exact, then the low-order
  Result bits (wrap) or, with SaturatingAccumulation, clamped to the Result
  range using the Result's signedness.  Callers keep the A x B intermediate
  within the result range when saturating (its overflow is undefined).
"""

from __future__ import annotations

import functools

import numpy as np

from .dtypes import ElemType, etype
from .mma import matmul_int, saturate, wrap

__all__ = [
    "image_len",
    "to_image",
    "from_image",
    "elementwise",
    "convert_accept",
    "muladd_int",
    "chain_int",
]


def image_len(rows: int, cols: int, layout: str, stride: int) -> int:
    """Elements a Load/Store of a rows x cols matrix touches (last + 1)."""
    major, minor = (rows, cols) if layout == "row" else (cols, rows)
    return (major - 1) * stride + minor


@functools.lru_cache(maxsize=1024)
def _offsets(rows: int, cols: int, layout: str, stride: int) -> np.ndarray:
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    off = r * stride + c if layout == "row" else c * stride + r
    off.setflags(write=False)  # shared between calls
    return off


def to_image(matrix: np.ndarray, layout: str, stride: int, fill: np.ndarray) -> np.ndarray:
    """Write (S, rows, cols) element bits into the memory images ``fill``
    (S, L) (copied) at the offsets of ``layout`` / ``stride``."""
    S, rows, cols = matrix.shape
    out = np.array(fill, copy=True)
    off = _offsets(rows, cols, layout, stride)
    out[:, off] = matrix
    return out


def from_image(image: np.ndarray, rows: int, cols: int, layout: str, stride: int) -> np.ndarray:
    """Read (S, rows, cols) from memory images (S, L); stride 0 repeats."""
    return image[:, _offsets(rows, cols, layout, stride)]


def elementwise(op: str, x: np.ndarray, y: np.ndarray | None, t: ElemType, scalar=None) -> np.ndarray:
    """Exact result of an element-wise op on values of type ``t``: integers
    wrapped to the width (SDiv / UDiv truncate toward zero); floats exact in
    float64 (callers round or bound)."""
    if t.is_float:
        with np.errstate(all="ignore"):
            return {
                "add": lambda: x + y,
                "sub": lambda: x - y,
                "mul": lambda: x * y,
                "div": lambda: x / y,
                "neg": lambda: -x,
                "scale": lambda: x * scalar,
            }[op]()
    xi = np.asarray(x, dtype=np.int64)
    if op == "div":
        yi = np.asarray(y, dtype=np.int64)
        q = np.abs(xi) // np.abs(yi)
        v = np.where((xi < 0) != (yi < 0), -q, q)
    elif op == "neg":
        v = -xi
    elif op == "scale":
        v = xi * int(scalar)
    else:
        yi = np.asarray(y, dtype=np.int64)
        v = {"add": xi + yi, "sub": xi - yi, "mul": xi * yi}[op]
    return wrap(v, t.bits, t.kind == "int")


def convert_accept(x: np.ndarray, src: ElemType, dst: ElemType) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) acceptable destination values of a conversion (see the
    module docstring); equal where the result is unique."""
    x = np.asarray(x)
    if not dst.is_float:
        if src.is_float:
            v = np.trunc(np.asarray(x, dtype=np.float64)).astype(np.int64)
        else:
            v = np.asarray(x, dtype=np.int64)
        w = wrap(v, dst.bits, dst.kind == "int")
        return w, w
    xv = np.asarray(x, dtype=np.float64)
    near = dst.round(xv)
    with np.errstate(invalid="ignore"):
        exact = (near == xv) | np.isnan(xv)
    up_bits, down_bits = _steps(dst, near)
    up, down = dst.decode(up_bits), dst.decode(down_bits)
    lo = np.where(exact, near, np.where(near > xv, down, near))
    hi = np.where(exact, near, np.where(near > xv, near, up))
    return lo, hi


def _steps(t: ElemType, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bits of the neighbours of float values ``v`` toward +inf and toward
    -inf: :func:`_step` both ways, sharing the decomposition of the bits."""
    bits = t.encode(v).astype(np.int64)
    top = t.bits - 1
    sign = (bits >> top) & 1
    mag = bits & ((1 << top) - 1)
    pos = sign == 0
    signed = sign << top
    zero = mag == 0
    inc, dec = signed | (mag + 1), signed | (mag - 1)
    # from +-0 a step goes to the smallest subnormal of the step's sign
    up = np.where(zero, 1, np.where(pos, inc, dec))
    down = np.where(zero, (1 << top) | 1, np.where(pos, dec, inc))
    return up.astype(np.uint64), down.astype(np.uint64)


def _step(t: ElemType, v: np.ndarray, direction: int) -> np.ndarray:
    """Bits of the neighbour of float values ``v`` toward +inf (+1) / -inf (-1)."""
    bits = t.encode(v).astype(np.int64)
    sign = (bits >> (t.bits - 1)) & 1
    mag = bits & ((1 << (t.bits - 1)) - 1)
    pos = sign == 0
    grow = pos == (direction > 0)
    new_mag = np.where(grow, mag + 1, mag - 1)
    zero = mag == 0
    # from +-0 a step goes to the smallest subnormal of the step's sign
    new_bits = np.where(
        zero,
        np.where(direction > 0, 1, (1 << (t.bits - 1)) | 1),
        (sign << (t.bits - 1)) | new_mag,
    )
    return new_bits.astype(np.uint64)


def muladd_int(
    A: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    result: str,
    saturating: bool = False,
) -> np.ndarray:
    """Exact D = A (S,M,K) x B (S,K,N) + C (S,M,N) on element values already
    extended by their signedness (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR)."""
    rt = etype(result)
    exact = matmul_int(A, B) + np.asarray(C, dtype=np.int64)
    if saturating:
        return saturate(exact, rt.bits, rt.kind == "int")
    return wrap(exact, rt.bits, rt.kind == "int")


def chain_int(As: np.ndarray, Bs: np.ndarray, C: np.ndarray, result: str, saturating: bool = False):
    """D = A_{L-1} B_{L-1} + (... (A_0 B_0 + C)), each step wrapped/clamped
    to the Result type (As (S, L, M, K), Bs (S, L, K, N))."""
    d = np.asarray(C, dtype=np.int64)
    for step in range(As.shape[1]):
        d = muladd_int(As[:, step], Bs[:, step], d, result, saturating)
    return d
