"""The buffer contract of the OpenCL form of cooperative matrix, shared by
its SPIR-V kernels (``cts.kernels.coop_cl_spv``), its OpenCL C kernels
(``cts.kernels.coop_cl_c``) and the Load / Store axes
(``cts.kernels.coop_cl_axes``): the component types and their widths, the
kernel arguments of a case in order, the alignment of a workgroup array
(cl_khr_cooperative_matrix draft, query 0x107A) and the arguments passed by
value."""

from __future__ import annotations

__all__ = ["TYPES", "WG_ALIGN", "SCALAR_ARGS", "buffer_args"]


WG_ALIGN = 64  # bytes a workgroup array is aligned to (its Load/Store pointer, 0x107A)


SCALAR_ARGS = ("st",)  # ``rtstride``: the Stride as a ulong kernel argument


# component type -> (SPIR-V id, declaration, capability, width, kind)
TYPES: dict[str, tuple[str, str, str, int, str]] = {
    "i8": ("%u8", "OpTypeInt 8 0", "Int8", 8, "int"),
    "u8": ("%u8", "OpTypeInt 8 0", "Int8", 8, "uint"),
    "i16": ("%u16", "OpTypeInt 16 0", "Int16", 16, "int"),
    "u16": ("%u16", "OpTypeInt 16 0", "Int16", 16, "uint"),
    "i32": ("%u32", "OpTypeInt 32 0", "", 32, "int"),
    "u32": ("%u32", "OpTypeInt 32 0", "", 32, "uint"),
    "i64": ("%u64", "OpTypeInt 64 0", "", 64, "int"),
    "u64": ("%u64", "OpTypeInt 64 0", "", 64, "uint"),
    "f16": ("%f16", "OpTypeFloat 16", "Float16", 16, "float"),
    "f32": ("%f32", "OpTypeFloat 32", "", 32, "float"),
    "f64": ("%f64", "OpTypeFloat 64", "Float64", 64, "float"),
}


def buffer_args(case) -> list[tuple[str, str]]:
    """(buffer name, component type) in kernel-argument order."""
    op, m, e = case.op, case.mat, case.entry
    if op in ("muladd", "chain", "gemm"):
        return [("a", e.A), ("b", e.B), ("c", e.C), ("d", e.R)]
    t = m.t
    return {
        "length": [("lo", t), ("hi", t), ("len", "u32"), ("map", "u32")],
        "access": [("x", t), ("out", t)],
        "splat": [("v", t), ("out", t)],
        "load": [("src", t), ("out", t)],
        "store": [("x", t), ("dst", t)],
        "convert": [("x", t), ("out", case.to or t)],
    }.get(op, [("x", t), ("y", t), ("out", t)]) + (
        [("st", "u64")] if getattr(case, "rtstride", False) else []
    )
