"""Sentinel fills of output buffers: every output element starts as a bit
pattern no correct result can take, so an element the device never wrote
is a finding named "never written", never a zero that happens to be right.

* Floats: a signalling NaN with a fixed payload.  No arithmetic result is a
  signalling NaN (IEEE 754-2019 6.2: an operation that delivers a NaN
  delivers a quiet NaN), and the suite's input data never hold this
  pattern, so even a data-movement result cannot carry it.
* Integers have no spare pattern.  Where the expected value is known before
  the launch, the fill is a fixed pattern except where that equals the
  expected value (there the pattern with its low bit flipped): the fill
  differs from the expected value in every element.  Where the result is a
  moved input (rotates, extracts), :func:`fill_avoiding` picks, per row, a
  value none of the row's inputs holds.
"""

from __future__ import annotations

import numpy as np

from reference.dtypes import ElemType

__all__ = ["sentinel_bits", "fill", "fill_avoiding", "unwritten", "INT_PATTERN"]

INT_PATTERN = 0xA5A5A5A5A5A5A5A5  # masked to the type's width

# signalling NaNs: exponent all ones, the quiet bit (top mantissa bit) clear, payload 0b1010...
_FLOAT_SENTINEL = {
    "f16": 0x7D5A,
    "bf16": 0x7FA5,
    "f32": 0x7FA5A5A5,
    "tf32": 0x7FA5A5A5,  # tf32 results travel in fp32 containers
    "f64": 0x7FF4A5A5A5A5A5A5,
}


def sentinel_bits(t: ElemType) -> int:
    """The fill pattern of element type ``t`` (floats: its signalling NaN)."""
    if t.is_float:
        return _FLOAT_SENTINEL[t.name]
    return INT_PATTERN & t.mask


def fill(t: ElemType, shape, dtype=np.uint64, expected: np.ndarray | None = None) -> np.ndarray:
    """An output buffer of ``shape`` in storage ``dtype`` holding the sentinel
    of ``t``; for integers, ``expected`` (bits, broadcastable to ``shape``)
    makes the fill differ from the expected value in every element."""
    s = sentinel_bits(t)
    out = np.full(shape, s, dtype=np.uint64)
    if not t.is_float and expected is not None:
        e = np.broadcast_to(np.asarray(expected).astype(np.uint64) & np.uint64(t.mask), shape)
        out = np.where(e == np.uint64(s), np.uint64(s ^ 1), out)
    return out.astype(dtype)


def fill_avoiding(t: ElemType, shape, dtype, values: np.ndarray) -> np.ndarray:
    """An output buffer whose row ``i`` (first axis) holds one value that no
    element of ``values[i]`` (bits) holds: the fill of a result made only of
    moved inputs.  Floats: the signalling NaN (inputs never hold it)."""
    if t.is_float:
        return fill(t, shape, dtype)
    v = np.asarray(values).reshape(shape[0], -1).astype(np.uint64) & np.uint64(t.mask)
    out = np.empty(shape[0], dtype=np.uint64)
    base = sentinel_bits(t)
    for i, row in enumerate(v):
        present = set(np.unique(row).tolist())
        k = 0
        while ((base + k) & t.mask) in present:
            k += 1
        out[i] = (base + k) & t.mask
    return np.broadcast_to(out.reshape((-1,) + (1,) * (len(shape) - 1)), shape).astype(dtype)


def unwritten(actual: np.ndarray, filled: np.ndarray, t: ElemType) -> np.ndarray:
    """Elements of ``actual`` (bits) that still hold their ``filled`` pattern."""
    a = np.asarray(actual).astype(np.uint64) & np.uint64(t.mask)
    f = np.asarray(filled).astype(np.uint64) & np.uint64(t.mask)
    return a == np.broadcast_to(f, a.shape)
