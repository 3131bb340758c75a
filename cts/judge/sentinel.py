"""Sentinel fills of output buffers: every output element starts as a bit
pattern no correct result can take, so an element the device never wrote
is a finding named "never written", never a zero that happens to be right.

* One pattern per width, so a backend that allocates an output buffer
  knowing only its width fills it the same way (``width_fill``).  Floats
  read it as a NaN with a payload no operation produces: a signalling NaN
  at 32 and 64 bits (IEEE 754-2019 6.2: an operation that delivers a NaN
  delivers a quiet one), at 16 bits a quiet NaN in both f16 and bf16 with a
  payload that is neither a default NaN nor one of the suite's inputs (no
  16-bit pattern is a signalling NaN in both formats).  The suite's input
  data never hold these patterns, so even a moved value cannot carry one.
* Integers have no spare pattern.  Where the expected value is known before
  the launch, the fill is the pattern except where that equals the
  expected value (there the pattern with its low bit flipped): the fill
  differs from the expected value in every element.  Where the result is a
  moved input (rotates, extracts), :func:`fill_avoiding` picks, per row, a
  value none of the row's inputs holds.  A backend's own fill (the width
  pattern) is ambiguous only where the expected value equals it; the run
  flows draw data that avoid it or do not name those elements.
"""

from __future__ import annotations

import numpy as np

from reference.dtypes import ElemType

__all__ = ["sentinel_bits", "fill", "fill_avoiding", "unwritten", "width_fill", "WIDTH_PATTERN"]

# by width: 8-bit integers only; 16: f16 / bf16 quiet NaN 0x7FE5 (payloads 0x3E5 / 0x65);
# 32: f32 (and tf32 containers) signalling NaN; 64: f64 signalling NaN
WIDTH_PATTERN = {8: 0xA5, 16: 0x7FE5, 32: 0x7FA5A5A5, 64: 0x7FF4A5A5A5A5A5A5}
INT_PATTERN = WIDTH_PATTERN  # integers use the same patterns


def sentinel_bits(t: ElemType) -> int:
    """The fill pattern of element type ``t`` (that of its width)."""
    return WIDTH_PATTERN[t.bits]


def width_fill(dtype, count: int) -> np.ndarray:
    """A backend's output buffer of ``count`` elements of storage ``dtype``
    holding the pattern of the dtype's width."""
    dt = np.dtype(dtype)
    bits = np.full(int(count), WIDTH_PATTERN[dt.itemsize * 8], dtype=f"u{dt.itemsize}")
    return bits.view(dt)


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
        while k <= t.mask and ((base + k) & t.mask) in present:
            k += 1
        # a row holding every value of the type (an 8-bit row of 256 or more inputs) has no value to
        # avoid: it keeps the width pattern, and an element whose expected value equals it is not
        # named "never written" (``unwritten`` only names elements whose fill differs from expected)
        out[i] = (base + k) & t.mask if k <= t.mask else base
    return np.broadcast_to(out.reshape((-1,) + (1,) * (len(shape) - 1)), shape).astype(dtype)


def unwritten(actual: np.ndarray, filled: np.ndarray, t: ElemType) -> np.ndarray:
    """Elements of ``actual`` (bits) that still hold their ``filled`` pattern."""
    a = np.asarray(actual).astype(np.uint64) & np.uint64(t.mask)
    f = np.asarray(filled).astype(np.uint64) & np.uint64(t.mask)
    return a == np.broadcast_to(f, a.shape)
