"""Case space of subgroup rotate: ``cl_khr_subgroup_rotate`` (OpenCL C) and
``SPV_KHR_subgroup_rotate`` (SPIR-V ``OpGroupNonUniformRotateKHR``).

Tables mirror SPV_KHR_subgroup_rotate and cl_khr_subgroup_rotate:

* OpenCL C gentype: char, uchar, short, ushort, int, uint, long, ulong,
  float, half (cl_khr_fp16), double (cl_khr_fp64); scalars only (the
  built-ins are not declared for vectors).
* SPIR-V Result Type: scalar or vector of integer, float or Boolean, so the
  SPIR-V cases add vectors of 2, 3 and 4 components and Boolean.
* Every power-of-two cluster size up to the subgroup size, plus the plain
  rotate (no ClusterSize); subgroup sizes 4 .. 64 (a device without one
  skips it, naming the size).
* Every case's launches cover all delta classes (0, 1, N-1, N, > N,
  negative; :func:`reference.rotate.delta_values`), one delta per
  work-group, in work-groups of two full subgroups and a partial last one
  (:func:`rotate_launches`): one launch whose partial subgroup has N/2
  work-items (a power of two) and one with 3N/4 (never a power of two, never
  a divisor of N: the only kind of partial subgroup on which "modulo the
  maximum subgroup size" and "modulo the current size" read different active
  lanes).  SPIR-V cases run every delta twice: read from a buffer
  (dynamically uniform) and as a constant operand of the instruction
  (:func:`const_deltas`).  Neither changes the case's kernel, so they are
  not id axes; a failure names the launch, delta and form of the failing
  subgroup.

Three further axes (each in the id):

* SPIR-V vectors of 8 and 16 components (capability Vector16, a Kernel
  capability: OpenCL only), ids ``spirv-float8-...``, ``spirv-uchar16-...``;
* Delta and ClusterSize of 8-, 16- and 64-bit unsigned integer types
  (SPV_KHR_subgroup_rotate: "Delta must be a scalar of integer type, whose
  Signedness operand is 0"; ClusterSize likewise; capabilities Int8 / Int16 /
  Int64), ids ``...-delta8``, ``-delta16``, ``-delta64``; the deltas are the
  classes of :func:`reference.rotate.delta_values` at that width;
* calls inside non-uniform control flow (``...-nonuniform``): only the lanes
  of :func:`nonuniform_active` execute the rotate.  The specs make a value
  read from an invocation that does not execute the instruction undefined
  (SPV_KHR_subgroup_rotate: "the resulting value is undefined" when the
  selected invocation is inactive; cl_khr_subgroup_rotate: the built-ins
  "need not be encountered by all work-items", an inactive source gives an
  undefined value), so only active lanes reading active lanes are checked
  (exactly); lanes outside the branch keep their own value (the kernel's
  else path) and are checked for that.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from cts.space import space
from reference.rotate import delta_values

__all__ = [
    "Launch",
    "rotate_launches",
    "const_deltas",
    "partial_tails",
    "RotateCase",
    "GENTYPES",
    "SUBGROUP_SIZES",
    "SPIRV_VECTOR_WIDTHS",
    "rotate_cases",
    "ROTATE_EXTENSION",
    "SPV_ROTATE_EXTENSION",
    "SPIRV_WIDE_VECTORS",
    "DELTA_BITS",
    "nonuniform_active",
    "NONUNIFORM_RULE",
]

ROTATE_EXTENSION = "cl_khr_subgroup_rotate"
SPV_ROTATE_EXTENSION = "SPV_KHR_subgroup_rotate"


@dataclass(frozen=True)
class GenType:
    """One OpenCL C gentype: C name, element bits, kind, the extension that
    gates it (or "") and the reference element-type name used in messages."""

    name: str
    bits: int
    kind: str  # int | uint | float | bool
    needs: str
    etype: str


GENTYPES: dict[str, GenType] = {
    g.name: g
    for g in (
        GenType("char", 8, "int", "", "i8"),
        GenType("uchar", 8, "uint", "", "u8"),
        GenType("short", 16, "int", "", "i16"),
        GenType("ushort", 16, "uint", "", "u16"),
        GenType("int", 32, "int", "", "i32"),
        GenType("uint", 32, "uint", "", "u32"),
        GenType("long", 64, "int", "", "u64"),
        GenType("ulong", 64, "uint", "", "u64"),
        GenType("float", 32, "float", "", "f32"),
        GenType("half", 16, "float", "cl_khr_fp16", "f16"),
        GenType("double", 64, "float", "cl_khr_fp64", "f64"),
    )
}
# SPIR-V only: OpTypeBool (carried as uchar 0/1 in buffers).
BOOL = GenType("bool", 8, "bool", "", "u8")

SUBGROUP_SIZES = (4, 8, 16, 32, 64)
SPIRV_VECTOR_WIDTHS = (2, 3, 4)
SPIRV_WIDE_VECTORS = (8, 16)  # Vector16 (Kernel)
DELTA_BITS = (8, 16, 64)  # widths of Delta / ClusterSize beyond 32
NONUNIFORM_RULE = "subgroup local id % 3 != 2"


def nonuniform_active(sglid):
    """Which lanes execute the rotate in a ``nonuniform`` case (the kernels'
    branch condition :data:`NONUNIFORM_RULE`): not a power-of-two pattern,
    so sources inside and outside the branch mix for every delta."""
    return sglid % 3 != 2


@dataclass(frozen=True)
class RotateCase:
    api: str  # "opencl_c" | "spirv"
    type: str  # gentype name (or "bool", SPIR-V only)
    width: int  # 1 = scalar; SPIR-V vectors 2, 3, 4
    sg: int  # required subgroup size
    cluster: int  # 0 = plain rotate (no ClusterSize)
    dbits: int = 32  # width of the Delta / ClusterSize integer type (SPIR-V)
    flow: str = ""  # "" every lane calls the rotate; "nonuniform": only nonuniform_active lanes
    family: str = "subgroup_rotate"

    @property
    def gentype(self) -> GenType:
        return BOOL if self.type == "bool" else GENTYPES[self.type]

    @property
    def tname(self) -> str:
        return self.type if self.width == 1 else f"{self.type}{self.width}"

    @property
    def op(self) -> str:
        return "clustered" if self.cluster else "rotate"

    @property
    def id(self) -> str:
        op = f"c{self.cluster}" if self.cluster else "rotate"
        tail = (f"-delta{self.dbits}" if self.dbits != 32 else "") + (f"-{self.flow}" if self.flow else "")
        return f"{self.api}-{self.tname}-sg{self.sg}-{op}{tail}"

    @property
    def kernel_group(self) -> str:
        """The cases one program holds (the OpenCL backend's kernels,
        ``cts.backends.opencl_rotate``): OpenCL C, one program per gentype and
        control flow with every required size's kernel; SPIR-V, one module per
        type, width, subgroup size, Delta width and control flow with every
        cluster size.  A sweep's shards keep a group together, so each program
        is built by one shard only (a hint for placement: a wrong group costs
        time, never a verdict)."""
        flow = self.flow or "uniform"
        if self.api == "opencl_c":
            return f"{self.api}-{self.type}-{flow}"
        return f"{self.api}-{self.tname}-sg{self.sg}-d{self.dbits}-{flow}"

    @property
    def rule(self) -> str:
        """Which wording of the source rule applies (cl_khr_subgroup_rotate)."""
        return self.api

    @property
    def extension(self) -> str:
        return ROTATE_EXTENSION if self.api == "opencl_c" else SPV_ROTATE_EXTENSION

    @property
    def requirements(self) -> tuple[str, ...]:
        """Device extensions the case needs besides the rotate extension."""
        g = self.gentype.needs
        return (g,) if g else ()

    @property
    def spec_row(self) -> str:
        if self.api == "opencl_c":
            if self.cluster:
                return f"sub_group_clustered_rotate({self.type}, int, {self.cluster})"
            return f"sub_group_rotate({self.type}, int)"
        cs = f" ClusterSize {self.cluster}" if self.cluster else ""
        d = f" Delta/ClusterSize u{self.dbits}" if self.dbits != 32 else ""
        flow = " in non-uniform control flow" if self.flow else ""
        return f"OpGroupNonUniformRotateKHR {self.tname} Subgroup{cs}{d}{flow}"

    @property
    def axes(self) -> dict:
        return {
            "api": self.api,
            "type": self.type,
            "width": self.width,
            "sg": self.sg,
            "cluster": self.cluster,
            "dbits": self.dbits,
            "flow": self.flow or "uniform",
        }


def _clusters(sg: int) -> list[int]:
    """0 (plain) and every power of two 1 .. sg."""
    out, c = [0], 1
    while c <= sg:
        out.append(c)
        c *= 2
    return out


def rotate_cases(tiers: tuple[str, ...] = ()) -> list[RotateCase]:
    """OpenCL C: 11 gentypes x (plain + clusters) per subgroup size.
    SPIR-V: the same scalars plus Boolean, and vectors of 2, 3, 4 components
    with and without ClusterSize (cluster 2).  Data tiers do not apply (the
    data is a distinct bit pattern per invocation)."""
    del tiers
    cl = (
        space()
        .combine("api", ["opencl_c"])
        .combine("type", list(GENTYPES))
        .combine("width", [1])
        .combine("sg", SUBGROUP_SIZES)
        .expand("cluster", lambda p: _clusters(p.sg))
    )
    spv_scalar = (
        space()
        .combine("api", ["spirv"])
        .combine("type", [*GENTYPES, "bool"])
        .combine("width", [1])
        .combine("sg", SUBGROUP_SIZES)
        .expand("cluster", lambda p: _clusters(p.sg))
    )
    spv_vec = (
        space()
        .combine("api", ["spirv"])
        .combine("type", [*GENTYPES, "bool"])
        .combine("width", SPIRV_VECTOR_WIDTHS)
        .combine("sg", SUBGROUP_SIZES)
        .combine("cluster", [0, 2])
    )
    pts = [*cl, *spv_scalar, *spv_vec]
    out = [RotateCase(p.api, p.type, p.width, p.sg, p.cluster) for p in pts]
    return out + _issue23_cases()


def _issue23_cases() -> list[RotateCase]:
    """The three further axes (module docstring): vectors of 8 and 16 of every
    type at subgroup size 8 (plain) and 32 (ClusterSize 2); int with 8-,
    16- and 64-bit Delta / ClusterSize at sizes 8 and 64, plain and cluster 2;
    int, ulong and float in non-uniform control flow, both APIs, every size,
    plain and cluster 4."""
    wide = (
        space()
        .combine("type", [*GENTYPES, "bool"])
        .combine("width", SPIRV_WIDE_VECTORS)
        .expand_many(lambda p: ({"sg": sg, "cluster": c} for sg, c in ((8, 0), (32, 2))))
    )
    out = [RotateCase("spirv", p.type, p.width, p.sg, p.cluster) for p in wide]
    # subgroup sizes 8 (Mesa lavapipe's) and 64 (the largest: deltas up to 2N+3 = 131 pass 8 bits' 127)
    delta = space().combine("dbits", DELTA_BITS).combine("sg", [8, 64]).combine("cluster", [0, 2])
    out += [RotateCase("spirv", "int", 1, p.sg, p.cluster, dbits=p.dbits) for p in delta]
    nonuni = (
        space()
        .combine("api", ["opencl_c", "spirv"])
        .combine("type", ["int", "ulong", "float"])
        .combine("sg", SUBGROUP_SIZES)
        .combine("cluster", [0, 4])  # in a cluster of 4, lanes 0, 1, 3 execute: an uneven mix
    )
    out += [RotateCase(p.api, p.type, 1, p.sg, p.cluster, flow="nonuniform") for p in nonuni]
    return out


def partial_tails(sg: int) -> tuple[int, ...]:
    """Sizes of the partial last subgroup of each launch: N/2 (a power of
    two) and 3N/4 (not one, and not a divisor of N)."""
    return tuple(dict.fromkeys(t for t in (sg // 2, 3 * sg // 4) if t > 0))


def const_deltas(sg: int, cluster: int, bits: int = 32) -> list[int]:
    """The constant Delta operands a SPIR-V module holds for one (subgroup
    size, cluster) variant, in the order the module numbers them (1, 2, ...):
    the deltas of :func:`reference.rotate.delta_values` (Delta of ``bits``)."""
    return [d for _, d in delta_values(sg, cluster or None, bits)]


@dataclass(frozen=True)
class Launch:
    """One launch of a case: ``groups`` work-groups of ``local`` work-items
    (two full subgroups and a partial one of ``tail``), work-group g rotating
    by ``deltas[g]`` (class, value); ``const[g]`` is 0 where the delta is read
    from a buffer, else the 1-based number of the constant operand
    (:func:`const_deltas`) the module uses instead."""

    tail: int
    local: int
    deltas: tuple[tuple[str, int], ...]
    const: tuple[int, ...]

    @property
    def groups(self) -> int:
        return len(self.deltas)

    def form(self, g: int) -> str:
        return "constant" if self.const[g] else "dynamically uniform"


def rotate_launches(case) -> list[Launch]:
    """The launches of a case, one per partial-subgroup size of
    :func:`partial_tails`; SPIR-V cases repeat every delta as a constant."""
    return list(_launches(case.api, case.sg, case.cluster, case.dbits))


@lru_cache(maxsize=256)
def _launches(api: str, sg: int, cluster: int, bits: int = 32) -> tuple[Launch, ...]:
    """:func:`rotate_launches` of every case with this api, subgroup size,
    cluster and Delta width (the same Launch objects each time)."""
    deltas = tuple(delta_values(sg, cluster or None, bits))
    dyn = (0,) * len(deltas)
    if api == "spirv":
        deltas, const = deltas + deltas, dyn + tuple(range(1, len(deltas) + 1))
    else:
        const = dyn
    return tuple(Launch(t, 2 * sg + t, deltas, const) for t in partial_tails(sg))
