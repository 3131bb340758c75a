"""Case space of the cooperative-matrix family (SPV_KHR_cooperative_matrix, VK_KHR_cooperative_matrix,
cl_khr_cooperative_matrix draft).

Sources of the space
* ``VkCooperativeMatrixPropertiesKHR`` entries (Vulkan specification, Cooperative Matrices): either the
  ones a real device reports (``VulkanBackend.coop_entries()``) or a built-in
  property profile, data in ``cts/profiles/*.json`` (``--coop-profile NAME``).
* The matrix *types* an entry allows: A = M x K of AType, B = K x N of BType,
  accumulator = M x N of CType or ResultType (Vulkan specification, Cooperative Matrices, SPIR-V
  environment rule).  Every operation other than MulAdd is enumerated per
  matrix type (deduplicated over entries), MulAdd per entry.

Operations (SPV_KHR_cooperative_matrix):
``length``, ``access`` (extract/insert over the length), ``splat`` (constant
and composite construct), ``load`` / ``store`` (RowMajor / ColumnMajor,
tight / padded / zero stride, storage buffer / workgroup memory), the
element-wise ops ``add sub mul div neg scale``, ``convert`` between component
types of one use and shape, ``muladd`` (every entry; signed bits exactly when
the type is signed; SaturatingAccumulation only where reported), ``chain``
(four MulAdds over K) and ``gemm`` (tiled product of larger matrices).

APIs: ``vk`` (GLSL GL_KHR_cooperative_matrix -> SPIR-V, Vulkan), ``clspv``
(SPIR-V with the Kernel capability for OpenCL devices advertising
``cl_khr_cooperative_matrix``, draft; Subgroup scope only, no bf16, no
OpMatrixTimesScalar) and ``clc`` (OpenCL C ``coop_mat`` types of the Clang RFC:
load, store, mulAdd, + - * / unary -, matrix * scalar).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from cts.space import space
from reference.data import accprec_type
from reference.dtypes import etype

__all__ = [
    "owner_from_mapping",
    "CoopEntry",
    "CoopProfile",
    "CoopCase",
    "MatType",
    "PROFILES_DIR",
    "load_profile",
    "profile_names",
    "matrix_types",
    "coop_cases",
    "VK_COMPONENT",
    "COOP_EXTENSION",
    "CHAIN",
    "GEMM_TILES",
    "VARIANTS",
    "case_comp",
]

COOP_EXTENSION = "VK_KHR_cooperative_matrix"
PROFILES_DIR = Path(__file__).resolve().parent.parent / "profiles"
CHAIN = 4  # MulAdds chained over K in the ``chain`` op
GEMM_TILES = (2, 2, 4)  # (tiles along M, along N, along K) of the ``gemm`` op

# VkComponentTypeKHR (Vulkan specification, Cooperative Matrices) -> suite type name
VK_COMPONENT: dict[int, str] = {
    0: "f16",
    1: "f32",
    2: "f64",
    3: "i8",
    4: "i16",
    5: "i32",
    6: "i64",
    7: "u8",
    8: "u16",
    9: "u32",
    10: "u64",
    1000141000: "bf16",
}
SCOPES = {1: "device", 2: "workgroup", 3: "subgroup", 5: "queuefamily"}
SCOPE_ID = {"subgroup": "sg", "workgroup": "wg", "device": "dev", "queuefamily": "qf"}


@dataclass(frozen=True)
class CoopEntry:
    """One VkCooperativeMatrixPropertiesKHR / cl_device_cooperative_matrix_variant_khr."""

    M: int
    N: int
    K: int
    A: str
    B: str
    C: str
    R: str
    sat: bool = False
    scope: str = "subgroup"

    @property
    def tag(self) -> str:
        s = "sat" if self.sat else "nosat"
        return f"m{self.M}n{self.N}k{self.K}-{self.A}_{self.B}_{self.C}_{self.R}-{s}-{SCOPE_ID.get(self.scope, self.scope)}"

    @property
    def is_int(self) -> bool:
        return not etype(self.A).is_float

    @property
    def signed_bits(self) -> int:
        """Cooperative Matrix Operands a conforming module must carry
        (Vulkan specification, Cooperative Matrices): Signed bit iff the type is a signed integer,
        SaturatingAccumulation iff the entry says so."""
        bits = 0
        for bit, t in ((1, self.A), (2, self.B), (4, self.C), (8, self.R)):
            if etype(t).kind == "int":
                bits |= bit
        return bits | (0x10 if self.sat else 0)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CoopProfile:
    name: str
    description: str
    subgroup_size: int
    entries: tuple[CoopEntry, ...]


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.json"))


# Limits a property table is checked against before any case is built from it: the largest
# matrix dimension a device reports today is 256 (NV_cooperative_matrix2 flexible dimensions);
# beyond it one case's host buffers reach gigabytes and fail as a MemoryError, not a verdict.
MAX_DIM = 256
MAX_SUBGROUP = 1024
_ENTRY_KEYS = {"M", "N", "K", "A", "B", "C", "R", "sat", "scope"}


def _check_entry(i: int, e) -> CoopEntry:
    """One profile entry, checked field by field (ValueError naming it)."""
    if not isinstance(e, dict):
        raise ValueError(f"entries[{i}] must be an object")
    unknown = sorted(set(e) - _ENTRY_KEYS)
    missing = sorted({"M", "N", "K", "A", "B", "C", "R"} - set(e))
    if unknown or missing:
        raise ValueError(f"entries[{i}]: " + "; ".join(
            ([f"unknown keys {', '.join(unknown)}"] if unknown else [])
            + ([f"missing keys {', '.join(missing)}"] if missing else [])
        ))  # fmt: skip
    for k in ("M", "N", "K"):
        v = e[k]
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"entries[{i}].{k} must be an integer, got {v!r}")
        if not 1 <= v <= MAX_DIM:
            raise ValueError(f"entries[{i}].{k} = {v}: must be in 1..{MAX_DIM}")
    for k in ("A", "B", "C", "R"):
        if not isinstance(e[k], str):
            raise ValueError(f"entries[{i}].{k} must be a type name, got {e[k]!r}")
        try:
            etype(e[k])
        except (KeyError, ValueError):
            raise ValueError(f"entries[{i}].{k}: unknown component type {e[k]!r}") from None
    if not isinstance(e.get("sat", False), bool):
        raise ValueError(f"entries[{i}].sat must be true or false, got {e['sat']!r}")
    if e.get("scope", "subgroup") not in SCOPE_ID:
        raise ValueError(f"entries[{i}].scope {e['scope']!r}: known scopes are {', '.join(SCOPE_ID)}")
    return CoopEntry(**e)


@cache
def load_profile(name: str) -> CoopProfile:
    """A built-in property profile (``cts/profiles/NAME.json``) or a path to
    one, checked before any case is built from it: a malformed profile is a
    one-line usage error, never a device verdict."""
    p = Path(name)
    if not p.suffix:
        p = PROFILES_DIR / f"{name}.json"
    if not p.is_file():
        raise ValueError(f"unknown coop profile {name!r}; known: {', '.join(profile_names())}")
    try:
        d = json.loads(p.read_text())
        if not isinstance(d, dict):
            raise ValueError("the file must hold a JSON object")
        unknown = sorted(set(d) - {"name", "description", "subgroup_size", "entries"})
        if unknown:
            raise ValueError(f"unknown keys {', '.join(unknown)}")
        if not isinstance(d["entries"], list) or not d["entries"]:
            raise ValueError("entries must be a non-empty list")
        sg = d["subgroup_size"]
        if not isinstance(sg, int) or isinstance(sg, bool) or not 1 <= sg <= MAX_SUBGROUP:
            raise ValueError(f"subgroup_size must be an integer in 1..{MAX_SUBGROUP}, got {sg!r}")
        entries = tuple(_check_entry(i, e) for i, e in enumerate(d["entries"]))
        if not isinstance(d["name"], str) or not isinstance(d.get("description", ""), str):
            raise ValueError("name and description must be strings")
        return CoopProfile(d["name"], d.get("description", ""), sg, entries)
    except OSError as e:
        raise ValueError(f"{p}: unreadable ({e.strerror or e})") from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        what = f"missing key {e}" if isinstance(e, KeyError) else str(e).splitlines()[0]
        raise ValueError(f"{p}: not a coop profile ({what})") from None


@dataclass(frozen=True)
class MatType:
    """A cooperative matrix type: use (A, B, C = accumulator), rows, cols, component."""

    use: str
    rows: int
    cols: int
    t: str
    scope: str = "subgroup"

    @property
    def tag(self) -> str:
        scope = "" if self.scope == "subgroup" else f"-{SCOPE_ID.get(self.scope, self.scope)}"
        return f"{self.use}{self.rows}x{self.cols}-{self.t}{scope}"


def matrix_types(entries) -> list[MatType]:
    """The distinct matrix types the entries allow (Vulkan specification, Cooperative Matrices)."""
    out: dict[MatType, None] = {}
    for e in entries:
        out[MatType("A", e.M, e.K, e.A, e.scope)] = None
        out[MatType("B", e.K, e.N, e.B, e.scope)] = None
        out[MatType("C", e.M, e.N, e.C, e.scope)] = None
        out[MatType("C", e.M, e.N, e.R, e.scope)] = None
    return list(out)


@dataclass(frozen=True)
class CoopCase:
    """One cooperative-matrix case; ``id`` carries every axis that changes the
    kernel or that a device can lack."""

    op: str
    api: str = "vk"
    mat: MatType | None = None  # per-matrix ops
    entry: CoopEntry | None = None  # muladd / chain / gemm
    to: str = ""  # convert: destination component type
    layout: str = "row"  # load / store / muladd: "row" or "col"
    stride: str = "tight"  # "tight", "padded", "zero" (load only)
    mem: str = "storage"  # "storage" or "workgroup"
    mode: str = ""  # splat: "const" / "dyn" / "null"
    var: str = ""  # a KHR axis value of VARIANTS (id token; "" = the plain form)
    tier: str = "exact"
    sg: int = 32  # subgroup size the case is planned for (not in the id)
    family: str = "coop_matrix"

    @property
    def id(self) -> str:
        parts = [self.api, self.op]
        if self.entry is not None:
            parts.append(self.entry.tag)
        if self.mat is not None:
            parts.append(self.mat.tag + (f"_to_{self.to}" if self.to else ""))
        if self.op in ("load", "store"):
            parts += [self.layout, self.stride, self.mem]
        elif self.op == "muladd":
            parts.append(self.layout)
        if self.mode:
            parts.append(self.mode)
        if self.var:
            parts.append(self.var)
        parts.append(self.tier)
        return "-".join(parts)

    @property
    def extension(self) -> str:
        return {"vk": COOP_EXTENSION, "clspv": "cl_khr_cooperative_matrix"}.get(
            self.api, "__opencl_c_ext_cooperative_matrix"
        )

    @property
    def spec_row(self) -> str:
        what = {
            "muladd": "OpCooperativeMatrixMulAddKHR",
            "chain": "OpCooperativeMatrixMulAddKHR (chained)",
            "gemm": "tiled GEMM (Load/MulAdd/Store)",
            "load": "OpCooperativeMatrixLoadKHR",
            "store": "OpCooperativeMatrixStoreKHR",
            "length": "OpCooperativeMatrixLengthKHR",
            "access": "OpCompositeExtract/Insert",
            "splat": "OpConstantComposite/OpCompositeConstruct",
            "convert": "conversions",
        }.get(self.op, f"element-wise {self.op}")
        target = self.entry.tag if self.entry else (self.mat.tag if self.mat else "")
        return f"{self.api}: {what} {target}"

    @property
    def axes(self) -> dict:
        d = {"api": self.api, "op": self.op, "tier": self.tier}
        if self.entry:
            d.update({f"entry_{k}": v for k, v in self.entry.as_dict().items()})
            d["layout"] = self.layout
        if self.mat:
            d.update({"use": self.mat.use, "rows": self.mat.rows, "cols": self.mat.cols, "type": self.mat.t})
        if self.to:
            d["to"] = self.to
        if self.op in ("load", "store"):
            d.update({"layout": self.layout, "stride": self.stride, "mem": self.mem})
        if self.mode:
            d["mode"] = self.mode
        if self.var:
            d["var"] = self.var
            d["axis"] = VARIANTS[self.var][0]
        return d


ELEMENTWISE = ("add", "sub", "mul", "div", "neg", "scale")

# KHR axes beyond the plain forms: id token -> (axis, what
# the kernel does differently).  Load/store also take ``mem="bda"`` (PhysicalStorageBuffer).
VARIANTS: dict[str, tuple[str, str]] = {
    "spush": ("stride source", "Stride read from a push constant"),
    "sspec": ("stride source", "Stride a specialization constant (default: the tight stride)"),
    "sbuf": ("stride source", "Stride read from a storage buffer at run time"),
    "v2": ("element pointer", "buffer of 2-component vectors; offset and Stride in vectors"),
    "v4": ("element pointer", "buffer of 4-component vectors; offset and Stride in vectors"),
    "nontemporal": ("memory operand", "Load with the Nontemporal memory operand"),
    "aligned": ("memory operand", "Load with the Aligned 16 memory operand"),
    "avail": ("memory operand", "Vulkan memory model: MakePointerVisible load, MakePointerAvailable store"),
    "func": ("function", "MulAdd inside a function: matrices as parameters and return value"),
    "funcconst": ("function", "MulAdd inside a function with const in parameters"),
    "array": ("composite", "A from an array of two matrices (element 1)"),
    "struct": ("composite", "A, B, C members of a struct; the result written back to the member"),
    "colacc": ("accumulator layout", "C loaded and Result stored ColumnMajor"),
    "stride0": ("operand stride", "A and B loaded with Stride 0 (every row the same)"),
    "wg4": ("subgroups per workgroup", "4 subgroups per workgroup, each its own problem"),
    "sgmin": ("subgroup size", "pipeline with requiredSubgroupSize = minSubgroupSize"),
    "sgmax": ("subgroup size", "pipeline with requiredSubgroupSize = maxSubgroupSize"),
    "composite": ("element access", "elements read by OpCompositeExtract, written by OpCompositeInsert"),
    "varptr": ("variable pointers", "the Load/Store pointer an OpSelect of two pointers (VariablePointers)"),
}
MULADD_VARIANTS = ("func", "funcconst", "array", "struct", "colacc", "stride0", "wg4", "sgmin", "sgmax")
# (op, layout, stride, mem, var) of the load/store axes, per representative matrix type
LOAD_STORE_VARIANTS = (
    [("load", "row", "padded", mem, v) for mem in ("storage", "workgroup", "bda") for v in ("", "spush", "sspec", "sbuf")]
    + [("store", "col", "padded", "bda", ""), ("store", "col", "padded", "storage", "spush"),
       ("store", "col", "padded", "workgroup", "sbuf"), ("store", "col", "padded", "bda", "sspec")]
    + [("load", "row", "tight", "storage", "v4"), ("load", "col", "tight", "storage", "v2"),
       ("store", "row", "tight", "storage", "v2"), ("store", "col", "tight", "storage", "v4")]
    + [("load", "row", "tight", "storage", "nontemporal"), ("load", "row", "tight", "storage", "aligned"),
       ("store", "row", "tight", "storage", "avail")]
    + [(op, "row", "padded", mem, "varptr") for op in ("load", "store") for mem in ("storage", "workgroup")]
)  # fmt: skip


def case_comp(case) -> int:
    """Components of the element pointer of a load/store (``v2`` / ``v4``)."""
    return {"v2": 2, "v4": 4}.get(case.var, 1)


def _khr_variants(api: str, mats: list, entries: list, tiers) -> list:
    """The KHR axes: load/store axes and element-access forms on one matrix type per (use,
    component type), MulAdd forms on every entry."""
    if api != "vk":
        return []
    reps: dict[tuple, MatType] = {}
    for m in mats:
        reps.setdefault((m.use, m.t, m.scope), m)
    out = []
    for m in reps.values():
        for op, lay, st, mem, v in LOAD_STORE_VARIANTS:
            if (mem, v) not in (("storage", ""), ("workgroup", "")):
                out.append(CoopCase(op, api, mat=m, layout=lay, stride=st, mem=mem, var=v))
        out.append(CoopCase("access", api, mat=m, var="composite"))
        out.append(CoopCase("splat", api, mat=m, mode="null"))
    for e in entries:
        out += [CoopCase("muladd", api, entry=e, var=v) for v in MULADD_VARIANTS]
    if "special" in tiers:  # inf, NaN, out of range: defined with SignedZeroInfNanPreserve
        for m, dst in _conversions(mats):
            if {m.t, dst} <= {"f16", "f32", "f64"}:
                out.append(CoopCase("convert", api, mat=m, to=dst, tier="special"))
    return out


FLOAT_TIERS = ("exact", "onehot", "random", "special", "accprec")
INT_TIERS = ("exact", "onehot", "random", "special")


def _muladd_tiers(e: CoopEntry, tiers: tuple[str, ...]) -> list[str]:
    """Data tiers of ``reference.data`` (no ``rounding``: no cooperative-matrix
    spec fixes a rounding: SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR), plus the planted integer
    tiers ``wrap`` (non-saturating) and ``sat`` (saturating entries), both
    enumerated with ``special``."""
    base = [t for t in (INT_TIERS if e.is_int else FLOAT_TIERS) if t in tiers]
    if "accprec" in base and accprec_type(e.A, e.C, e.R) is None:
        base.remove("accprec")
    if e.is_int and "special" in tiers:
        base.append("sat" if e.sat else "wrap")
    return base


def _api_allows(
    api: str, entry: CoopEntry | None = None, mat: MatType | None = None, op: str = "", to: str = ""
) -> bool:
    """OpenCL forms: Subgroup scope only, no bf16 (cl_khr_cooperative_matrix
    cl_khr_cooperative_matrix draft); no OpMatrixTimesScalar in OpenCL environments
    for SPIR-V (SPV_KHR_cooperative_matrix); the OpenCL C proposal defines load, store,
    mulAdd and the operators + - * / unary - and matrix * scalar only."""
    if api == "vk":
        types = (entry.A, entry.B, entry.C, entry.R) if entry else (mat.t,)
        # SPV_KHR_bfloat16: no arithmetic instructions on BFloat16KHR (spirv-val
        # rejects OpFAdd ... on bf16 matrices); f16 <-> bf16 conversions are
        # patched into the module (cts/kernels/coop_glsl_axes.py)
        return not ("bf16" in types and op in ELEMENTWISE)
    types = (entry.A, entry.B, entry.C, entry.R) if entry else (mat.t, to)
    scope = entry.scope if entry else mat.scope
    if "bf16" in types or scope != "subgroup":
        return False
    if api == "clspv" and op == "scale":
        return False
    if api == "clc" and op in ("length", "access", "splat", "convert"):
        return False
    return True


def _conversions(mats: list[MatType]) -> list[tuple[MatType, str]]:
    by_shape: dict[tuple, list[str]] = {}
    for m in mats:
        by_shape.setdefault((m.use, m.rows, m.cols, m.scope), []).append(m.t)
    out = []
    for (use, r, c, scope), ts in by_shape.items():
        for src in ts:
            for dst in ts:
                if src != dst:
                    out.append((MatType(use, r, c, src, scope), dst))
    return out


def coop_cases(entries, tiers: tuple[str, ...], sg: int, apis: tuple[str, ...] = ("vk",)) -> list[CoopCase]:
    """All cases for ``entries`` (see module docstring)."""
    entries = list(entries)
    mats = matrix_types(entries)
    out: list[CoopCase] = []
    for api in apis:
        pts: list[CoopCase] = []
        for m in mats:
            pts.append(CoopCase("length", api, mat=m))
            pts.append(CoopCase("access", api, mat=m))
            pts += [CoopCase("splat", api, mat=m, mode=md) for md in ("const", "dyn")]
            ls = (
                space()
                .combine("op", ("load", "store"))
                .combine("layout", ("row", "col"))
                .combine("stride", ("tight", "padded", "zero"))
                .filter(lambda p: not (p.op == "store" and p.stride == "zero"))  # Stride > 0 for Store
                .combine("mem", ("storage", "workgroup"))
            )
            pts += [CoopCase(p.op, api, mat=m, layout=p.layout, stride=p.stride, mem=p.mem) for p in ls]
            ew_tiers = [t for t in ("exact", "random") if t in tiers] or ["exact"]
            for op in ELEMENTWISE:
                if op in ("neg",) and etype(m.t).kind == "uint":
                    continue  # OpSNegate of unsigned components: nothing to add over sub
                for t in ew_tiers:
                    pts.append(CoopCase(op, api, mat=m, tier=t))
        for m, dst in _conversions(mats):
            pts.append(CoopCase("convert", api, mat=m, to=dst))
        for e in entries:
            for t in _muladd_tiers(e, tiers):
                pts.append(CoopCase("muladd", api, entry=e, tier=t))
            pts.append(
                CoopCase(
                    "muladd", api, entry=e, layout="col", tier="onehot" if "onehot" in tiers else "exact"
                )
            )
            ct = "random" if "random" in tiers else "exact"
            pts.append(CoopCase("chain", api, entry=e, tier=ct))
            pts.append(CoopCase("gemm", api, entry=e, tier=ct))
            if "accprec" in _muladd_tiers(e, tiers):  # every step of a chain / K tile of a GEMM
                pts += [CoopCase(op, api, entry=e, tier="accprec") for op in ("chain", "gemm")]
        pts += _khr_variants(api, mats, entries, tiers)
        pts = [p for p in pts if _api_allows(api, p.entry, p.mat, p.op, p.to)]
        out += [replace(p, sg=sg) for p in pts]
    return out


# ---------------------------------------------------------------- buffers
# The contract between the runner (cts/runs/coop/) and every backend's
# ``run_coop_matrix(case, bufs) -> bufs``: named buffers of raw element bits,
# one row per subgroup (gemm: per problem), dtype = the element's storage.
SPLAT_CONST = {"float": -2.5, "int": -3, "uint": 7}  # baked into splat "const" kernels
SCALE = {"float": 1.5, "int": 3, "uint": 3}  # the scalar of OpMatrixTimesScalar
MAP_FILL = 0xFFFFFFFF  # untouched slots of the length/mapping buffer


def storage_dtype(t: str):
    import numpy as np

    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[etype(t).bits]


def case_stride(case: CoopCase) -> int:
    """Stride in elements of the load/store op: tight = the row (col) length,
    padded = tight + 16 bytes (Vulkan wants 16-byte aligned strides where a
    row is that long), zero = 0 (Load only)."""
    m = case.mat
    tight = m.cols if case.layout == "row" else m.rows
    if case.stride == "tight":
        return tight
    if case.stride == "zero":
        return 0
    return tight + 16 // (etype(m.t).bits // 8)


def region_len(n: int, t: str) -> int:
    """n elements rounded up to a multiple of 16 bytes (per-subgroup regions
    start 16-byte aligned)."""
    per = 16 // (etype(t).bits // 8)
    return -(-n // per) * per


def owner_from_mapping(idx: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(sg, length) element indices -> (rows, cols, 2) first (invocation, index).
    Shared by the backends that report a matrix's element mapping (emulator,
    Vulkan) and the cooperative-matrix runner."""
    n = rows * cols
    idx = np.asarray(idx)
    owner = np.full((n, 2), -1, dtype=np.int64)
    flat = idx.reshape(-1).astype(np.int64)
    slot = np.flatnonzero((flat >= 0) & (flat < n))  # row-major (invocation, index) order
    elems, first = np.unique(flat[slot], return_index=True)  # first slot holding each element
    inv, j = np.divmod(slot[first], max(1, idx.shape[1]))
    owner[elems, 0], owner[elems, 1] = inv, j
    return owner.reshape(rows, cols, 2)
