"""SPIR-V assembly for one OpSubgroupMatrixMultiplyAccumulateINTEL case.

The kernel ``smma`` is deliberately tiny (DESIGN "Kernels are tiny and
generic"): every invocation loads its own register image of A, B and C from
flat buffers, executes the instruction once and stores its Result
components.  All layout knowledge lives on the host (``reference.layout``).

Kernel arguments (all CrossWorkgroup pointers):
``a`` (A container scalars), ``b`` (B words), ``c`` (C container scalars),
``d`` (Result container scalars), ``sgsize`` (uint per invocation, the
subgroup size the device really ran with).

Invocation index ``idx = (WorkgroupId.x * NumSubgroups + SubgroupId) * N +
SubgroupLocalInvocationId``: it does not depend on how a device forms
subgroups from the local range.  Operand j of invocation idx is element
``idx * comps + j`` of its buffer.

Tokens: capability SubgroupMatrixMultiplyAccumulateINTEL (6236), opcode 6237,
extension string and operand literal (SPV_INTEL_subgroup_matrix_multiply_accumulate,
Token Number Assignments, Matrix Multiply Accumulate Operands).
Execution mode SubgroupSize N (SubgroupDispatch) fixes N, which the
instruction takes from the subgroup (SPV_INTEL_subgroup_matrix_multiply_accumulate,
OpSubgroupMatrixMultiplyAccumulateINTEL).

K Dim "must come from a constant instruction" (the instruction's text), which SPIR-V 2.2.1
defines to include the specialization constants: with ``case.kdim == "spec"``
it is ``OpSpecConstant %uint 0`` decorated ``SpecId K_SPEC_ID``, and the
case's K is set at build time (``specialization(case)``: OpenCL
clSetProgramSpecializationConstant, the emulator's own reading).  The
default 0 is never the right K, so a device that builds without the value
set computes an empty product.  The operand literal (the flags) is a literal
operand, not an <id>: it cannot be a specialization constant.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

__all__ = [
    "module_text",
    "control_module_text",
    "specialization",
    "k_dim_operand",
    "ENTRY_POINT",
    "SPIRV_VERSION",
    "K_SPEC_ID",
    "K_SPEC_DEFAULT",
]

ENTRY_POINT = "smma"
SPIRV_VERSION = "spv1.2"  # SubgroupDispatch / SubgroupSize need 1.1; OpenCL 2.2 level
K_SPEC_ID = 1  # SpecId of K Dim in the kdim="spec" modules
K_SPEC_DEFAULT = 0  # its default: never a K of a case (an empty product)


def k_dim_operand(case) -> tuple[int, int | None]:
    """(value or default, SpecId or None) of the module's K Dim constant."""
    if getattr(case, "kdim", "const") == "spec":
        return K_SPEC_DEFAULT, K_SPEC_ID
    return case.k, None


def specialization(case) -> dict[int, int]:
    """SpecId -> 32-bit value to set before the build (empty: nothing to set)."""
    return {K_SPEC_ID: case.k} if getattr(case, "kdim", "const") == "spec" else {}


_INT_NAMES = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}
_FLOAT_NAMES = {16: "half", 32: "float"}


def _scalar(kind: str, bits: int) -> str:
    return _INT_NAMES[bits] if kind == "int" else _FLOAT_NAMES[bits]


def _vec(kind: str, bits: int, n: int) -> str:
    s = _scalar(kind, bits)
    return s if n == 1 else f"v{n}{s}"


def _operand_types(case) -> dict[str, tuple[str, int, int]]:
    """(kind, bits, components) of A, B, C and Result as SPIR-V types.

    Packed integer and packed fp16/bf16 data travel in integer containers,
    tf32 in 32-bit floats (SPV_INTEL_subgroup_matrix_multiply_accumulate, Matrix Multiply Accumulate
    Operands comments); C / Result are the accumulator types, bf16 in a 16-bit integer (with CBFloat16 /
    ResultBFloat16).
    """

    def acc(t: str) -> tuple[str, int]:
        return (
            ("float", 32)
            if t == "f32"
            else ("float", 16)
            if t == "f16"
            else ("int", 16 if t == "bf16" else 32)
        )

    a_kind = "float" if case.a == "tf32" else "int"
    b_kind = "float" if case.b == "tf32" else "int"
    c_kind, c_bits = acc(case.c)
    r_kind, r_bits = acc(case.result)
    return {
        "A": (a_kind, case.a_container_bits, case.a_comps),
        "B": (b_kind, 32, case.b_comps),
        "C": (c_kind, c_bits, case.M),
        "R": (r_kind, r_bits, case.M),
    }


