"""SPIR-V assembly for one OpRoundFToTF32INTEL case (a Kernel module, OpenCL
memory model).

Kernel ``roundtf32(x, y)`` (CrossWorkgroup float pointers): work-item ``i``
loads floats ``i*w .. i*w+w-1`` of ``x`` (composed into a vector of ``w``
components, or one scalar for ``w`` = 1), rounds them with one
OpRoundFToTF32INTEL and stores the result components at the same places of
``y``.  Tokens: capability TensorFloat32RoundingINTEL (6425), extension
SPV_INTEL_tensor_float32_conversion, opcode 6426 (cl_intel_subgroup_matrix_multiply_accumulate_tf32; the
SPIR-V registry's extension text, rev 3).  ``control_module_text`` is the
same kernel with ``y = x`` and without the capability (plumbing checks).
"""

from __future__ import annotations

from functools import cache

__all__ = ["module_text", "control_module_text", "ENTRY_POINT"]

ENTRY_POINT = "roundtf32"


def _text(width: int, with_round: bool) -> str:
    vt = "float" if width == 1 else f"v{width}float"
    caps = ["Addresses", "Kernel", "Int64"] + (["Vector16"] if width >= 8 else [])
    lines = [f"; OpRoundFToTF32INTEL %{vt}"] + [f"OpCapability {c}" for c in caps]
    if with_round:
        lines += [
            "OpCapability TensorFloat32RoundingINTEL",
            'OpExtension "SPV_INTEL_tensor_float32_conversion"',
        ]
    lines += [
        "OpMemoryModel Physical64 OpenCL",
        f'OpEntryPoint Kernel %main "{ENTRY_POINT}" %bi_gid',
        "OpDecorate %bi_gid BuiltIn GlobalInvocationId",
        "OpDecorate %bi_gid Constant",
        "%void = OpTypeVoid",
        "%float = OpTypeFloat 32",
        "%ulong = OpTypeInt 64 0",
        "%v3ulong = OpTypeVector %ulong 3",
    ]
    if width > 1:
        lines.append(f"%{vt} = OpTypeVector %float {width}")
    lines += [
        "%p_in_v3ulong = OpTypePointer Input %v3ulong",
        "%p_float = OpTypePointer CrossWorkgroup %float",
        "%fn = OpTypeFunction %void %p_float %p_float",
        f"%ul_w = OpConstant %ulong {width}",
    ]
    lines += [f"%ul_{j} = OpConstant %ulong {j}" for j in range(width)]
    lines += [
        "%bi_gid = OpVariable %p_in_v3ulong Input",
        "%main = OpFunction %void None %fn",
        "%x = OpFunctionParameter %p_float",
        "%y = OpFunctionParameter %p_float",
        "%entry = OpLabel",
        "%gid3 = OpLoad %v3ulong %bi_gid Aligned 32",
        "%gid = OpCompositeExtract %ulong %gid3 0",
        "%base = OpIMul %ulong %gid %ul_w",
    ]
    for j in range(width):
        lines += [
            f"%i{j} = OpIAdd %ulong %base %ul_{j}",
            f"%px{j} = OpInBoundsPtrAccessChain %p_float %x %i{j}",
            f"%e{j} = OpLoad %float %px{j} Aligned 4",
        ]
    if width == 1:
        lines.append("%v = OpCopyObject %float %e0")
    else:
        lines.append(f"%v = OpCompositeConstruct %{vt} " + " ".join(f"%e{j}" for j in range(width)))
    op = "OpRoundFToTF32INTEL" if with_round else "OpCopyObject"
    lines.append(f"%r = {op} %{vt} %v")
    for j in range(width):
        val = "%r" if width == 1 else f"%r{j}"
        if width > 1:
            lines.append(f"%r{j} = OpCompositeExtract %float %r {j}")
        lines += [
            f"%py{j} = OpInBoundsPtrAccessChain %p_float %y %i{j}",
            f"OpStore %py{j} {val} Aligned 4",
        ]
    lines += ["OpReturn", "OpFunctionEnd"]
    return "\n".join(lines) + "\n"


@cache
def module_text(width: int) -> str:
    """The module rounding ``width`` floats per work-item (1 = scalar)."""
    return _text(width, True)


def control_module_text(width: int) -> str:
    """The same kernel with ``y = x`` and no capability 6425."""
    return _text(width, False)
