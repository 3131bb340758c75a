"""Independent model of SYCL ``joint_matrix`` memory semantics.

Sources: sycl_ext_oneapi_matrix_no_use (old ``matrix_layout`` API, with the VNNI
example), sycl_ext_oneapi_matrix (current ``use``/``layout`` API) and ``sycl_ext_intel_matrix``, and the
``sycl_ext_intel_matrix`` "Packed Layout Format" section (examples 1 and 2).

A joint matrix is opaque: its element -> work-item mapping is
implementation-defined (sycl_ext_oneapi_matrix_no_use, ``get_wi_data``), so everything observable is
memory.  This module maps *logical* matrices (S, R, C) of raw element bits
(uint64, one matrix per tile) to and from memory images (S, size) and models
the operations:

* layouts: ``row`` (element (r, c) at r*stride + c), ``col`` (at c*stride + r),
  ``packed`` (current API ``ext_intel_packed``, old ``packed_b``): the VNNI
  image P = vnni(X) with P[i, j] at i*stride + j ("stride counts elements
  between packed rows", sycl_ext_oneapi_matrix), and old-API ``packed_a``: VNNI of the
  column-major image, P = vnni(X^T) ("the packed size for A is (K/2, M*2)",
  sycl_ext_oneapi_matrix_no_use).
* VNNI (sycl_ext_oneapi_matrix_no_use, sycl_ext_intel_matrix examples): factor f = 32 / element
  bits for 8- and 16-bit elements (4 and 2), 1 otherwise;
  vnni(X)[i, j*f + k] = X[i*f + k, j].
* checked load / store / fill (``sycl_ext_intel_matrix`` rev 2): the
  memory matrix is Height x Width in the tile's layout, the tile starts at
  (coordX, coordY); out-of-bounds elements load and fill as 0, stores to them
  are dropped.  For ``packed`` the bounds and coordinates count packed rows
  and columns (as the intel/llvm e2e tests call it: Height = K/f,
  Width = N*f, coordX = k/f, coordY = n*f).  The Intel text says "Height
  is number of rows in the memory matrix, Width is number of columns", so
  for every layout they count rows and columns of the matrix as laid out in
  memory (the dimension ``stride`` separates is the row); for ``col`` that
  is the transposed matrix (an interpretation, stated here).  Fill has no
  memory: its bounds are logical rows and columns.
* apply with coordinates (sycl_ext_intel_matrix): the callback sees the logical (pre-VNNI)
  row and column.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .dtypes import ElemType, etype, round_to_tf32

__all__ = [
    "LAYOUTS",
    "vnni_factor",
    "pack_vnni",
    "unpack_vnni",
    "layout_dims",
    "min_stride",
    "image_size",
    "store_image",
    "load_image",
    "checked_load",
    "checked_store",
    "checked_fill_mask",
    "apply_coord_weight",
    "apply_expected",
    "tf32_accepts",
    "mem_type",
]

LAYOUTS = ("row", "col", "packed", "packed_a")


def vnni_factor(elem_bits: int) -> int:
    """Elements per 32-bit VNNI group: 4 (8-bit), 2 (16-bit), else 1."""
    return 32 // elem_bits if elem_bits in (8, 16) else 1


def mem_type(name: str) -> ElemType:
    """The memory element type: tf32 lives in a float container (sycl_ext_oneapi_matrix, tf32)."""
    return etype("f32" if name == "tf32" else name)


def pack_vnni(X: np.ndarray, f: int) -> np.ndarray:
    """(S, R, C) -> (S, R/f, C*f): vnni(X)[i, j*f + k] = X[i*f + k, j]."""
    S, R, C = X.shape
    if R % f:
        raise ValueError(f"VNNI packing needs rows ({R}) to be a multiple of {f}")
    return X.reshape(S, R // f, f, C).transpose(0, 1, 3, 2).reshape(S, R // f, C * f)


def unpack_vnni(P: np.ndarray, f: int) -> np.ndarray:
    """Inverse of :func:`pack_vnni`."""
    S, Rp, Cp = P.shape
    return P.reshape(S, Rp, Cp // f, f).transpose(0, 1, 3, 2).reshape(S, Rp * f, Cp // f)


def _to_memory_matrix(X: np.ndarray, layout: str, f: int) -> np.ndarray:
    """Logical (S, R, C) -> the 2-D matrix laid out row by row in memory."""
    if layout == "row":
        return X
    if layout == "col":
        return X.transpose(0, 2, 1)
    if layout == "packed":
        return pack_vnni(X, f)
    if layout == "packed_a":
        return pack_vnni(X.transpose(0, 2, 1), f)
    raise ValueError(f"unknown layout {layout!r}")


def _from_memory_matrix(Mm: np.ndarray, layout: str, f: int) -> np.ndarray:
    if layout == "row":
        return Mm
    if layout == "col":
        return Mm.transpose(0, 2, 1)
    if layout == "packed":
        return unpack_vnni(Mm, f)
    if layout == "packed_a":
        return unpack_vnni(Mm, f).transpose(0, 2, 1)
    raise ValueError(f"unknown layout {layout!r}")


def layout_dims(R: int, C: int, layout: str, f: int) -> tuple[int, int]:
    """(rows, cols) of the memory matrix of a logical R x C matrix."""
    if layout == "row":
        return R, C
    if layout == "col":
        return C, R
    if layout == "packed":
        return R // f, C * f
    return C // f, R * f  # packed_a


def min_stride(R: int, C: int, layout: str, f: int) -> int:
    return layout_dims(R, C, layout, f)[1]


def image_size(R: int, C: int, layout: str, f: int, stride: int) -> int:
    rows, cols = layout_dims(R, C, layout, f)
    return (rows - 1) * stride + cols


@lru_cache(maxsize=1024)
def _offsets(rows: int, cols: int, stride: int) -> np.ndarray:
    """Flat offsets of a rows x cols memory matrix, row by row (read-only)."""
    o = (np.arange(rows)[:, None] * stride + np.arange(cols)[None, :]).reshape(-1)
    o.flags.writeable = False
    return o


def _rows_view(mem: np.ndarray, rows: int, cols: int, stride: int) -> np.ndarray | None:
    """(S, rows, cols) writable view of the memory matrix inside ``mem``
    (S, size), or None where rows overlap (stride < cols), do not fit, or
    ``mem`` is not one writable C-contiguous block."""
    S, size = mem.shape
    if rows == 0 or cols == 0 or stride < cols or (rows - 1) * stride + cols > size:
        return None
    if not (mem.flags.c_contiguous and mem.flags.writeable):
        return None
    item = mem.itemsize
    return np.ndarray((S, rows, cols), mem.dtype, mem, 0, (size * item, stride * item, item))


def store_image(
    mem: np.ndarray, X: np.ndarray, layout: str, f: int, stride: int, in_place: bool = False
) -> np.ndarray:
    """Memory after storing X (S, R, C) at offset 0 of each tile's memory
    ``mem`` (S, size); cells between rows keep their old contents.
    ``in_place``: written into ``mem`` itself (a numpy array), returned."""
    Mm = _to_memory_matrix(np.asarray(X), layout, f)
    S, rows, cols = Mm.shape
    out = mem if in_place else np.array(mem, copy=True)
    view = _rows_view(out, rows, cols, stride)
    if view is not None:
        view[...] = Mm
    else:
        out[:, _offsets(rows, cols, stride)] = Mm.reshape(S, -1)
    return out


def load_image(mem: np.ndarray, R: int, C: int, layout: str, f: int, stride: int) -> np.ndarray:
    """Logical (S, R, C) read from memory (S, size) (stride 0 allowed)."""
    rows, cols = layout_dims(R, C, layout, f)
    Mm = np.asarray(mem)[:, _offsets(rows, cols, stride)].reshape(-1, rows, cols)
    return _from_memory_matrix(Mm, layout, f)


def _window_mask(rows, cols, height, width, cx, cy):
    """(S, rows, cols) in-bounds mask for tiles at per-tile (cx, cy)."""
    r = np.asarray(cx)[:, None, None] + np.arange(rows)[None, :, None]
    c = np.asarray(cy)[:, None, None] + np.arange(cols)[None, None, :]
    return (r < np.asarray(height)[:, None, None]) & (c < np.asarray(width)[:, None, None])


def checked_load(mem, R, C, layout, f, stride, height, width, cx, cy) -> np.ndarray:
    """joint_matrix_load_checked: base pointer = whole matrix, per-tile
    Height/Width/coordX/coordY arrays; out-of-bounds elements are 0."""
    rows, cols = layout_dims(R, C, layout, f)
    mem = np.asarray(mem)
    S = mem.shape[0]
    ok = _window_mask(rows, cols, height, width, cx, cy)
    r = np.asarray(cx)[:, None, None] + np.arange(rows)[None, :, None]
    c = np.asarray(cy)[:, None, None] + np.arange(cols)[None, None, :]
    off = np.where(ok, r * stride + c, 0)
    Mm = np.where(ok, mem[np.arange(S)[:, None, None], off], 0).astype(np.uint64)
    return _from_memory_matrix(Mm, layout, f)


def checked_store(mem, X, layout, f, stride, height, width, cx, cy, in_place: bool = False) -> np.ndarray:
    """joint_matrix_store_checked: in-bounds elements written, others dropped
    (``in_place``: into ``mem`` itself, returned)."""
    Mm = _to_memory_matrix(np.asarray(X), layout, f)
    S, rows, cols = Mm.shape
    ok = _window_mask(rows, cols, height, width, cx, cy)
    r = np.asarray(cx)[:, None, None] + np.arange(rows)[None, :, None]
    c = np.asarray(cy)[:, None, None] + np.arange(cols)[None, None, :]
    out = mem if in_place else np.array(mem, copy=True)
    s_idx = np.broadcast_to(np.arange(S)[:, None, None], ok.shape)
    out[s_idx[ok], (r * stride + c)[ok]] = Mm[ok]
    return out


def checked_fill_mask(R, C, height, width, cx, cy) -> np.ndarray:
    """joint_matrix_fill_checked: (S, R, C) True where the value is written
    (in bounds, logical coordinates), False where the element is 0."""
    return _window_mask(R, C, height, width, cx, cy)


def apply_coord_weight(R: int, C: int) -> np.ndarray:
    """The coordinate term of the suite's apply callback, (R, C):
    w(r, c) = (r mod 8) * 8 + (c mod 8); a swapped or packed coordinate
    changes w wherever the two differ mod 8."""
    r = np.arange(R)[:, None] % 8
    c = np.arange(C)[None, :] % 8
    return r * 8 + c


def apply_expected(values: np.ndarray, t: ElemType, coords: bool = True) -> np.ndarray:
    """Expected element values after the callback x -> 2x + w(row, col)
    (``coords`` False: the coordinate-free callback x -> 2x of the generic
    ``joint_matrix_apply`` / old ``get_wi_data`` loop)
    (values (S, R, C) exact; integers wrap to the type, as C++ does for the
    assignment back to an 8-bit element; floats are exact by construction of
    the apply data)."""
    S, R, C = values.shape
    w = apply_coord_weight(R, C)[None] if coords else 0
    if t.is_float:
        return 2.0 * values + w
    v = 2 * values.astype(np.int64) + w
    low = v & t.mask
    if t.signed:
        return np.where(low >= (1 << (t.bits - 1)), low - (1 << t.bits), low)
    return low


def tf32_accepts(x_f32_bits: np.ndarray, got_bits: np.ndarray) -> np.ndarray:
    """5.2: conversions to tf32 on load/fill/apply may round or truncate
    (unspecified): accept the round-to-nearest-even or the truncated value."""
    x = (np.asarray(x_f32_bits).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    rte = round_to_tf32(x.view(np.float32)).view(np.uint32).astype(np.uint64)
    trunc = (x & np.uint32(0xFFFFE000)).astype(np.uint64)
    g = np.asarray(got_bits).astype(np.uint64)
    return (g == rte) | (g == trunc)