def _header(types: dict, sg: int, with_mma: bool, spec_k: bool = False) -> list[str]:
    used = {(k, b) for k, b, _ in types.values()} | {("int", 32), ("int", 64)}
    comps = {n for _, _, n in types.values()}
    caps = ["Addresses", "Kernel", "Int64", "SubgroupDispatch"]
    if ("int", 16) in used:
        caps.append("Int16")
    if ("int", 8) in used:
        caps.append("Int8")
    if ("float", 16) in used:
        caps.append("Float16")
    if comps & {8, 16}:
        caps.append("Vector16")
    lines = [f"OpCapability {c}" for c in caps]
    if with_mma:
        lines += [
            "OpCapability SubgroupMatrixMultiplyAccumulateINTEL",
            'OpExtension "SPV_INTEL_subgroup_matrix_multiply_accumulate"',
        ]
    lines += [
        "OpMemoryModel Physical64 OpenCL",
        f'OpEntryPoint Kernel %main "{ENTRY_POINT}" %bi_wgid %bi_nsg %bi_sgid %bi_sglid %bi_sgsize',
        f"OpExecutionMode %main SubgroupSize {sg}",
    ]
    for var, name in (
        ("bi_wgid", "WorkgroupId"),
        ("bi_nsg", "NumSubgroups"),
        ("bi_sgid", "SubgroupId"),
        ("bi_sglid", "SubgroupLocalInvocationId"),
        ("bi_sgsize", "SubgroupSize"),
    ):
        lines += [f"OpDecorate %{var} BuiltIn {name}", f"OpDecorate %{var} Constant"]
    if spec_k:
        lines.append(f"OpDecorate %u_k SpecId {K_SPEC_ID}")
    return lines


def _type_section(types: dict) -> list[str]:
    lines = ["%void = OpTypeVoid"]
    scalars = {(k, b) for k, b, _ in types.values()} | {("int", 32), ("int", 64)}
    for kind, bits in sorted(scalars):
        name = _scalar(kind, bits)
        lines.append(f"%{name} = OpTypeInt {bits} 0" if kind == "int" else f"%{name} = OpTypeFloat {bits}")
    vecs = {(k, b, n) for k, b, n in types.values() if n > 1}
    for kind, bits, n in sorted(vecs):
        lines.append(f"%{_vec(kind, bits, n)} = OpTypeVector %{_scalar(kind, bits)} {n}")
    lines += [
        "%v3ulong = OpTypeVector %ulong 3",
        "%p_in_v3ulong = OpTypePointer Input %v3ulong",
        "%p_in_uint = OpTypePointer Input %uint",
    ]
    for kind, bits in sorted(scalars):
        name = _scalar(kind, bits)
        lines.append(f"%p_{name} = OpTypePointer CrossWorkgroup %{name}")
    ptrs = " ".join(f"%p_{_scalar(k, b)}" for k, b, _ in (types[x] for x in "ABCR"))
    lines.append(f"%fn = OpTypeFunction %void {ptrs} %p_uint")
    return lines


def _load(label: str, kind: str, bits: int, n: int, base: str) -> list[str]:
    """Load n scalars from pointer %<label> at element base+j; build a vector."""
    s = _scalar(kind, bits)
    lines = []
    for j in range(n):
        lines += [
            f"%{label}_i{j} = OpIAdd %ulong %{base} %ul_{j}",
            f"%{label}_p{j} = OpInBoundsPtrAccessChain %p_{s} %arg_{label} %{label}_i{j}",
            f"%{label}_e{j} = OpLoad %{s} %{label}_p{j} Aligned {bits // 8}",
        ]
    if n == 1:
        lines.append(f"%{label}_v = OpCopyObject %{s} %{label}_e0")
    else:
        parts = " ".join(f"%{label}_e{j}" for j in range(n))
        lines.append(f"%{label}_v = OpCompositeConstruct %{_vec(kind, bits, n)} {parts}")
    return lines


