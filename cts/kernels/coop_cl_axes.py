"""Load / Store kernels of the OpenCL cooperative-matrix axes (
``cts.families.coop_ocl_axes``), both forms, same buffer contract as
``coop_cl_spv`` (one subgroup per work-group, row = work-group):

* the pointer is the subgroup's region start plus ``offset`` bytes (``qalign``),
  cast to the pointee type (``ptr``: OpBitcast of a CrossWorkgroup pointer in
  SPIR-V, a pointer cast in OpenCL C, whose ``coop_mat_load`` takes any
  ``gentype *``);
* Stride is a 64-bit constant in pointee elements, or the ``ulong`` kernel
  argument ``st`` (``rtstride``; the proposal's Stride is a ``size_t``);
* ARM layouts (SPIR-V only): MemoryLayout 4202 / 4203 under capability
  ``CooperativeMatrixLayoutsARM`` and ``SPV_ARM_cooperative_matrix_layouts``,
  which requires SPIR-V 1.6: the module carries the target marker
  ``cts.kernels.spirv_tools.TARGET_SPV16`` (assembled and validated as 1.6).
"""

from __future__ import annotations

from cts.families.coop_ocl_axes import ARM_LAYOUTS, POINTEES, axis_memory
from cts.kernels.coop_cl_buffers import TYPES, WG_ALIGN, buffer_args

__all__ = ["spirv_load_store", "opencl_c_body", "POINTEE_C", "pointer_facts", "query_violation"]

POINTEE_C = {"u8": "uchar", "u16": "ushort", "u32": "uint", "u64": "ulong", "u32x4": "uint4"}
_KHR = {"row": 0, "col": 1}


def _z(case) -> int:
    return TYPES[case.mat.t][3] // 8


