"""Case space of the MLIR gpu dialect's subgroup-MMA operations, ``gpu.rotate``
and the proposed ``gpu.subgroup_mma_rotate`` (MLIR GPUOps.td; the LLVM
Discourse RFC "Add GPU operations to permute data in 2 loaded mma_matrix").

Element types are the verifier's list (GPUDialect.cpp, !gpu.mma_matrix): si8, ui8, i32, f16, f32, f64.
Shapes are the WMMA-style ones the upstream lowerings use: (m, n, k) =
16x16x16 for f16 / si8 / ui8 operands, 16x16x8 for f32, 8x8x4 for f64.

ops (each case runs a small program; see ``cts/runs/mlir.py``):

* ``load_store``   COp load (leadDimension tight / padded, transpose) and store
                   (transpose) round trip, with a non-zero base index.
* ``compute``      load A, B (transpose as a_transpose / b_transpose), C; compute;
                   store, for every (A, B, C) type combination.
* ``constant``     constant_matrix for COp (stored) and AOp / BOp (through compute).
* ``elementwise``  every opType on every type it applies to.
* ``thread_local`` extract_thread_local of every index on every lane covers every
                   element exactly once; insert_thread_local of new values
                   round-trips (stored, or through compute with a selector matrix).
* ``gpu_rotate``   offset / width / valid flag, widths 1 .. subgroup size; scalar
                   and 1-D vector values (vector<4xf32>, vector<2xi32>, vector<3xf16>).
* ``mma_rotate``   the proposal realized as its lowering (extract, select, subgroup
                   rotate, insert), offsets 0, 1, S/2, S-1.

Device shapes (:data:`DEVICE_SHAPES`): the same ops again on the shapes real
cooperative-matrix devices report (8x8x8 on Mesa lavapipe; 16x8x16 f16 and
16x16x32 int8 on NVIDIA), so the MLIR -> SPIR-V path has cases a device can
run; their ids end in the shape (``-m8n8k8``).  Thread-local and rotate
programs depend on the subgroup size (n = rows * cols / S indices per lane):
they come at S = 8, 16 and 32 (ids ``-sg8``; 8 and 32 on device shapes); the other ops do not look at
lanes, so their nominal S = 16 runs at any device subgroup size.
"""

from __future__ import annotations

from dataclasses import dataclass

from cts.space import space
from reference.mlir import ELEMENTWISE

__all__ = [
    "MlirCase",
    "mlir_cases",
    "SHAPES",
    "DEVICE_SHAPES",
    "COMPUTE_TYPES",
    "MLIR_OPS",
    "ROTATE_OPS",
    "LANE_OPS",
]

