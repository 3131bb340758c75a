"""Reference rules of NV cooperative matrix 2 (SPV_NV_cooperative_matrix2,
SPV_NV_tensor_addressing, GL_NV_cooperative_matrix2, VK_NV_cooperative_matrix2).

Each function names the section of the extension text it follows.  Values
are exact numbers (float64 / int64); callers encode them to the component
type.  Nothing here knows about kernels, buffers or the emulator.

* ``reduce`` -- SPV_NV_cooperative_matrix2 3.49.13 *OpCooperativeMatrixReduceNV*
  and 3.X *Cooperative Matrix Reduce Mode*: Row reduces the elements of each
  row (Result keeps the row count, any column count: every element of result
  row r is the reduction of source row r); Column likewise per column; Row |
  Column reduces the whole matrix (Result of any shape, every element the
  same); 2x2 reduces each aligned 2x2 neighbourhood (Result has half the rows
  and half the columns).
* ``per_element`` -- 3.49.9 *OpCooperativeMatrixPerElementOpNV*: Func(row,
  col, element, extra operands...) for every element; an extra cooperative
  matrix operand passes its corresponding element.
* ``convert_use`` / ``transpose`` -- 3.49.11 *OpCooperativeMatrixConvertNV*
  (same elements, Use Accumulator -> A or B) and
  *OpCooperativeMatrixTransposeNV* (Accumulator R x C -> B C x R, element
  (r, c) -> (c, r)).  A component-type change with a Use change is
  Op{F,S,U}Convert (same values, each converted).
* ``TensorLayout`` / ``TensorView`` and their ``set_*`` / ``slice`` / ``clip``
  -- SPV_NV_tensor_addressing 3.X *Tensor Layout and View Instructions*
  (OpCreateTensorLayoutNV: dims, strides, spans, offsets 0, block sizes 1,
  clamp value 0; OpTensorLayoutSetDimensionNV: layoutDimension = span = Dim,
  offsets 0, stride[L-1] = 1, stride[i] = stride[i+1] * ceil(Dim[i+1] /
  blockSize[i+1]); OpTensorLayoutSliceNV adds to offset and sets span;
  OpCreateTensorViewNV: clip offsets 0, spans 0xFFFFFFFF;
  OpTensorViewSetDimensionNV: viewStride[last] = 1, viewStride[i] = product
  of the later Dims).
* ``tensor_addresses`` -- SPV_NV_cooperative_matrix2 3.X *Tensor Layout and
  View* (matrixCoordToTensorElement and ...WithView, spanCoordToTensorCoord)
  and SPV_NV_tensor_addressing 3.X *Tensor Clamp Mode*: Constant loads the
  clamp value, ClampToEdge clamps, Repeat wraps (remainder as OpSMod),
  RepeatMirrored c = c smod (2*dim-2), then 2*dim-2-c where c >= dim; for
  stores every mode other than Undefined discards out-of-bounds elements;
  elements outside the view's clip region are neither loaded (the Object
  operand's element is kept) nor stored.
* The clamp value is 32 bits for any component type; the suite reads it as
  the element's bit pattern in the low bits (the reading Khronos's VK-GL-CTS
  uses: 0x3800 is fp16 0.5 there); the extension text does not say.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = [
    "REDUCE_MODES",
    "CLAMP_MODES",
    "reduce",
    "per_element",
    "transpose",
    "TensorLayout",
    "TensorView",
    "create_layout",
    "create_view",
    "tensor_addresses",
    "CLIPPED",
    "CLAMP_CONST",
]

REDUCE_MODES = {"row": 0x1, "col": 0x2, "rowcol": 0x3, "2x2": 0x4}  # Cooperative Matrix Reduce Mode
CLAMP_MODES = {"undef": 0, "const": 1, "edge": 2, "repeat": 3, "mirror": 4}  # Tensor Clamp Mode
CLIPPED = -1  # element outside the view's clip region (or a discarded store)
CLAMP_CONST = -2  # a Constant-mode load out of bounds: the element is the clamp value


def _combine(combine: str, a: np.ndarray, axis) -> np.ndarray:
    if combine == "sum":
        return a.sum(axis=axis)
    if combine == "min":
        return a.min(axis=axis)
    if combine == "max":
        return a.max(axis=axis)
    raise ValueError(f"unknown combine {combine!r}")


def reduce(x: np.ndarray, mode: str, combine: str, out_rows: int, out_cols: int) -> np.ndarray:
    """OpCooperativeMatrixReduceNV over exact values ``x`` (S, R, C)."""
    S, R, C = x.shape
    if mode == "row":
        if out_rows != R:
            raise ValueError("Row: Result must have the rows of Matrix")
        v = _combine(combine, x, 2)[:, :, None]
        return np.broadcast_to(v, (S, R, out_cols)).copy()
    if mode == "col":
        if out_cols != C:
            raise ValueError("Column: Result must have the columns of Matrix")
        v = _combine(combine, x, 1)[:, None, :]
        return np.broadcast_to(v, (S, out_rows, C)).copy()
    if mode == "rowcol":
        v = _combine(combine, x.reshape(S, -1), 1)[:, None, None]
        return np.broadcast_to(v, (S, out_rows, out_cols)).copy()
    if mode == "2x2":
        if (out_rows, out_cols) != (R // 2, C // 2):
            raise ValueError("2x2: Result has half the rows and columns of Matrix")
        blocks = x.reshape(S, R // 2, 2, C // 2, 2)
        return _combine(combine, blocks, (2, 4))
    raise ValueError(f"unknown reduce mode {mode!r}")


def per_element(x: np.ndarray, fn, *extra) -> np.ndarray:
    """OpCooperativeMatrixPerElementOpNV: fn(row, col, element, *extra) with
    row and col the element's coordinates (broadcast over S)."""
    S, R, C = x.shape
    r = np.broadcast_to(np.arange(R)[None, :, None], x.shape)
    c = np.broadcast_to(np.arange(C)[None, None, :], x.shape)
    return fn(r, c, x, *extra)