def spirv_load_store(md, case, base) -> None:
    """Emit the Load (into ``out``, RowMajor tight) or Store (of ``x``) of an
    axis case into module ``md`` (``coop_cl_spv._Module``)."""
    m = case.mat
    t, z = m.t, _z(case)
    mem = axis_memory(case)
    T = md.mat(m.use, m.rows, m.cols, t)
    region = "src" if case.op == "load" else "dst"
    ptr = base(region, t)
    if mem.offset:
        ptr = md.at(ptr, t, md.u64(mem.offset // z))
    if case.ptr:
        _, scalar, comps = POINTEES[case.ptr]
        pointee = md.scalar(scalar)
        if comps > 1:
            pointee = md.decl(f"%v{comps}{scalar}", f"OpTypeVector {pointee} {comps}")
        pp = md.decl(f"%pCr_{pointee[1:]}", f"OpTypePointer CrossWorkgroup {pointee}")
        ptr = md.op(f"OpBitcast {pp} {ptr}", "p")
    if case.layout in ARM_LAYOUTS:
        md.caps["CooperativeMatrixLayoutsARM"] = None
        md.exts["SPV_ARM_cooperative_matrix_layouts"] = None
        lay = md.const("u32", ARM_LAYOUTS[case.layout])
    else:
        lay = md.const("u32", _KHR[case.layout])
    stride = "%arg_st" if case.rtstride else md.u64(mem.stride)
    if case.op == "load":
        v = md.op(f"OpCooperativeMatrixLoadKHR {T} {ptr} {lay} {stride}", "m")
        md.store(base("out", t), v, "row", m.cols)
    else:
        x = md.load(T, base("x", t), "row", m.cols)
        md.emit(f"OpCooperativeMatrixStoreKHR {ptr} {x} {lay} {stride}")


def opencl_c_body(case, rows: dict[str, int], ctype: str, lay_names: dict[str, str]) -> list[str]:
    """Body lines of the OpenCL C kernel of an axis case (no ARM layouts in
    the proposal: those cases are SPIR-V only)."""
    m = case.mat
    z = _z(case)
    mem = axis_memory(case)
    region = "src" if case.op == "load" else "dst"
    pc = POINTEE_C[case.ptr] if case.ptr else ctype
    at = f"{region} + w * {rows[region]}" + (f" + {mem.offset // z}" if mem.offset else "")
    stride = "st" if case.rtstride else str(mem.stride)
    lines = [f"  global {pc} *p_ = (global {pc} *)({at});"]
    lay, row = lay_names[case.layout], lay_names["row"]
    if case.op == "load":
        lines += [
            f"  mat m = coop_mat_load(p_, {lay}, {stride});",
            f"  coop_mat_store(out + w * {rows['out']}, m, {row}, {m.cols});",
        ]
    else:
        lines += [
            f"  mat m = coop_mat_load(x + w * {rows['x']}, {row}, {m.cols});",
            f"  coop_mat_store(p_, m, {lay}, {stride});",
        ]
    return lines


# ---------------------------------------------------------------- draft queries
_CAP = 1 << 12  # alignments at or above 4 KiB count as "any"


def _pow2(n: int) -> int:
    """The largest power of two dividing n (bytes; 0 -> any)."""
    return n & -n if n else _CAP


def pointer_facts(case, rows: dict[str, int]) -> tuple[int, list[int]]:
    """(bytes every Load/Store pointer of ``case``'s kernel is aligned to,
    relative to a buffer start; the Strides in bytes) -- what the draft's
    POINTER_ALIGNMENT / STRIDE_MULTIPLE rules are checked against.  Buffers
    themselves are at least 4 KiB aligned on the devices the suite knows
    (CL_DEVICE_MEM_BASE_ADDR_ALIGN); workgroup arrays are declared 64-byte aligned."""
    from cts.families.coop import GEMM_TILES, case_stride

    # buffers a Load/Store points into (not the scalar ones: splat value, length record, Stride)
    size = {n: TYPES[t][3] // 8 for n, t in buffer_args(case) if n not in ("v", "len", "map", "st")}
    align = min((_pow2(rows[n] * size[n]) for n in size), default=_CAP)
    if getattr(case, "ocl_axis", "") not in ("", "sg"):
        mem = axis_memory(case)  # an ARM Stride is an interleave count, no distance: no multiple rule
        return min(align, _pow2(mem.offset)), [] if case.layout in ARM_LAYOUTS else [mem.stride_bytes]
    if case.entry is not None:
        e = case.entry
        za, zb, zc, zr = (TYPES[t][3] // 8 for t in (e.A, e.B, e.C, e.R))
        if case.op == "gemm":
            tm, tn, tk = GEMM_TILES
            align = min(align, _pow2(e.K * za), _pow2(e.N * zb), _pow2(e.N * zc), _pow2(e.N * zr))
            return align, [tk * e.K * za, tn * e.N * zb, tn * e.N * zc, tn * e.N * zr]
        if case.op == "chain":
            align = min(align, _pow2(e.M * e.K * za), _pow2(e.K * e.N * zb))
        a, b = (e.K, e.N) if case.layout == "row" or case.op == "chain" else (e.M, e.K)
        return align, [a * za, b * zb, e.N * zc, e.N * zr]
    m = case.mat
    z = TYPES[m.t][3] // 8
    strides = [m.cols * z] + ([m.cols * TYPES[case.to][3] // 8] if case.to else [])
    if case.op in ("load", "store"):
        strides.append(case_stride(case) * z)
        if case.mem == "workgroup":
            align = min(align, WG_ALIGN)
    return align, strides


def query_violation(case, rows: dict[str, int], alignment: int | None, multiple: int | None) -> str | None:
    """Why ``case`` is undefined under the draft's reported query values
    (cl_khr_cooperative_matrix draft, SPIR-V environment: pointers aligned to max(z, 0x107A), Strides a multiple of
    max(z, 0x107B) bytes), or None."""
    align, strides = pointer_facts(case, rows)
    if alignment and align < alignment:
        return (
            f"its kernel's Load/Store pointers are only {align}-byte aligned, below "
            f"CL_DEVICE_COOPERATIVE_MATRIX_POINTER_ALIGNMENT_KHR (0x107A) = {alignment}"
        )
    bad = sorted({s for s in strides if multiple and s % multiple})
    if bad:
        return (
            f"its Stride of {bad[0]} bytes is no multiple of "
            f"CL_DEVICE_COOPERATIVE_MATRIX_STRIDE_MULTIPLE_KHR (0x107B) = {multiple}"
        )
    return None
