"""The OpenCL axes of the cooperative-matrix space.

Beside the plain space (``cts.families.coop``, one subgroup size, Load/Store
pointers of the component type, compile-time strides, RowMajor/ColumnMajor):

* ``ptr`` -- Load/Store through a pointer whose pointee type is not the
  component type (``ptr-u8`` ``ptr-u16`` ``ptr-u32`` ``ptr-u64`` ``ptr-u32x4``);
  Stride in pointee elements (SPV_KHR_cooperative_matrix).  Padded strides: 16 bytes past
  the tight row.
* ``rtstride`` -- Stride a ``ulong`` kernel argument, not a constant (padded,
  0 on Load, and once with a ``ptr`` pointee).
* ``arm`` -- the ARM blocked layouts 4202 / 4203 (layout ``rowblk`` / ``colblk``,
  Stride = interleave ``il1`` / ``il2`` / ``il4`` where the validation rules
  allow it); SPIR-V form only (the OpenCL C proposal names no such layout);
  run where the device lists capability ``CooperativeMatrixLayoutsARM`` (4201).
* ``qalign`` / ``qstride`` -- the draft device queries
  ``CL_DEVICE_COOPERATIVE_MATRIX_POINTER_ALIGNMENT_KHR`` (0x107A) and
  ``..._STRIDE_MULTIPLE_KHR`` (0x107B): a pointer aligned to exactly
  max(z, alignment) bytes (``qalign4``) and the smallest Stride above the tight
  one that is a multiple of max(z, multiple) bytes (``qstride36`` = bytes).
* ``sg`` -- every subgroup size the device reports variants for, not only the
  first: at each further size, ``length`` of every matrix type, one ``load`` per
  (use, type) and ``muladd`` of every variant reported at that size (``sg16``).

The table (:class:`OclTable`) is the device's (``clGetDeviceCooperativeMatrixInfoKHR``
per subgroup size, ``clGetDeviceInfo`` 0x107A / 0x107B), the emulator's own, or
the session's entries at its one subgroup size with the queries unknown (then
the query cases use the element size, the draft's floor).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from math import lcm

from reference.dtypes import etype

__all__ = [
    "OclTable",
    "OCL_AXES",
    "POINTEES",
    "Memory",
    "axis_cases",
    "axis_rows",
    "axis_memory",
    "ARM_LAYOUTS",
    "arm_shape_ok",
]

# id token -> Cooperative Matrix Layout (SPV_KHR_cooperative_matrix, ARM blocked layouts)
ARM_LAYOUTS = {"rowblk": 4202, "colblk": 4203}


def arm_shape_ok(rows: int, cols: int, z: int, layout: str, interleave: int) -> bool:
    """SPV_ARM_cooperative_matrix_layouts validation rules (Rev 2): Stride 1, 2
    or 4; Rows a multiple of 4 (x Stride for 4203); Columns a multiple of 16/z
    (x Stride for 4202).  Which cases are legal, not what they compute."""
    bc = 16 // z
    if interleave not in (1, 2, 4) or rows % 4 or cols % bc:
        return False
    return cols % (bc * interleave) == 0 if layout == "rowblk" else rows % (4 * interleave) == 0


OCL_AXES = ("ptr", "rtstride", "arm", "qalign", "qstride", "sg")
# pointee token -> (bytes, SPIR-V scalar, components)
POINTEES: dict[str, tuple[int, str, int]] = {
    "u8": (1, "u8", 1),
    "u16": (2, "u16", 1),
    "u32": (4, "u32", 1),
    "u64": (8, "u64", 1),
    "u32x4": (16, "u32", 4),
}
PAD_BYTES = 16  # padded Stride: the tight row plus 16 bytes


@dataclass(frozen=True)
class OclTable:
    """What an OpenCL device (or the emulator) reports for the draft:
    variants per subgroup size (the first key is the size the plain space
    runs at) and the two query values (None: not reported)."""

    variants: dict = field(default_factory=dict)
    pointer_alignment: int | None = None
    stride_multiple: int | None = None
    source: str = "session entries"

    def __hash__(self) -> int:
        return hash((tuple(self.variants), self.pointer_alignment, self.stride_multiple))


@dataclass(frozen=True)
class Memory:
    """Where a Load/Store of an OpenCL-axis case points: ``offset`` bytes into
    the subgroup's region, ``stride`` in the kernel's units (pointee elements;
    ARM: the interleave), ``pointee`` bytes, ``region`` bytes per subgroup
    (the image's extent rounded up; where each element lies is the reference's
    business, ``reference.coop_ocl``)."""

    offset: int
    stride: int
    pointee: int
    region: int

    @property
    def stride_bytes(self) -> int:
        return self.stride * self.pointee


def _memory(case) -> Memory:
    return _memory_of(case.mat, case.layout, case.stride, case.ptr, case.qalign, case.qstride)


@cache
def _memory_of(m, layout: str, stride: str, ptr: str, qalign: int, qstride: int) -> Memory:
    z = etype(m.t).bits // 8
    if layout in ARM_LAYOUTS:
        il = int(stride[2:])
        if not arm_shape_ok(m.rows, m.cols, z, layout, il):
            raise ValueError(f"no {layout} {m.tag} with Stride {il}")
        return Memory(0, il, z, _round(m.rows * m.cols * z, PAD_BYTES))  # dense 64-byte blocks
    psize = POINTEES[ptr][0] if ptr else z
    major, minor = (m.rows, m.cols) if layout == "row" else (m.cols, m.rows)
    offset = qalign
    if stride == "zero":
        sb = 0
    elif qstride:
        sb = qstride
    elif stride == "tight":
        sb = minor * z
    else:
        sb = minor * z + PAD_BYTES
    if sb % psize:
        raise ValueError(f"a Stride of {sb} bytes is no whole number of {psize}-byte pointees")
    extent = offset + (major - 1) * sb + minor * z
    unit = max(PAD_BYTES, 2 * offset, psize)
    return Memory(offset, sb // psize, psize, _round(extent, unit))


def _round(n: int, unit: int) -> int:
    return -(-n // unit) * unit


def axis_memory(case) -> Memory:
    """The :class:`Memory` of a load/store case of an OpenCL axis."""
    return _memory(case)


def axis_rows(case) -> dict[str, int]:
    """Elements per subgroup row of each buffer (the runner's contract)."""
    m = case.mat
    n = m.rows * m.cols
    L = _memory(case).region // (etype(m.t).bits // 8)
    rows = {"src": L, "out": n} if case.op == "load" else {"x": n, "dst": L}
    if case.rtstride:
        rows["st"] = 4
    return rows


def query_values(table: OclTable, z: int) -> tuple[int, int]:
    """(pointer alignment, stride multiple) in bytes for a z-byte component."""
    a = max(z, table.pointer_alignment or 0)
    return a, lcm(z, max(z, table.stride_multiple or 0))


def _ok_type(t: str) -> bool:
    return t != "bf16"


def axis_cases(entries, tiers, sg: int, apis: tuple[str, ...], table: OclTable) -> list:
    """(CoopCase, OclCoopCase fields) of every OpenCL-axis case."""
    from cts.families.coop import CoopCase, MatType, matrix_types

    out: list = []
    entries = [e for e in entries if e.scope == "subgroup" and all(map(_ok_type, (e.A, e.B, e.C, e.R)))]
    reps: dict[tuple, MatType] = {}
    for m in matrix_types(entries):
        reps.setdefault((m.use, m.t), m)

    def add(api, op, m, layout="row", stride="padded", **kw):
        c = CoopCase(op, api, mat=m, layout=layout, stride=stride, mem="storage", sg=sg)
        try:
            _memory_of(m, layout, stride, kw.get("ptr", ""), kw.get("qalign", 0), kw.get("qstride", 0))
        except ValueError:
            return  # the Stride is no whole number of pointees: not a legal case
        out.append((c, kw))

    for api in apis:
        for m in reps.values():
            z = etype(m.t).bits // 8
            # ptr: every pointee of another size (and the 16-byte vector)
            pts = [p for p, (b, _, k) in POINTEES.items() if b != z or k > 1]
            for p in pts:
                add(api, "load", m, ptr=p)
            if pts:
                add(api, "store", m, "col", ptr=pts[0])
            # rtstride
            add(api, "load", m, rtstride=True)
            add(api, "load", m, stride="zero", rtstride=True)
            add(api, "store", m, "col", rtstride=True)
            if pts:
                add(api, "load", m, "col", ptr=pts[-1], rtstride=True)
            # the draft queries at their minimum
            a, mult = query_values(table, z)
            qs = (m.cols * z // mult + 1) * mult
            add(api, "load", m, "row", "tight", qalign=a)
            add(api, "load", m, "row", "tight", qstride=qs)
            add(api, "store", m, "row", "tight", qalign=a, qstride=qs)
            # ARM blocked layouts (SPIR-V only)
            if api == "clspv":
                for lay in ARM_LAYOUTS:
                    legal = [il for il in (1, 2, 4) if arm_shape_ok(m.rows, m.cols, z, lay, il)]
                    for il in legal:
                        add(api, "load", m, lay, f"il{il}")
                    if legal:
                        add(api, "store", m, lay, f"il{legal[-1]}")
        out += _other_sizes(api, sg, tiers, table)
    return out


def _other_sizes(api: str, sg: int, tiers, table: OclTable) -> list:
    from cts.families.coop import CoopCase, MatType, matrix_types

    out: list = []
    for size, ents in table.variants.items():
        if size == sg:
            continue
        ents = [e for e in ents if e.scope == "subgroup" and all(map(_ok_type, (e.A, e.B, e.C, e.R)))]
        kw = {"sg_first": sg}
        reps: dict[tuple, MatType] = {}
        for m in matrix_types(ents):
            reps.setdefault((m.use, m.t), m)
            if api == "clspv":
                out.append((CoopCase("length", api, mat=m, sg=size), kw))
        for m in reps.values():
            out.append((CoopCase("load", api, mat=m, stride="tight", mem="storage", sg=size), kw))
        for e in ents:
            tier = "exact" if "exact" in tiers else tiers[0]
            out.append((CoopCase("muladd", api, entry=e, tier=tier, sg=size), kw))
    return out
