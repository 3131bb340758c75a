"""Case catalogs for SYCL ``joint_matrix`` (sycl_ext_oneapi_matrix,
sycl_ext_intel_matrix, and the deprecated sycl_ext_oneapi_matrix_no_use).

Every combination table of sycl_ext_oneapi_matrix, Supported Combinations Per Hardware is one data table
below (Intel AMX, the two Intel XMX classes, NVIDIA sm_70/72/80, AMD gfx90a), plus the old
API's static-query table (sycl_ext_oneapi_matrix_no_use).  Operations (both APIs, sycl_ext_intel_matrix):

* ``mad``         D = A x B + C, D type may differ from C type (sycl_ext_oneapi_matrix), every
                  combination row x shape x data tier with the canonical
                  layouts, and a layout sweep (A/B/C/D layouts) per row.
* ``ldst``        load with a layout and stride, store with the other stride.
* ``fill``        joint_matrix_fill, then store.
* ``apply``       joint_matrix_apply with (row, col) coordinates (Intel
                  extension; logical pre-VNNI coordinates); ``apply_plain``
                  the coordinate-free form (generic API / old get_wi_data).
* ``copy``        joint_matrix_copy changing type, use or layout.
* ``load_checked`` / ``store_checked`` / ``fill_checked``  out-of-bounds rules.

Ids carry arch, API, operation, types, M/N/K, use, layouts, stride and tier,
e.g. ``xmx16-cur-mad-bf16_bf16_f32_bf16-m8n16k16-mad-row_packed_row_row-tight-rounding``.

Not enumerated, on purpose: ``ext_intel_packed`` for use::a (the Intel text
describes the packing on "the matrix", which for A would pack pairs of M
rows; no implementation or test uses it, so the meaning is not pinned down;
the old API's ``packed_a`` is covered, the deprecated API's text defines it).
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.data import accprec_type
from reference.dtypes import etype
from reference.joint import vnni_factor

__all__ = [
    "JointCase",
    "COMBOS",
    "OLD_COMBOS",
    "joint_cases",
    "ARCHES",
    "INTEL_ARCHES",
    "joint_coop_cases",
    "matching_entry",
]

INT_SIGNS = (("u8", "u8"), ("u8", "i8"), ("i8", "u8"), ("i8", "i8"))
M_LE_8 = tuple(range(1, 9))

ARCHES = {
    "amx": "Intel AMX: intel_cpu_spr, intel_cpu_gnr (impl. also intel_cpu_dmr)",
    "xmx16": "Intel XMX PVC-class (intel_gpu_pvc; impl. bmg_g21, lnl_m, ptl_h, ptl_u), sg 16",
    "xmx8": "Intel XMX DG2-class (intel_gpu_dg2_g10/g11/g12; impl. arl_h), sg 8",
    "sm70": "NVIDIA Tensor Cores, ext_oneapi_cuda, from sm_70",
    "sm72": "NVIDIA Tensor Cores, ext_oneapi_cuda, from sm_72",
    "sm80": "NVIDIA Tensor Cores, ext_oneapi_cuda, from sm_80",
    "gfx90a": "AMD Matrix Cores, ext_oneapi_hip, gfx90a",
}
INTEL_ARCHES = ("amx", "xmx16", "xmx8")


def _mle8(n: int, k: int) -> list[tuple[int, int, int]]:
    return [(m, n, k) for m in M_LE_8]


def _amx(kmax: int) -> list[tuple[int, int, int]]:
    """AMX sizes are maxima (M<=16, N<=16, K<=kmax): the maximum tile, a half
    one and an odd one (K kept a multiple of the VNNI factor)."""
    return [(16, 16, kmax), (8, 16, kmax // 2), (3, 5, kmax // 4)]


_PVC_16 = _mle8(16, 16) + [(16, 16, 16), (1, 64, 16), (32, 64, 16), (1, 64, 32), (32, 64, 32)]
_NV3 = [(16, 16, 16), (8, 32, 16), (32, 8, 16)]
_AMD2 = [(32, 32, 8), (16, 16, 16)]

# (arch, a, b, c, d, shapes, note) -- sycl_ext_oneapi_matrix, Supported Combinations Per Hardware, current API
COMBOS: list[tuple] = []
for _a, _b in INT_SIGNS:
    COMBOS.append(("amx", _a, _b, "i32", "i32", _amx(64), "spr, gnr"))
COMBOS += [
    ("amx", "bf16", "bf16", "f32", "f32", _amx(32), "spr, gnr"),
    ("amx", "f16", "f16", "f32", "f32", _amx(32), "gnr (impl. dmr)"),
    ("amx", "tf32", "tf32", "f32", "f32", _amx(16), "dmr (implementation table only)"),
]
for _a, _b in INT_SIGNS:
    COMBOS.append(("xmx16", _a, _b, "i32", "i32", _mle8(16, 32), "runtime table"))
for _t in ("f16", "bf16"):
    acc = "f16" if _t == "f16" else "bf16"
    for _c, _d in (("f32", "f32"), (acc, "f32"), ("f32", acc), (acc, acc)):
        COMBOS.append(("xmx16", _t, _t, _c, _d, _PVC_16, "runtime table (doc rev 12: C = D = fp32 subset)"))
COMBOS.append(("xmx16", "tf32", "tf32", "f32", "f32", _mle8(16, 8), ""))
for _a, _b in INT_SIGNS:
    COMBOS.append(("xmx8", _a, _b, "i32", "i32", _mle8(8, 32), ""))
COMBOS += [
    ("xmx8", "f16", "f16", "f32", "f32", _mle8(8, 16), ""),
    ("xmx8", "bf16", "bf16", "f32", "f32", _mle8(8, 16) + [(32, 32, 16)], ""),
]
for _c, _d in (("f32", "f32"), ("f16", "f16"), ("f32", "f16"), ("f16", "f32")):
    COMBOS.append(("sm70", "f16", "f16", _c, _d, _NV3, ""))
COMBOS += [
    ("sm72", "i8", "i8", "i32", "i32", _NV3, ""),
    ("sm72", "u8", "u8", "i32", "i32", _NV3, ""),
    ("sm80", "tf32", "tf32", "f32", "f32", [(16, 16, 8)], ""),
    ("sm80", "bf16", "bf16", "f32", "f32", _NV3, ""),
    ("sm80", "f64", "f64", "f64", "f64", [(8, 8, 4)], ""),
    ("gfx90a", "f16", "f16", "f32", "f32", _AMD2, ""),
    ("gfx90a", "i8", "i8", "i32", "i32", _AMD2, ""),
    ("gfx90a", "bf16", "bf16", "f32", "f32", _AMD2, ""),
    ("gfx90a", "f64", "f64", "f64", "f64", [(16, 16, 4)], ""),
]

# Old API (sycl_ext_oneapi_matrix_no_use, the deprecated API, old static-query header): AMX maxima and DPAS
# (M in 1, 2, 4, 8; N = 8, the DG2-class subgroup size).
OLD_COMBOS: list[tuple] = []
for _a, _b in INT_SIGNS:
    OLD_COMBOS.append(("amx", _a, _b, "i32", "i32", _amx(64), "old tpu_params amx"))
OLD_COMBOS.append(("amx", "bf16", "bf16", "f32", "f32", _amx(32), "old tpu_params amx"))
_DPAS_M = (1, 2, 4, 8)
for _a, _b in INT_SIGNS:
    OLD_COMBOS.append(("xmx8", _a, _b, "i32", "i32", [(m, 8, 32) for m in _DPAS_M], "old tpu_params dpas"))
for _t in ("f16", "bf16"):
    OLD_COMBOS.append(("xmx8", _t, _t, "f32", "f32", [(m, 8, 16) for m in _DPAS_M], "old tpu_params dpas"))


@dataclass(frozen=True)
class JointCase:
    """One joint_matrix case.  ``types``: (a, b, c, d) for mad, (t,) for a
    single-matrix operation, (src, dst) for copy.  ``use``: "mad", "a", "b",
    "acc", or "src>dst" for copy.  ``layouts``: (a, b, c, d) for mad, (load,
    store) otherwise.  ``stride``: the loads' stride ("tight" = the minimum,
    "pad" = padded); stores use the other one."""

    arch: str
    api: str  # "cur" (use/layout) or "old" (matrix_layout)
    op: str
    types: tuple[str, ...]
    M: int
    N: int
    K: int
    use: str
    layouts: tuple[str, ...]
    stride: str
    tier: str
    note: str = ""
    family: str = "joint_matrix"

    @property
    def layout_names(self) -> tuple[str, ...]:
        """Layout names as the API spells them (old API: packed_b)."""
        if self.api == "old":
            return tuple("packed_b" if x == "packed" else x for x in self.layouts)
        return self.layouts

    @property
    def id(self) -> str:
        return (
            f"{self.arch}-{self.api}-{self.op}-{'_'.join(self.types)}-m{self.M}n{self.N}k{self.K}-"
            f"{self.use.replace('>', '2')}-{'_'.join(self.layout_names)}-{self.stride}-{self.tier}"
        )

    @property
    def spec_row(self) -> str:
        api = "old matrix_layout API" if self.api == "old" else "use/layout API"
        return (
            f"joint_matrix {self.op} {'/'.join(self.types)} {self.M}x{self.N}x{self.K} on {self.arch} ({api})"
        )

    @property
    def axes(self) -> dict:
        return {
            "arch": self.arch,
            "api": self.api,
            "op": self.op,
            "types": "_".join(self.types),
            "shape": f"{self.M}x{self.N}x{self.K}",
            "use": self.use,
            "layouts": "_".join(self.layout_names),
            "stride": self.stride,
            "tier": self.tier,
        }

    def dims(self, use: str) -> tuple[int, int]:
        """Logical (rows, cols) of a matrix with this use (sycl_ext_oneapi_matrix: A is MxK, B
        KxN, accumulator MxN)."""
        return {"a": (self.M, self.K), "b": (self.K, self.N), "acc": (self.M, self.N)}[use]

    @staticmethod
    def factor(t: str) -> int:
        return vnni_factor(etype(t).bits) if t != "tf32" else 1


# ------------------------------------------------------------ enumeration
def _mad_tiers(d: str, a: str, tiers, c: str = "") -> list[str]:
    out = []
    for t in tiers:
        if t == "rounding" and d not in ("f16", "bf16"):
            continue
        if t == "rounding" and a in ("i8", "u8"):
            continue
        if t == "accprec" and accprec_type(a, c, d) is None:  # float mad only (reference.data)
            continue
        out.append(t)
    return out


def _canonical(arch: str, api: str, a: str) -> tuple[str, str, str, str]:
    """The layouts applications use: packed B on Intel AMX/XMX for 8/16-bit
    (old API: packed_b was required), row-major otherwise."""
    packs = JointCase.factor(a) > 1 and arch in INTEL_ARCHES
    if api == "old":
        return ("row", "packed" if packs else "row", "row", "row")
    return ("row", "packed" if packs else "row", "row", "row")


def _layout_variants(arch: str, api: str, a: str) -> list[tuple[str, str, str, str]]:
    packs = JointCase.factor(a) > 1 and arch in INTEL_ARCHES
    if api == "old":
        bl = "packed" if packs else "row"
        return [("packed_a", bl, "row", "row"), ("col", bl, "row", "row"), ("row", bl, "col", "col")]
    a_l = ("row", "col")
    b_l = ("row", "col", "packed") if packs else ("row", "col")
    out = [(x, y, "row", "row") for x in a_l for y in b_l]
    can = _canonical(arch, api, a)
    out += [(can[0], can[1], lc, ld) for lc, ld in (("col", "col"), ("row", "col"), ("col", "row"))]
    return [v for v in out if v != can]


def mad_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    out = []
    for api, table in (("cur", COMBOS), ("old", OLD_COMBOS)):
        for arch, a, b, c, d, shapes, note in table:
            can = _canonical(arch, api, a)
            for M, N, K in shapes:
                for tier in _mad_tiers(d, a, tiers, c):
                    out.append(
                        JointCase(arch, api, "mad", (a, b, c, d), M, N, K, "mad", can, "tight", tier, note)
                    )
            M, N, K = max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))
            for i, lay in enumerate(_layout_variants(arch, api, a)):
                for tier in ("onehot", "exact"):
                    if tier in tiers:
                        stride = "pad" if i % 2 == 0 else "tight"
                        out.append(
                            JointCase(arch, api, "mad", (a, b, c, d), M, N, K, "mad", lay, stride, tier, note)
                        )
    return out


def _matrices(api: str):
    """Distinct (arch, type, use, shape) with the first listed shape of each."""
    seen: dict = {}
    table = COMBOS if api == "cur" else OLD_COMBOS
    for arch, a, b, c, d, shapes, _ in table:
        M, N, K = max(shapes, key=lambda s: (s[0] * s[1] * s[2], s))
        for t, use in ((a, "a"), (b, "b"), (c, "acc"), (d, "acc")):
            seen.setdefault((arch, t, use), (M, N, K))
    return [(arch, t, use, shape) for (arch, t, use), shape in seen.items()]


def _single_layouts(arch: str, api: str, t: str, use: str) -> list[str]:
    packs = JointCase.factor(t) > 1 and arch in INTEL_ARCHES
    if use == "acc":
        return ["row", "col"] if api == "cur" else ["row"]
    if api == "old":
        return {"a": ["row", "packed_a"], "b": ["packed"]}[use] if packs else ["row"]
    if use == "b" and packs:
        return ["row", "col", "packed"]
    return ["row", "col"]


def single_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """ldst, fill, apply, checked ops per distinct matrix of each arch."""
    out = []
    for api in ("cur", "old"):
        for arch, t, use, (M, N, K) in _matrices(api):
            intel = arch in INTEL_ARCHES
            storable = intel or use == "acc"  # generic API stores accumulators only
            lays = _single_layouts(arch, api, t, use)
            for li in lays:
                louts = lays if use == "acc" else [li]
                for lo in louts:
                    if not storable:
                        continue
                    for stride in ("tight", "pad"):
                        if "random" in tiers:
                            out.append(
                                JointCase(arch, api, "ldst", (t,), M, N, K, use, (li, lo), stride, "random")
                            )
                if storable and "special" in tiers:
                    out.append(JointCase(arch, api, "fill", (t,), M, N, K, use, (li, li), "pad", "special"))
                if storable and "exact" in tiers:
                    op = "apply" if intel and api == "cur" else "apply_plain"
                    out.append(JointCase(arch, api, op, (t,), M, N, K, use, (li, li), "pad", "exact"))
                if intel and api == "cur" and "random" in tiers:
                    for op in ("load_checked", "store_checked"):
                        out.append(JointCase(arch, api, op, (t,), M, N, K, use, (li, li), "pad", "random"))
                if intel and api == "cur" and li != "packed" and "special" in tiers:
                    out.append(
                        JointCase(arch, api, "fill_checked", (t,), M, N, K, use, (li, li), "pad", "special")
                    )
    return out


def copy_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """joint_matrix_copy (sycl_ext_oneapi_matrix, same shape): type change between the
    accumulator types of a row, use change accumulator -> A (needs N = K) or
    -> B (M = K) and A -> accumulator (N = K), layout change of A and B
    (Intel: stores of A/B are an Intel extension).  Each kind takes the
    largest shape of the row that satisfies its shape rule."""
    if "exact" not in tiers:
        return []
    out = []
    seen = set()
    for arch, a, b, c, d, shapes, _ in COMBOS:
        intel = arch in INTEL_ARCHES
        floats = a not in ("i8", "u8")
        bl = "packed" if JointCase.factor(b) > 1 else "row"
        kinds = [
            ((c, d), "acc>acc", ("row", "row"), c != d, lambda M, N, K: True),
            ((c, a), "acc>a", ("row", "row"), intel and floats, lambda M, N, K: N == K),
            ((c, b), "acc>b", ("row", bl), intel and floats, lambda M, N, K: M == K),
            ((a, a), "a>a", ("row", "col"), intel, lambda M, N, K: True),
            ((b, b), "b>b", ("col", bl), intel, lambda M, N, K: True),
            ((a, c), "a>acc", ("col", "row"), True, lambda M, N, K: N == K),
        ]
        ordered = sorted(shapes, key=lambda s: (s[0] * s[1] * s[2], s), reverse=True)
        for types, use, lay, wanted, fits in kinds:
            shape = next((sh for sh in ordered if fits(*sh)), None)
            key = (arch, types, use, lay)
            if not wanted or shape is None or key in seen:
                continue
            seen.add(key)
            out.append(JointCase(arch, "cur", "copy", types, *shape, use, lay, "tight", "exact"))
    return out


def joint_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """Every joint_matrix case for the given data tiers."""
    return mad_cases(tiers) + single_cases(tiers) + copy_cases(tiers)


# ------------------------------------------------ joint_matrix through cooperative matrix
def joint_coop_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """Current-API mad combinations, one case per distinct (types, shape,
    tier) over all architectures (the first architecture names it).  Only
    power-of-two M, N, K: the shapes a cooperative-matrix property can be
    expected to list (Vulkan specification, Cooperative Matrices); the other M of the "M<=8" rows run
    on the emulator (test_joint_matrix)."""
    seen = set()
    out = []
    for arch, a, b, c, d, shapes, note in COMBOS:
        for M, N, K in shapes:
            if any(x & (x - 1) for x in (M, N, K)):
                continue
            for tier in _mad_tiers(d, a, tiers, c):
                key = (a, b, c, d, M, N, K, tier)
                if key in seen:
                    continue
                seen.add(key)
                lay = _canonical(arch, "cur", a)
                out.append(
                    JointCase(
                        arch,
                        "cur",
                        "mad",
                        (a, b, c, d),
                        M,
                        N,
                        K,
                        "mad",
                        lay,
                        "tight",
                        tier,
                        note,
                        family="joint_matrix_coop",
                    )
                )
    return out


def matching_entry(entries, case: JointCase):
    """The reported entry that realizes this mad exactly, or None."""
    a, b, c, d = case.types
    for e in entries:
        if (e.M, e.N, e.K, e.A, e.B, e.C, e.R) == (case.M, case.N, case.K, a, b, c, d):
            if not e.sat and e.scope == "subgroup":
                return e
    return None
