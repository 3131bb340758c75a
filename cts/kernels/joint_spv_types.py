"""The SPIR-V words of the joint_matrix modules that both the module builder
(``cts.kernels.joint_spv``) and the instructions of a case
(``cts.kernels.joint_spv_ops``) use: the element types, the layout and use
ids, and the Cooperative Matrix Operands of a MulAdd (SPV_KHR_cooperative_matrix
"Cooperative Matrix Operands"; SPV_INTEL_joint_matrix rev 16 for the bf16 /
tf32 interpretation bits)."""

from __future__ import annotations

__all__ = ["ELEM", "LAYOUT_IDS", "USE_IDS", "OPERAND_TF32", "OPERAND_BF16", "muladd_operands"]


OPERAND_TF32 = 0x20  # MatrixAAndBTF32ComponentsINTEL


OPERAND_BF16 = {"ab": 0x40, "c": 0x80, "result": 0x100}  # Matrix*BFloat16ComponentsINTEL


LAYOUT_IDS = {"row": 0, "col": 1, "packed": 2}


USE_IDS = {"a": 0, "b": 1, "acc": 2}


KHR_OPERANDS = (
    (0x1, "MatrixASignedComponentsKHR"),
    (0x2, "MatrixBSignedComponentsKHR"),
    (0x4, "MatrixCSignedComponentsKHR"),
    (0x8, "MatrixResultSignedComponentsKHR"),
)


# joint type -> (SPIR-V id, declaration, capability, bits, kind); bf16 is 16-bit
# integer storage interpreted by the MulAdd operand, tf32 a 32-bit float
ELEM: dict[str, tuple[str, str, str, int, str]] = {
    "i8": ("%u8", "OpTypeInt 8 0", "Int8", 8, "int"),
    "u8": ("%u8", "OpTypeInt 8 0", "Int8", 8, "uint"),
    "i16": ("%u16", "OpTypeInt 16 0", "Int16", 16, "int"),
    "i32": ("%u32", "OpTypeInt 32 0", "", 32, "int"),
    "f16": ("%f16", "OpTypeFloat 16", "Float16", 16, "float"),
    "bf16": ("%u16", "OpTypeInt 16 0", "Int16", 16, "bf16"),
    "f32": ("%f32", "OpTypeFloat 32", "", 32, "float"),
    "tf32": ("%f32", "OpTypeFloat 32", "", 32, "tf32"),
    "f64": ("%f64", "OpTypeFloat 64", "Float64", 64, "float"),
    "u16": ("%u16", "OpTypeInt 16 0", "Int16", 16, "uint"),
    "u32": ("%u32", "OpTypeInt 32 0", "", 32, "uint"),
    "u64": ("%u64", "OpTypeInt 64 0", "", 64, "uint"),
}


def _operand_bits(case) -> tuple[list[str], int]:
    """(KHR operand names, INTEL operand bits) of the MulAdd (SPV_KHR_cooperative_matrix
    and the cl_khr_cooperative_matrix draft: a Signed bit exactly for each signed integer type; INTEL
    interpretation bits for bf16 / tf32 components)."""
    a, b, c, d = case.types
    names = []
    for (_bit, name), t in zip(KHR_OPERANDS, (a, b, c, d)):
        if ELEM[t][4] == "int":
            names.append(name)
    intel = 0
    if a == "bf16" and b == "bf16":
        intel |= OPERAND_BF16["ab"]
    if a == "tf32" and b == "tf32":
        intel |= OPERAND_TF32
    if c == "bf16":
        intel |= OPERAND_BF16["c"]
    if d == "bf16":
        intel |= OPERAND_BF16["result"]
    return names, intel


def muladd_operands(case) -> tuple[str, str, str | None]:
    """(device operand text, twin operand text, INTEL capability key or None)."""
    names, intel = _operand_bits(case)
    khr = sum(bit for bit, n in KHR_OPERANDS if n in names)
    twin = (" " + "|".join(names)) if names else ""
    if not intel:
        return twin, twin, None
    cap = "tf32" if intel & OPERAND_TF32 else "bf16"
    return f" !{khr | intel}", twin, cap
