"""Kernels of the subgroup built-ins family (cts.families.subgroup_builtins):
every work-item writes what the five built-ins tell it, in the order of
:data:`cts.families.subgroup_builtins.BUILTINS`, to ``info[5 * g + k]``.

* OpenCL C: ``get_sub_group_size()``, ``get_sub_group_id()``,
  ``get_sub_group_local_id()``, ``get_num_sub_groups()``,
  ``get_max_sub_group_size()`` (OpenCL C 3.0, 6.15.1), with
  ``intel_reqd_sub_group_size(N)`` where the device has
  cl_intel_required_subgroup_size (``reqd``).
* SPIR-V 1.1 (``OpExecutionMode SubgroupSize``, capability
  SubgroupDispatch, needs 1.1; PoCL takes 1.0-1.2): the Input variables
  decorated ``BuiltIn SubgroupSize``, ``SubgroupId``,
  ``SubgroupLocalInvocationId``, ``NumSubgroups``, ``SubgroupMaxSize``
  (Kernel capability; OpenCL SPIR-V environment, "Built-in Variables").
  Without ``reqd`` the module declares no size (a device of one size).
"""

from __future__ import annotations

__all__ = ["SGB_ENTRY", "SGB_WORDS", "sgb_cl_program", "sgb_spv_module", "SGB_SPV_ENV"]

SGB_ENTRY = "sgb_k"
SGB_WORDS = 5  # uint words per work-item
SGB_SPV_ENV = "spv1.1"


def sgb_cl_program(sg: int, reqd: bool = True) -> str:
    attr = f"__attribute__((intel_reqd_sub_group_size({sg})))\n" if reqd else ""
    what = f"required subgroup size {sg}" if reqd else f"subgroup size {sg}, the device's only one"
    return (
        f"/* subgroup built-ins, {what} */\n{attr}"
        f"kernel void {SGB_ENTRY}(global uint* info)\n"
        "{\n"
        "    size_t g = get_global_id(0);\n"
        "    info[5 * g + 0] = get_sub_group_size();\n"
        "    info[5 * g + 1] = get_sub_group_id();\n"
        "    info[5 * g + 2] = get_sub_group_local_id();\n"
        "    info[5 * g + 3] = get_num_sub_groups();\n"
        "    info[5 * g + 4] = get_max_sub_group_size();\n"
        "}\n"
    )


_SPV_BUILTINS = ("SubgroupSize", "SubgroupId", "SubgroupLocalInvocationId", "NumSubgroups", "SubgroupMaxSize")


def sgb_spv_module(sg: int, reqd: bool = True) -> str:
    """Assembly of the SPIR-V form (OpenCL environment, Physical64)."""
    names = [f"%b{k}" for k in range(len(_SPV_BUILTINS))]
    L = [f"; subgroup built-ins, SubgroupSize {sg}" if reqd else f"; subgroup built-ins, subgroup size {sg}"]
    L += ["OpCapability Addresses", "OpCapability Kernel", "OpCapability Int64"]
    if reqd:
        L.append("OpCapability SubgroupDispatch")
    L += ["OpMemoryModel Physical64 OpenCL", f'OpEntryPoint Kernel %k "{SGB_ENTRY}" %gid {" ".join(names)}']
    if reqd:
        L.append(f"OpExecutionMode %k SubgroupSize {sg}")
    L += ["OpDecorate %gid BuiltIn GlobalInvocationId", "OpDecorate %gid Constant"]
    for n, bi in zip(names, _SPV_BUILTINS):
        L += [f"OpDecorate {n} BuiltIn {bi}", f"OpDecorate {n} Constant"]
    L += [
        "%void = OpTypeVoid",
        "%uint = OpTypeInt 32 0",
        "%ulong = OpTypeInt 64 0",
        "%v3ulong = OpTypeVector %ulong 3",
        "%p_uint = OpTypePointer CrossWorkgroup %uint",
        "%in_v3ulong = OpTypePointer Input %v3ulong",
        "%in_uint = OpTypePointer Input %uint",
        "%fn = OpTypeFunction %void %p_uint",
        "%gid = OpVariable %in_v3ulong Input",
    ]
    L += [f"{n} = OpVariable %in_uint Input" for n in names]
    L += [f"%l{k} = OpConstant %ulong {k}" for k in range(len(names))]
    L += [
        "%l5 = OpConstant %ulong 5",
        "%k = OpFunction %void None %fn",
        "%info = OpFunctionParameter %p_uint",
        "%entry = OpLabel",
        "%gid3 = OpLoad %v3ulong %gid",
        "%g = OpCompositeExtract %ulong %gid3 0",
        "%base = OpIMul %ulong %g %l5",
    ]
    for k, n in enumerate(names):
        L += [
            f"%v{k} = OpLoad %uint {n}",
            f"%i{k} = OpIAdd %ulong %base %l{k}",
            f"%p{k} = OpInBoundsPtrAccessChain %p_uint %info %i{k}",
            f"OpStore %p{k} %v{k}",
        ]
    L += ["OpReturn", "OpFunctionEnd"]
    return "\n".join(L) + "\n"