def _body(types: dict, case, with_mma: bool) -> list[str]:
    biggest = max(n for _, _, n in types.values())
    consts = [f"%ul_{j} = OpConstant %ulong {j}" for j in range(biggest)]
    consts += [f"%ul_n{x} = OpConstant %ulong {types[x][2]}" for x in "ABCR"]
    k_value, spec_id = k_dim_operand(case)
    k_op = "OpConstant" if spec_id is None else "OpSpecConstant"
    consts += [f"%ul_sg = OpConstant %ulong {case.sg}", f"%u_k = {k_op} %uint {k_value}"]
    check_k = spec_id is not None and not with_mma  # control: sgsize += K - case.k (0 once specialised)
    if check_k:
        consts.append(f"%u_kwant = OpConstant %uint {case.k}")
    lines = consts + [
        "%bi_wgid = OpVariable %p_in_v3ulong Input",
        "%bi_nsg = OpVariable %p_in_uint Input",
        "%bi_sgid = OpVariable %p_in_uint Input",
        "%bi_sglid = OpVariable %p_in_uint Input",
        "%bi_sgsize = OpVariable %p_in_uint Input",
        "%main = OpFunction %void None %fn",
    ]
    for x in "ABCR":
        lines.append(f"%arg_{x} = OpFunctionParameter %p_{_scalar(*types[x][:2])}")
    lines += [
        "%arg_S = OpFunctionParameter %p_uint",
        "%entry = OpLabel",
        "%wg3 = OpLoad %v3ulong %bi_wgid Aligned 32",
        "%wg = OpCompositeExtract %ulong %wg3 0",
        "%nsg32 = OpLoad %uint %bi_nsg Aligned 4",
        "%sgid32 = OpLoad %uint %bi_sgid Aligned 4",
        "%lid32 = OpLoad %uint %bi_sglid Aligned 4",
        "%sgs32 = OpLoad %uint %bi_sgsize Aligned 4",
        "%nsg = OpUConvert %ulong %nsg32",
        "%sgid = OpUConvert %ulong %sgid32",
        "%lid = OpUConvert %ulong %lid32",
        "%t0 = OpIMul %ulong %wg %nsg",
        "%t1 = OpIAdd %ulong %t0 %sgid",
        "%t2 = OpIMul %ulong %t1 %ul_sg",
        "%idx = OpIAdd %ulong %t2 %lid",
        "%ps = OpInBoundsPtrAccessChain %p_uint %arg_S %idx",
    ]
    if check_k:
        lines += [
            "%kdiff = OpISub %uint %u_k %u_kwant",
            "%sgs_out = OpIAdd %uint %sgs32 %kdiff",
            "OpStore %ps %sgs_out Aligned 4",
        ]
    else:
        lines.append("OpStore %ps %sgs32 Aligned 4")
    for x in "ABC":
        lines.append(f"%base_{x} = OpIMul %ulong %idx %ul_n{x}")
        lines += _load(x, *types[x], f"base_{x}")
    rk, rb, rn = types["R"]
    rs, rv = _scalar(rk, rb), _vec(rk, rb, rn)
    if with_mma:
        # BitEnum as spirv-as writes it: names joined by "|".  spirv-as maps the
        # names back to bits with SPIRV-Headers' grammar, so a wrong bit in the
        # case generator's FLAG table shows up as a literal word differing from
        # case.literal in the binary (tests/test_spirv_cases.py).
        lit = " " + "|".join(case.flag_names) if case.literal else ""
        lines.append(f"%res = OpSubgroupMatrixMultiplyAccumulateINTEL %{rv} %u_k %A_v %B_v %C_v{lit}")
    else:  # control module: same interface and types, Result = C when types agree
        lines.append(f"%res = OpCopyObject %{rv} %C_v")
    lines.append("%base_R = OpIMul %ulong %idx %ul_nR")
    for j in range(rn):
        val = "%res" if rn == 1 else f"%r_e{j}"
        if rn > 1:
            lines.append(f"%r_e{j} = OpCompositeExtract %{rs} %res {j}")
        lines += [
            f"%r_i{j} = OpIAdd %ulong %base_R %ul_{j}",
            f"%r_p{j} = OpInBoundsPtrAccessChain %p_{rs} %arg_R %r_i{j}",
            f"OpStore %r_p{j} {val} Aligned {rb // 8}",
        ]
    lines += ["OpReturn", "OpFunctionEnd"]
    return lines


def module_text(case) -> str:
    """The SPIR-V assembly of ``case`` (depends on ``case.module_key`` only,
    so the text is made once per module, not per tier)."""
    return _module_text(replace(case, tier=""))


@cache
def _module_text(case) -> str:
    types = _operand_types(case)
    lines = (
        [f"; {case.spec_row}"]
        + _header(types, case.sg, True, k_dim_operand(case)[1] is not None)
        + _type_section(types)
        + _body(types, case, True)
    )
    return "\n".join(lines) + "\n"


def control_module_text(case, declare_capability: bool = False) -> str:
    """The same kernel without the instruction (Result = C).  With
    ``declare_capability`` it still declares capability 6236 and the
    extension: a device that does not support them must refuse to build it
    (the rejection test), while the plain control must build anywhere.  With
    K Dim a specialization constant, each invocation stores its subgroup size
    plus (K Dim - case.k): the size itself once the build set K."""
    types = _operand_types(case)
    if types["R"] != types["C"]:
        raise ValueError("control module needs C and Result of one type")
    spec_k = k_dim_operand(case)[1] is not None
    lines = (
        _header(types, case.sg, declare_capability, spec_k) + _type_section(types) + _body(types, case, False)
    )
    return "\n".join(lines) + "\n"
