"""The MLIR gpu dialect's subgroup-MMA operations, ``gpu.rotate`` and the
proposed ``gpu.subgroup_mma_rotate``, as plain functions on logical
matrices (MLIR GPUOps.td; the LLVM Discourse RFC "Add GPU operations to permute
data in 2 loaded mma_matrix").

* ``gpu.subgroup_mma_load_matrix %mem[%i, %j] {leadDimension = L}``: the
  element (r, c) of the result comes from the memref element at linear
  offset (i * L + j) + r * L + c; with ``transpose`` it is read column-major,
  from (i * L + j) + c * L + r.  ``store_matrix`` is the inverse.
* ``gpu.subgroup_mma_compute %a, %b, %c``: C + A x B with the result type of
  C.  ``a_transpose`` / ``b_transpose`` say that the operand was loaded with
  ``transpose`` (column-major); paired with such a load the product is the
  one of the logical matrices (this is how upstream lowers and tests them).
  Integer A / B carry their signedness (si8 / ui8); the accumulator is a
  wrapping 32-bit integer.
* ``gpu.subgroup_mma_constant_matrix %s``: every element is %s.
* ``gpu.subgroup_mma_elementwise opType``: :data:`ELEMENTWISE` below, one
  IEEE operation per element (correctly rounded; divf within 2.5 ulp, the
  OpenCL / Vulkan division rule); the rule of each opType, special values
  included, is :data:`ELEMENTWISE_RULES` (:func:`elementwise_special`).
  The op applies to every operand kind its verifier takes (AOp, BOp, COp:
  "since the operation is elementwise, [it] can be applied to the matrix
  without knowing the matrix layout"), so on any kind the result's
  thread-local element i of a lane is the op of the operands' element i of
  that lane (judged that way for AOp / BOp results, which store_matrix does
  not take: ``cts/runs/mlir.py``).
* ``extract_thread_local`` / ``insert_thread_local``: the element->thread map
  is opaque; for subgroup size S the indices 0 .. M*N/S - 1 of all S threads
  cover every element exactly once (:func:`check_thread_map`).
* ``gpu.rotate %v, offset, width``: lane l reads lane
  ((l + offset) & (width - 1)) + (l & ~(width - 1)); ``valid`` is
  l < width, other lanes' values are poison (:func:`gpu_rotate_expected`).
* ``gpu.subgroup_mma_rotate %a, %b, offset`` (PR #139047, superseded),
  realized as its RFC lowering: for every thread-local index i,
  ``select(lane >= offset, a[i], b[i])`` then a subgroup rotate by offset,
  then insert at i.  Per index i, the result over lanes is the window
  [offset, offset + S) of the concatenation (a[i] over lanes) ++ (b[i] over
  lanes) (:func:`mma_rotate_lowered`); with one element per lane in row-major
  lane order this is the RFC's "TA(offset) .. TA(n-1), TB0 .. TB(offset-1)"
  (:func:`mma_rotate_sequence`).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ELEMENTWISE",
    "load_matrix",
    "store_matrix",
    "compute",
    "elementwise",
    "check_thread_map",
    "gpu_rotate_expected",
    "mma_rotate_lowered",
    "mma_rotate_sequence",
    "ELEMENTWISE_RULES",
    "elementwise_special",
    "flush_subnormals",
    "same_bits",
]

# opType -> (arity, operand kind, result kind); "f" float, "i" integer,
# "f16->f32" / "f32->f16" conversions (MLIR GPU dialect, GPUOps.td op descriptions)
ELEMENTWISE: dict[str, tuple[int, str]] = {
    "addf": (2, "f"),
    "mulf": (2, "f"),
    "subf": (2, "f"),
    "maxf": (2, "f"),
    "minf": (2, "f"),
    "divf": (2, "f"),
    "addi": (2, "i"),
    "muli": (2, "i"),
    "subi": (2, "i"),
    "divs": (2, "i"),
    "divu": (2, "i"),
    "negatef": (1, "f"),
    "negates": (1, "i"),
    "extf": (1, "f16->f32"),
    "truncf": (1, "f32->f16"),
}


def _offsets(row: int, col: int, lead: int, rows: int, cols: int, transpose: bool) -> np.ndarray:
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    base = row * lead + col
    return base + (c * lead + r if transpose else r * lead + c)


def load_matrix(
    mem: np.ndarray, row: int, col: int, lead: int, rows: int, cols: int, transpose: bool = False
) -> np.ndarray:
    """(..., size) memory -> (..., rows, cols) logical matrix."""
    return np.asarray(mem)[..., _offsets(row, col, lead, rows, cols, transpose)]


def store_matrix(
    mem: np.ndarray, m: np.ndarray, row: int, col: int, lead: int, transpose: bool = False
) -> np.ndarray:
    """A copy of ``mem`` with the matrix written; other elements unchanged."""
    out = np.array(mem, copy=True)
    rows, cols = m.shape[-2:]
    out[..., _offsets(row, col, lead, rows, cols, transpose)] = m
    return out


def compute(A: np.ndarray, B: np.ndarray, C: np.ndarray, integer: bool) -> np.ndarray:
    """C + A x B on logical values: integers exactly then wrapped to 32 bits
    (signed); floats in float64 (callers use data whose sums are exact)."""
    if integer:
        d = np.matmul(A.astype(np.int64), B.astype(np.int64)) + C.astype(np.int64)
        return ((d + (1 << 31)) % (1 << 32)) - (1 << 31)
    return np.matmul(A.astype(np.float64), B.astype(np.float64)) + C.astype(np.float64)


def elementwise(op: str, args: list[np.ndarray], elem: str) -> np.ndarray:
    """Exact result of ``op`` (float64 for floats, int64 for integers) before
    the one rounding / wrap to the result type ``elem`` the caller applies.
    Integer ops are 32-bit: addi/subi/muli wrap, divs truncates toward
    zero, divu divides the unsigned bit patterns (divisors are non-zero and
    INT_MIN / -1 is excluded by the data)."""
    if op not in ELEMENTWISE:
        raise ValueError(f"unknown opType {op!r}; known: {', '.join(ELEMENTWISE)}")
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op in ("addf", "addi"):
        r = a + b
    elif op in ("subf", "subi"):
        r = a - b
    elif op in ("mulf", "muli"):
        r = a * b
    elif op == "divf":
        with np.errstate(divide="ignore", invalid="ignore"):
            r = a / b
    elif op == "maxf":
        r = np.maximum(a, b)
    elif op == "minf":
        r = np.minimum(a, b)
    elif op == "divs":
        q = np.abs(a) // np.abs(b)
        r = np.where((a < 0) ^ (b < 0), -q, q)
    elif op == "divu":
        r = (a % (1 << 32)) // (b % (1 << 32))
    elif op in ("negatef", "negates"):
        r = -a
    else:  # extf, truncf: the value; the caller rounds to the result type
        r = a
    if ELEMENTWISE[op][1] == "i":
        r = ((np.asarray(r, dtype=np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)
    return r


def check_thread_map(extracted: np.ndarray, logical: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """``extracted`` (S lanes, n indices) values a subgroup extracted from a
    matrix whose logical elements (rows, cols) are all distinct.  Returns the
    map (S, n) -> linear element index (-1 where no element matches) and the
    problems: an element never extracted, or extracted more than once."""
    flat = np.asarray(logical).reshape(-1)
    order = np.argsort(flat, kind="stable")
    pos = np.searchsorted(flat[order], extracted.reshape(-1))
    pos = np.clip(pos, 0, flat.size - 1)
    hit = flat[order][pos] == extracted.reshape(-1)
    idx = np.where(hit, order[pos], -1).reshape(extracted.shape)
    problems = []
    if (idx < 0).any():
        lane, i = np.argwhere(idx < 0)[0]
        problems.append(f"lane {lane} index {i} holds {extracted[lane, i]!r}, not an element of the matrix")
    counts = np.bincount(idx[idx >= 0], minlength=flat.size)
    cols = logical.shape[-1]
    for e in np.flatnonzero(counts != 1)[:4]:
        problems.append(f"element ({e // cols}, {e % cols}) extracted {int(counts[e])} times")
    if idx.size != flat.size:
        problems.append(f"{idx.size} thread-local slots for {flat.size} elements")
    return idx, problems


def gpu_rotate_expected(values: np.ndarray, offset: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """values (S, ...) per lane -> (expected (S, ...), valid (S,))."""
    S = values.shape[0]
    if not (width >= 1 and width & (width - 1) == 0 and 0 <= offset < width and width <= S):
        raise ValueError(f"gpu.rotate needs width a power of two <= {S} and 0 <= offset < width")
    lane = np.arange(S)
    src = ((lane + offset) & (width - 1)) + (lane & ~(width - 1))
    return values[src], lane < width


def mma_rotate_lowered(a_local: np.ndarray, b_local: np.ndarray, offset: int) -> np.ndarray:
    """The RFC lowering on thread-local images (S lanes, n indices): result
    (l, i) = (a[:, i] ++ b[:, i])[l + offset]."""
    S = a_local.shape[0]
    if not 0 <= offset < S:
        raise ValueError(f"offset must be in [0, {S})")
    cat = np.concatenate([a_local, b_local], axis=0)
    return cat[np.arange(S) + offset]


def mma_rotate_sequence(a: np.ndarray, b: np.ndarray, offset: int) -> np.ndarray:
    """The RFC's definition on the element sequences (row-major):
    TA(offset) .. TA(n-1) followed by TB0 .. TB(offset-1), reshaped."""
    n = a.size
    seq = np.concatenate([a.reshape(-1), b.reshape(-1)])[offset : offset + n]
    return seq.reshape(a.shape)


# The rule of each float opType for special values, from the op definitions:
# * the dialect names the opTypes only (GPUOps.td, MMAElementwiseOp: "addf", ..., "extf"); what each
#   means is fixed by the arith op it stands for, the correspondence VectorToGPU uses to produce them
#   (mlir/lib/Conversion/VectorToGPU/VectorToGPU.cpp, convertElementwiseOpToMMA: arith.addf -> addf,
#   arith.mulf, arith.subf, arith.maximumf -> maxf, arith.minimumf -> minf, arith.divf, arith.negf ->
#   negatef, arith.extf -> extf; truncf: arith.truncf) and the lowerings (WmmaOpsToSPIRV: OpFAdd,
#   OpFSub, OpFDiv, OpFNegate, OpFConvert; WmmaOpsToNvvm: llvm.fadd / fmul / fdiv and, for maxf /
#   minf, fcmp ogt / olt + select, NaN if either operand is NaN).
# * arith (mlir/docs/Dialects/ArithOps.md): addf / subf / mulf / divf are IEEE 754 operations,
#   round to nearest even; maximumf / minimumf: "if one of the arguments is NaN, then the result is
#   also NaN", "-0.0 is treated as less than +0.0" (IEEE 754-2019 maximum / minimum); maxnumf /
#   minnumf (IEEE maxNum: the non-NaN operand) are NOT what maxf / minf mean; negf flips the sign
#   (-(+0) = -0); extf is exact; truncf rounds to nearest even (overflow to +-inf, NaN stays NaN).
# * NaN: any NaN result matches any NaN (payload and sign are not specified).
# * subnormals: the IEEE result; a result computed with subnormal inputs and / or outputs flushed to
#   a zero OF THE SAME SIGN is accepted too (the lowerings set no float controls: SPIR-V for Vulkan
#   without DenormPreserve leaves denormals implementation-defined); a flush is reported.
# * The NVVM lowering's maxf (fcmp ogt + select) returns the second operand for (+0, -0): it does not
#   order the zeros as arith.maximumf does; a CUDA failure of the zero tier is that lowering's.
ELEMENTWISE_RULES: dict[str, str] = {
    "addf": "arith.addf: IEEE 754 addition, nearest even; inf + -inf = NaN; (+0) + (-0) = +0",
    "subf": "arith.subf: IEEE 754 subtraction, nearest even; inf - inf = NaN; x - x = +0",
    "mulf": "arith.mulf: IEEE 754 multiplication, nearest even; 0 * inf = NaN; signs multiply",
    "divf": "arith.divf: IEEE 754 division (2.5 ulp on finite quotients); x / +-0 = +-inf; 0/0, inf/inf = NaN",
    "maxf": "arith.maximumf: NaN if either operand is NaN; -0 < +0",
    "minf": "arith.minimumf: NaN if either operand is NaN; -0 < +0",
    "negatef": "arith.negf: the sign flipped, zeros and infinities included",
    "extf": "arith.extf f16 -> f32: exact (subnormal f16 become normal f32)",
    "truncf": "arith.truncf f32 -> f16: nearest even; beyond the f16 range +-inf; NaN stays NaN",
}


def _maximum(a: np.ndarray, b: np.ndarray, lo: bool) -> np.ndarray:
    """IEEE 754-2019 maximum (lo: minimum): NaN-propagating, -0 < +0."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    take_a = (a < b) if lo else (a > b)
    zeros = (a == 0) & (b == 0)
    # equal zeros: maximum prefers the one with no sign bit, minimum the one with it
    a_neg = np.signbit(a)
    take_a = np.where(zeros, a_neg if lo else ~a_neg, take_a | (a == b))
    r = np.where(take_a, a, b)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