SHAPES = {"f16": (16, 16, 16), "si8": (16, 16, 16), "ui8": (16, 16, 16), "f32": (16, 16, 8), "f64": (8, 8, 4)}
# (A, B, C) combinations of gpu.subgroup_mma_compute
COMPUTE_TYPES = (
    ("f16", "f16", "f16"),
    ("f16", "f16", "f32"),
    ("si8", "si8", "i32"),
    ("ui8", "ui8", "i32"),
    ("si8", "ui8", "i32"),
    ("ui8", "si8", "i32"),
    ("f32", "f32", "f32"),
    ("f64", "f64", "f64"),
)
C_TYPES = ("f16", "f32", "i32", "f64")
# the C type a matrix of A / B type is observed through (compute with a selector)
OBSERVE_C = {"f16": "f32", "si8": "i32", "ui8": "i32", "f32": "f32", "f64": "f64"}
MLIR_OPS = ("load_store", "compute", "constant", "elementwise", "thread_local", "gpu_rotate", "mma_rotate")
ROTATE_OPS = ("gpu_rotate", "mma_rotate")
LANE_OPS = ("thread_local", "gpu_rotate", "mma_rotate")  # programs whose lane arithmetic needs S
# name -> ((m, n, k), A/B types, C types): shapes devices report (Vulkan specification, Cooperative
# Matrices; H100, lavapipe)
DEVICE_SHAPES = {
    "m8n8k8": ((8, 8, 8), ("f16", "si8", "ui8"), ("f16", "f32", "i32")),
    "m16n8k16": ((16, 8, 16), ("f16",), ("f16", "f32")),
    "m16n16k32": ((16, 16, 32), ("si8", "ui8"), ("i32",)),
}
# gpu.rotate on vector<VxT> values (subgroup size 16, every width and offset class)
GPU_ROTATE_VECTORS = (("f32", 4), ("i32", 2), ("f16", 3))
# gpu.rotate's verifier (mlir-opt 22) takes any integer or float, or a fixed 1-D vector of them
# (not index, not a 2-D or scalable vector): the element types of the targets besides i32 / f32 / f16
# (signless i1, i8, i16, i64; bf16, f64), at subgroup size 8 (widths 1, 4, 8; the size Mesa lavapipe and
# Intel CPUs run), and vectors beyond
# the first three: wider (8, 16 components: OpenCL C float8 / char16; no SPIR-V Shader type) and of
# the new element types.  (i128, f8E4M3FN... verify too but no target has a type for them.)
GPU_ROTATE_TYPES = ("i1", "i8", "i16", "i64", "bf16", "f64")
GPU_ROTATE_WIDE_VECTORS = (("f32", 8), ("i8", 16), ("i16", 4), ("i64", 2), ("f64", 2), ("bf16", 2), ("i1", 4))
# subgroup sizes beyond 8 .. 32: 4 (every width) and 64 (widths 1, 2, 32, 64)
GPU_ROTATE_SIZES = {4: (1, 2, 4), 64: (1, 2, 32, 64)}
ELEMENTWISE_TYPES = {"f": ("f16", "f32", "f64"), "i": ("i32",), "f16->f32": ("f16",), "f32->f16": ("f32",)}
# data tiers of the float elementwise opTypes beyond the exact data (rules in
# reference.mlir.ELEMENTWISE_RULES): NaN operands, signed zeros, infinities, subnormals
ELEMENTWISE_TIERS = ("nan", "zero", "inf", "subnormal")
# operand kinds beyond COp that elementwise's verifier takes: A and B matrices (judged through
# extract_thread_local: store_matrix takes COp only), on the A / B types f16 and f32, and i32
ELEMENTWISE_AB_TYPES = {"f": ("f16", "f32"), "i": ("i32",), "f16->f32": ("f16",), "f32->f16": ("f32",)}


@dataclass(frozen=True)
class MlirCase:
    op: str
    sg: int
    elem: str = ""  # main element type (A type for compute, C type for C ops)
    b: str = ""
    c: str = ""
    tag: str = ""  # AOp | BOp | COp
    lead: str = "tight"  # tight | padded
    t1: bool = False  # load transpose / a_transpose
    t2: bool = False  # store transpose / b_transpose
    optype: str = ""
    offset: int = 0
    width: int = 0
    vec: int = 0  # gpu.rotate on a 1-D vector value of this many components (0: scalar)
    shape: str = ""  # a DEVICE_SHAPES name; "" = the type's SHAPES entry
    data: str = ""  # elementwise: a tier of ELEMENTWISE_TIERS; compute: "accprec"; "" = the exact data
    family: str = "mlir_mma"

    # --- shapes ------------------------------------------------------------
    @property
    def mnk(self) -> tuple[int, int, int]:
        """(m, n, k): by the A type for compute and A / B matrices, by the C
        type otherwise (8x8 for f64, 16x16 for the rest); a device shape
        when the case names one."""
        if self.shape:
            return DEVICE_SHAPES[self.shape][0]
        if self.elem in SHAPES and (self.op == "compute" or self.tag in ("AOp", "BOp")):
            return SHAPES[self.elem]
        return SHAPES["f64"] if self.elem == "f64" else SHAPES["f16"]

    def tag_shape(self, tag: str) -> tuple[int, int]:
        m, n, k = self.mnk
        return {"AOp": (m, k), "BOp": (k, n), "COp": (m, n)}[tag]

    # --- identity ----------------------------------------------------------
    @property
    def id(self) -> str:
        tail = f"-sg{self.sg}" if self.op == "thread_local" and self.sg != 16 else ""
        return self._id + tail + (f"-{self.shape}" if self.shape else "")

    @property
    def _id(self) -> str:
        o = self.op
        if o == "load_store":
            return f"load_store-{self.elem}-{self.lead}-load{'T' if self.t1 else 'N'}-store{'T' if self.t2 else 'N'}"
        if o == "compute":
            at = "aT" if self.t1 else "aN"
            bt = "bT" if self.t2 else "bN"
            data = f"-{self.data}" if self.data else ""
            return f"compute-{self.elem}_{self.b}_{self.c}-{at}-{bt}-{self.lead}{data}"
        if o == "constant":
            return f"constant-{self.tag}-{self.elem}"
        if o == "elementwise":
            kind = "" if self.tag == "COp" else f"-{self.tag}"
            return f"elementwise-{self.optype}-{self.elem}{kind}" + (f"-{self.data}" if self.data else "")
        if o == "thread_local":
            return f"thread_local-{self.tag}-{self.elem}"
        if o == "gpu_rotate":
            v = f"x{self.vec}" if self.vec else ""
            return f"gpu_rotate-{self.elem}{v}-sg{self.sg}-w{self.width}-off{self.offset}"
        return f"mma_rotate-{self.tag}-{self.elem}-sg{self.sg}-off{self.offset}"

    @property
    def spec_row(self) -> str:
        names = {
            "load_store": "gpu.subgroup_mma_load_matrix / store_matrix",
            "compute": "gpu.subgroup_mma_compute",
            "constant": "gpu.subgroup_mma_constant_matrix",
            "elementwise": f"gpu.subgroup_mma_elementwise {self.optype}",
            "thread_local": "gpu.subgroup_mma_extract_thread_local / insert_thread_local",
            "gpu_rotate": "gpu.rotate",
            "mma_rotate": "gpu.subgroup_mma_rotate (proposed, RFC lowering)",
        }
        return names[self.op]

    @property
    def axes(self) -> dict:
        return {
            "op": self.op,
            "sg": self.sg,
            "elem": self.elem,
            "b": self.b,
            "c": self.c,
            "tag": self.tag,
            "lead": self.lead,
            "t1": self.t1,
            "t2": self.t2,
            "optype": self.optype,
            "offset": self.offset,
            "width": self.width,
            "vec": self.vec,
            "data": self.data or "exact",
            "shape": self.shape or "x".join(map(str, self.mnk)),
        }


