"""Reference memory rules of the OpenCL cooperative-matrix axes.

All addresses are **byte** offsets from the Load/Store 'Pointer'; an image is a
(S, bytes) uint8 array, one row per subgroup.

* Pointee type other than the component type (SPV_KHR_cooperative_matrix,
  Cooperative Matrix Layout table and issue "Should we allow the Pointer type
  and matrix component type to mismatch?"; SPV_KHR_cooperative_matrix "Stride in
  elements of the pointee type"): RowMajorKHR takes the elements of row r
  "in order from contiguous locations starting at Pointer[r*Stride]", so
  element (r, c) of a component of z bytes starts at byte
  ``r * Stride * sizeof(pointee) + c * z``; ColumnMajorKHR the same with rows
  and columns swapped.  Stride 0 (Load only) reads every row from the same
  place.
* ARM blocked layouts (SPV_ARM_cooperative_matrix_layouts, Cooperative Matrix
  Layout table rows 4202 RowBlockedInterleavedARM and 4203
  ColumnBlockedInterleavedARM; SPV_KHR_cooperative_matrix): 64-byte blocks of 4 rows x
  16/z columns, row-major inside a block; blocks in row-major (4202) or
  column-major (4203) order; "interleaved at a 4-byte granularity in groups
  whose size is given by the Stride operand" (1, 2 or 4).  The suite's reading
  of that sentence: consecutive blocks (in block order) form groups of Stride
  blocks; a group occupies Stride x 64 bytes in which 4-byte chunk k of the
  group's block p sits at chunk position k * Stride + p.  The validation rules
  (Columns a multiple of 16/z x Stride for 4202, Rows a multiple of
  4 x Stride for 4203) make every group lie inside one block row (4202) or
  block column (4203), which is what this reading needs.  Stride 1 is the plain
  blocked layout.
* Draft queries of cl_khr_cooperative_matrix (cl_khr_cooperative_matrix draft): a Load/Store
  pointer must be aligned to max(z, CL_DEVICE_COOPERATIVE_MATRIX_POINTER_ALIGNMENT_KHR)
  bytes and its Stride, in bytes, a multiple of max(z,
  CL_DEVICE_COOPERATIVE_MATRIX_STRIDE_MULTIPLE_KHR); otherwise the behaviour is
  undefined, so a conforming case stays inside both rules.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ARM_LAYOUTS",
    "pointee_addresses",
    "arm_blocked_addresses",
    "read_elements",
    "write_elements",
    "image_bytes",
    "arm_shape_ok",
    "pointer_alignment",
    "stride_multiple",
]

ARM_LAYOUTS = {"rowblk": 4202, "colblk": 4203}  # id token -> Cooperative Matrix Layout value
CHUNK = 4  # bytes of one interleave step
BLOCK = 64  # bytes of one block


def pointee_addresses(rows: int, cols: int, layout: str, stride: int, z: int, pointee: int) -> np.ndarray:
    """(rows, cols, z) byte addresses of every element's bytes (KHR layouts,
    Stride counted in pointee elements of ``pointee`` bytes)."""
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    start = r * stride * pointee + c * z if layout == "row" else c * stride * pointee + r * z
    return start[:, :, None] + np.arange(z)[None, None, :]


def arm_shape_ok(rows: int, cols: int, z: int, layout: str, interleave: int) -> bool:
    """The validation rules of SPV_ARM_cooperative_matrix_layouts (Rev 2)."""
    bc = 16 // z
    if interleave not in (1, 2, 4) or rows % 4 or cols % bc:
        return False
    return cols % (bc * interleave) == 0 if layout == "rowblk" else rows % (4 * interleave) == 0


def arm_blocked_addresses(rows: int, cols: int, z: int, layout: str, interleave: int) -> np.ndarray:
    """(rows, cols, z) byte addresses of every element's bytes in an ARM
    blocked layout (module docstring)."""
    if not arm_shape_ok(rows, cols, z, layout, interleave):
        raise ValueError(f"{rows}x{cols} of {z}-byte elements is no {layout} matrix with Stride {interleave}")
    bc = 16 // z
    r = np.arange(rows)[:, None, None]
    c = np.arange(cols)[None, :, None]
    byte = np.arange(z)[None, None, :]
    bi, ri = r // 4, r % 4
    bj, ci = c // bc, c % bc
    block = bi * (cols // bc) + bj if layout == "rowblk" else bj * (rows // 4) + bi
    group, pos = block // interleave, block % interleave
    inner = (ri * bc + ci) * z + byte  # byte inside the 64-byte block
    chunk, within = inner // CHUNK, inner % CHUNK
    return group * BLOCK * interleave + (chunk * interleave + pos) * CHUNK + within


def image_bytes(addr: np.ndarray) -> int:
    """Bytes a Load/Store with these addresses touches (last + 1)."""
    return int(addr.max()) + 1 if addr.size else 0


def read_elements(image: np.ndarray, addr: np.ndarray, storage) -> np.ndarray:
    """(S, rows, cols) element bits (dtype ``storage``, little-endian) read
    from byte images (S, L) at ``addr`` (rows, cols, z)."""
    img = np.asarray(image, dtype=np.uint8)
    raw = np.ascontiguousarray(img[:, addr])  # (S, rows, cols, z)
    return raw.view(np.dtype(storage).newbyteorder("<"))[..., 0].astype(storage)


def write_elements(image: np.ndarray, addr: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A copy of byte images (S, L) with (S, rows, cols) element bits written
    at ``addr``; bytes no address names keep their value."""
    out = np.array(image, dtype=np.uint8, copy=True)
    v = np.asarray(values)
    v = np.ascontiguousarray(v.astype(v.dtype.newbyteorder("<")))
    out[:, addr] = v.view(np.uint8).reshape(v.shape + (v.dtype.itemsize,))
    return out


def pointer_alignment(z: int, reported: int) -> int:
    """Bytes a Load/Store pointer must be aligned to (cl_khr_cooperative_matrix draft)."""
    return max(z, int(reported or 0))


def stride_multiple(z: int, reported: int) -> int:
    """Bytes a Load/Store Stride must be a multiple of (cl_khr_cooperative_matrix draft)."""
    return max(z, int(reported or 0))