def elementwise_special(op: str, args: list[np.ndarray]) -> np.ndarray:
    """The exact result of a float opType (:data:`ELEMENTWISE_RULES`) on
    float64 operands holding the inputs' values, NaN, infinities and signed
    zeros included, before the one rounding to the result type."""
    a = np.asarray(args[0], dtype=np.float64)
    b = np.asarray(args[1], dtype=np.float64) if len(args) > 1 else None
    with np.errstate(all="ignore"):
        if op == "addf":
            return a + b
        if op == "subf":
            return a - b
        if op == "mulf":
            return a * b
        if op == "divf":
            return a / b
        if op in ("maxf", "minf"):
            return _maximum(a, b, op == "minf")
        if op == "negatef":
            return -a
        if op in ("extf", "truncf"):
            return a
    raise ValueError(f"{op!r} is not a float opType; float ones: {', '.join(ELEMENTWISE_RULES)}")


def flush_subnormals(x: np.ndarray, tiny: float) -> np.ndarray:
    """``x`` with every value of magnitude below ``tiny`` (the type's
    smallest normal) replaced by a zero of the same sign."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(np.abs(x) < tiny, np.copysign(0.0, x), x)


def same_bits(
    exp_bits: np.ndarray, got_bits: np.ndarray, exp_nan: np.ndarray, got_nan: np.ndarray
) -> np.ndarray:
    """Equal bit patterns, or both NaN (any NaN matches any NaN)."""
    return (np.asarray(exp_bits) == np.asarray(got_bits)) | (np.asarray(exp_nan) & np.asarray(got_nan))