def _pow2_upto(n: int) -> list[int]:
    out, w = [], 1
    while w <= n:
        out.append(w)
        w *= 2
    return out


def mlir_cases(tiers: tuple[str, ...] = ()) -> list[MlirCase]:
    """Every op of the MLIR GPU dialect's GPUOps.td and the RFC on its axes (data tiers do not
    apply: every case uses exactly representable, distinct data)."""
    tiers = tuple(tiers)
    out: list[MlirCase] = []
    for p in (
        space()
        .combine("elem", C_TYPES)
        .combine("lead", ("tight", "padded"))
        .combine("t1", (False, True))
        .combine("t2", (False, True))
    ):
        out.append(MlirCase("load_store", 16, p.elem, tag="COp", lead=p.lead, t1=p.t1, t2=p.t2))
    for p in (
        space()
        .expand_many(lambda p: ({"a": a, "b": b, "c": c} for a, b, c in COMPUTE_TYPES))
        .combine("t1", (False, True))
        .combine("t2", (False, True))
        .combine("lead", ("tight", "padded"))
    ):
        out.append(MlirCase("compute", 16, p.a, p.b, p.c, lead=p.lead, t1=p.t1, t2=p.t2))
    for c in C_TYPES:
        out.append(MlirCase("constant", 16, c, tag="COp"))
    for tag in ("AOp", "BOp"):
        for a in ("f16", "si8", "f64"):
            out.append(MlirCase("constant", 16, a, a, OBSERVE_C[a], tag=tag))
    for op, (_, kind) in ELEMENTWISE.items():
        for t in ELEMENTWISE_TYPES[kind]:
            out.append(MlirCase("elementwise", 16, t, tag="COp", optype=op))
    out += _elementwise_more(tiers)
    out += _compute_accprec(tiers)
    for tag in ("AOp", "BOp"):
        for a in ("f16", "si8", "f32", "f64"):
            out.append(MlirCase("thread_local", 16, a, a, OBSERVE_C[a], tag=tag))
    for c in C_TYPES:
        out.append(MlirCase("thread_local", 16, c, tag="COp"))
    for t in ("i32", "f32", "f16"):
        for sg in (8, 16, 32):
            for w in _pow2_upto(sg):
                for off in sorted({0, 1, w - 1} & set(range(w))):
                    out.append(MlirCase("gpu_rotate", sg, t, offset=off, width=w))
    for sg in (8, 32):  # the thread-local map at other subgroup sizes
        for tag in ("AOp", "BOp"):
            for a in ("f16", "si8", "f32", "f64"):
                if _fits(SHAPES[a], tag, sg):
                    out.append(MlirCase("thread_local", sg, a, a, OBSERVE_C[a], tag=tag))
        for c in C_TYPES:
            out.append(MlirCase("thread_local", sg, c, tag="COp"))
    for t, vec in GPU_ROTATE_VECTORS:  # value: "integer, float or 1-D vector" (gpu.rotate)
        for w in _pow2_upto(16):
            for off in sorted({0, 1, w - 1} & set(range(w))):
                out.append(MlirCase("gpu_rotate", 16, t, offset=off, width=w, vec=vec))
    out += _gpu_rotate_more()
    for tag, t in (("AOp", "f16"), ("BOp", "f16"), ("COp", "f32"), ("COp", "i32")):
        for sg in (8, 16, 32):
            for off in sorted({0, 1, sg // 2, sg - 1}):
                out.append(MlirCase("mma_rotate", sg, t, tag=tag, offset=off))
    for name in DEVICE_SHAPES:
        out += _device_shape_cases(name)
    return out


def _elementwise_more(tiers: tuple[str, ...]) -> list[MlirCase]:
    """Elementwise on A and B matrices (exact data) and the float opTypes on
    C matrices under the special data tiers; the tiers come when
    the run asks for ``special`` (or names no tier)."""
    out: list[MlirCase] = []
    for op, (_, kind) in ELEMENTWISE.items():
        for tag in ("AOp", "BOp"):
            for t in ELEMENTWISE_AB_TYPES[kind]:
                out.append(MlirCase("elementwise", 16, t, tag=tag, optype=op))
    if tiers and "special" not in tiers:
        return out
    for data in ELEMENTWISE_TIERS:
        for op, (_, kind) in ELEMENTWISE.items():
            for t in ELEMENTWISE_TYPES[kind] if kind != "i" else ():
                out.append(MlirCase("elementwise", 16, t, tag="COp", optype=op, data=data))
    return out


def _gpu_rotate_more() -> list[MlirCase]:
    """gpu.rotate on the rest of what its verifier accepts: the
    element types of :data:`GPU_ROTATE_TYPES` and the vectors of
    :data:`GPU_ROTATE_WIDE_VECTORS` at subgroup size 8, and i32 / f32 / f16
    at subgroup sizes 4 and 64 (:data:`GPU_ROTATE_SIZES`)."""
    out: list[MlirCase] = []
    for t in GPU_ROTATE_TYPES:
        for w in (1, 4, 8):
            for off in sorted({0, 1, w - 1} & set(range(w))):
                out.append(MlirCase("gpu_rotate", 8, t, offset=off, width=w))
    for t, vec in GPU_ROTATE_WIDE_VECTORS:
        for w in (4, 8):
            for off in (1, w - 1):
                out.append(MlirCase("gpu_rotate", 8, t, offset=off, width=w, vec=vec))
    for sg, widths in GPU_ROTATE_SIZES.items():
        for t in ("i32", "f32", "f16"):
            for w in widths:
                for off in sorted({0, 1, w - 1} & set(range(w))):
                    out.append(MlirCase("gpu_rotate", sg, t, offset=off, width=w))
    return out


def _fits(mnk: tuple[int, int, int], tag: str, sg: int) -> bool:
    """The matrix of ``tag`` splits into whole thread-local values per lane."""
    m, n, k = mnk
    size = {"AOp": m * k, "BOp": k * n, "COp": m * n}[tag]
    return size % sg == 0 and size >= sg


def _observable(mnk: tuple[int, int, int], tag: str) -> bool:
    """An A (B) matrix is seen through A x I (I x B), which shows all of it
    only when K <= N (K <= M)."""
    m, n, k = mnk
    return tag == "COp" or k <= (n if tag == "AOp" else m)


def _distinct_ok(elem: str, count: int) -> bool:
    """The thread-local checks need ``count`` distinct values of ``elem``."""
    return count <= {"si8": 256, "ui8": 256}.get(elem, 4096)


def elementwise_result(optype: str, elem: str) -> str:
    """The element type of an elementwise result (extf widens, truncf narrows)."""
    return {"extf": "f32", "truncf": "f16"}.get(optype, elem)


def _compute_accprec(tiers: tuple[str, ...]) -> list[MlirCase]:
    """gpu.subgroup_mma_compute of every float (A, B, C) on the ``accprec``
    data (reference.data.accprec_operands: every partial sum needs all the
    bits of C's type), each transposition, tight leading dimensions; on the
    type's own shape and on the device shapes that list it.  The tier comes
    when the run asks for it (or names no tier)."""
    if tiers and "accprec" not in tiers:
        return []
    out = []
    shapes = [("", None)] + [(name, v) for name, v in DEVICE_SHAPES.items()]
    for a, b, c in COMPUTE_TYPES:
        if c == "i32":
            continue
        for name, v in shapes:
            if v is not None and not (a in v[1] and b in v[1] and c in v[2]):
                continue
            for t1 in (False, True):
                for t2 in (False, True):
                    out.append(MlirCase("compute", 16, a, b, c, t1=t1, t2=t2, shape=name, data="accprec"))
    return out


def _device_shape_cases(name: str) -> list[MlirCase]:
    """The ops on one device shape: its A/B types and C types only."""
    mnk, ab, cs = DEVICE_SHAPES[name]
    m, n, k = mnk
    size = {"AOp": m * k, "BOp": k * n, "COp": m * n}
    out: list[MlirCase] = []
    for c in cs:
        for lead in ("tight", "padded"):
            for t1 in (False, True):
                for t2 in (False, True):
                    out.append(MlirCase("load_store", 16, c, tag="COp", lead=lead, t1=t1, t2=t2, shape=name))
    for a, b, c in COMPUTE_TYPES:
        if a in ab and b in ab and c in cs:
            for t1 in (False, True):
                for t2 in (False, True):
                    for lead in ("tight", "padded"):
                        out.append(MlirCase("compute", 16, a, b, c, lead=lead, t1=t1, t2=t2, shape=name))
    observable = [a for a in ab if OBSERVE_C[a] in cs]
    for c in cs:
        out.append(MlirCase("constant", 16, c, tag="COp", shape=name))
    for tag in ("AOp", "BOp"):
        for a in observable:
            if _observable(mnk, tag):
                out.append(MlirCase("constant", 16, a, a, OBSERVE_C[a], tag=tag, shape=name))
    for op, (_, kind) in ELEMENTWISE.items():
        src = {"f16->f32": "f16", "f32->f16": "f32"}.get(kind)
        for t in ELEMENTWISE_TYPES[kind]:
            if t in cs and (src is None or {"f16", "f32"} <= set(cs)):
                out.append(MlirCase("elementwise", 16, t, tag="COp", optype=op, shape=name))
                # the special tiers on one device shape with an f32 C (Mesa lavapipe's m8n8k8)
                if name == "m8n8k8" and kind in ("f", "f16->f32") and elementwise_result(op, t) == "f32":
                    out += [
                        MlirCase("elementwise", 16, t, tag="COp", optype=op, shape=name, data=d)
                        for d in ELEMENTWISE_TIERS
                    ]
        if kind == "f" and "f16" in ab and "f16" in cs:  # A / B matrices of the device's A type
            out += [MlirCase("elementwise", 16, "f16", tag=g, optype=op, shape=name) for g in ("AOp", "BOp")]
    rotated = [("AOp", ab[0]), ("BOp", ab[0])] + [("COp", c) for c in cs]
    for sg in (8, 32):  # lavapipe's (and Intel's) size, NVIDIA's (and AMD wave32)
        for tag in ("AOp", "BOp"):
            for a in observable:
                if _fits(mnk, tag, sg) and _observable(mnk, tag) and _distinct_ok(a, size[tag]):
                    out.append(MlirCase("thread_local", sg, a, a, OBSERVE_C[a], tag=tag, shape=name))
        for c in cs:
            if _fits(mnk, "COp", sg):
                out.append(MlirCase("thread_local", sg, c, tag="COp", shape=name))
        for tag, t in rotated:
            if _fits(mnk, tag, sg) and _distinct_ok(t, 2 * size[tag]):
                for off in sorted({0, 1, sg // 2, sg - 1}):
                    out.append(MlirCase("mma_rotate", sg, t, tag=tag, offset=off, shape=name))
    return out