def transpose(x: np.ndarray) -> np.ndarray:
    """OpCooperativeMatrixTransposeNV: element (r, c) of the R x C
    accumulator is element (c, r) of the C x R B matrix."""
    return np.swapaxes(x, 1, 2).copy()


# ------------------------------------------------------------ tensor addressing
@dataclass(frozen=True)
class TensorLayout:
    dim: int
    clamp: str = "undef"
    block: tuple[int, ...] = ()
    layout_dim: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    offset: tuple[int, ...] = ()
    span: tuple[int, ...] = ()
    clamp_value: int = 0

    def set_block(self, *b: int) -> TensorLayout:  # OpTensorLayoutSetBlockSizeNV
        assert len(b) == self.dim
        return replace(self, block=tuple(b))

    def set_dimension(self, *d: int) -> TensorLayout:  # OpTensorLayoutSetDimensionNV
        assert len(d) == self.dim
        stride = [0] * self.dim
        stride[-1] = 1
        for i in range(self.dim - 2, -1, -1):
            stride[i] = stride[i + 1] * -(-d[i + 1] // self.block[i + 1])
        return replace(self, layout_dim=tuple(d), span=tuple(d), offset=(0,) * self.dim, stride=tuple(stride))

    def set_stride(self, *s: int) -> TensorLayout:  # OpTensorLayoutSetStrideNV
        assert len(s) == self.dim
        return replace(self, stride=tuple(s))

    def slice(self, *pairs: int) -> TensorLayout:  # OpTensorLayoutSliceNV (offset0, span0, ...)
        assert len(pairs) == 2 * self.dim
        off = tuple(o + p for o, p in zip(self.offset, pairs[0::2]))
        return replace(self, offset=off, span=tuple(pairs[1::2]))

    def set_clamp_value(self, v: int) -> TensorLayout:  # OpTensorLayoutSetClampValueNV
        return replace(self, clamp_value=int(v) & 0xFFFFFFFF)


def create_layout(dim: int, clamp: str = "undef") -> TensorLayout:
    """OpCreateTensorLayoutNV."""
    if not 1 <= dim <= 5:
        raise ValueError("Dim must be in [1, 5]")
    z = (0,) * dim
    return TensorLayout(dim, clamp, (1,) * dim, z, z, z, z, 0)


@dataclass(frozen=True)
class TensorView:
    dim: int
    has_dims: bool
    perm: tuple[int, ...]
    view_dim: tuple[int, ...] = ()
    view_stride: tuple[int, ...] = ()
    clip: tuple[int, int, int, int] = (0, 0xFFFFFFFF, 0, 0xFFFFFFFF)

    def set_dimension(self, *d: int) -> TensorView:  # OpTensorViewSetDimensionNV
        assert len(d) == self.dim
        stride = [int(np.prod(d[i + 1 :], dtype=np.int64)) for i in range(self.dim)]
        return replace(self, view_dim=tuple(d), view_stride=tuple(stride))

    def set_stride(self, *s: int) -> TensorView:  # OpTensorViewSetStrideNV
        assert len(s) == self.dim
        return replace(self, view_stride=tuple(s))

    def set_clip(self, ro: int, rs: int, co: int, cs: int) -> TensorView:  # OpTensorViewSetClipNV
        return replace(self, clip=(ro, rs, co, cs))


def create_view(dim: int, has_dims: bool, *perm: int) -> TensorView:
    """OpCreateTensorViewNV."""
    if sorted(perm) != list(range(dim)):
        raise ValueError("p0 .. p<Dim-1> must be a permutation of [0, Dim)")
    z = (0,) * dim
    return TensorView(dim, has_dims, tuple(perm), z, z)


def _smod(a: np.ndarray, b) -> np.ndarray:
    """OpSMod: the remainder takes the sign of the divisor (b > 0 here)."""
    return np.mod(a, b)


def _clamp(c: np.ndarray, n: int, mode: str) -> np.ndarray:
    if mode == "edge":
        return np.clip(c, 0, n - 1)
    if mode == "repeat":
        return _smod(c, n)
    if mode == "mirror":
        c = _smod(c, 2 * n - 2)
        return np.where(c >= n, 2 * n - 2 - c, c)
    raise ValueError(mode)


def tensor_addresses(
    t: TensorLayout, rows: int, cols: int, store: bool = False, v: TensorView | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index (rows, cols), blockCoord (rows, cols, L), coordInBlock (rows,
    cols, L)) of matrixCoordToTensorElement[WithView].  ``index`` is the
    element index from 'Pointer', or CLIPPED (not loaded / not stored) or
    CLAMP_CONST (load the clamp value).  Undefined-mode out-of-bounds
    coordinates raise: a case must not reach undefined behaviour."""
    L = t.dim
    r = np.arange(rows)[:, None] + np.zeros((1, cols), np.int64)
    c = np.arange(cols)[None, :] + np.zeros((rows, 1), np.int64)
    live = np.ones((rows, cols), bool)
    if v is None:
        index = r * cols + c  # matrixCoordToLinear
    else:
        ro, rs, co, cs = v.clip
        live = (r >= ro) & (r < ro + rs) & (c >= co) & (c < co + cs)
        width = min(cols, cs)
        index = (r - ro) * width + (c - co)
        dims = v.view_dim if v.has_dims else t.span
        vc = [None] * v.dim  # linearToViewCoord
        for d in range(v.dim - 1, -1, -1):
            i = v.perm[d]
            vc[i] = index % dims[i]
            index = index // dims[i]
        if v.has_dims:
            vstride = list(v.view_stride)
        else:
            vstride = [0] * v.dim
            vstride[-1] = 1
            for d in range(v.dim - 2, -1, -1):
                vstride[d] = vstride[d + 1] * t.span[d + 1]
        index = sum(vc[d] * vstride[d] for d in range(v.dim))  # viewCoordToLinear
    span_coord = [None] * L  # linearToSpanCoord
    for d in range(L - 1, -1, -1):
        span_coord[d] = index % t.span[d]
        index = index // t.span[d]
    const = np.zeros((rows, cols), bool)
    block = np.zeros((rows, cols, L), np.int64)
    inblk = np.zeros((rows, cols, L), np.int64)
    for d in range(L):  # spanCoordToTensorCoord
        cc = span_coord[d] + t.offset[d]
        out = (cc < 0) | (cc >= t.layout_dim[d])
        if out[live].any():
            mode = t.clamp
            if mode == "undef":
                raise ValueError("out-of-bounds coordinate with clamp mode Undefined")
            if store or mode == "const":
                const |= out
                cc = np.where(out, 0, cc)
            else:
                cc = np.where(out, _clamp(cc, t.layout_dim[d], mode), cc)
        inblk[..., d] = cc % t.block[d]
        block[..., d] = cc // t.block[d]
    index = sum(block[..., d] * t.stride[d] for d in range(L))  # tensorCoordToLinear
    index = np.where(const, CLAMP_CONST, index)
    if store:
        index = np.where(const, CLIPPED, index)
    index = np.where(live, index, CLIPPED)
    return index.astype(np.int64), block, inblk
