"""Case space of OpRoundFToTF32INTEL (SPV_INTEL_tensor_float32_conversion,
capability TensorFloat32RoundingINTEL 6425, opcode 6426; cl_intel_subgroup_matrix_multiply_accumulate_tf32).

The instruction rounds a 32-bit float, scalar or vector ("Results are
computed per component"), to tf32 with rounding to nearest even.  The
OpenCL _tf32 extension makes accepting it mandatory (cl_intel_subgroup_matrix_multiply_accumulate_tf32); the
OpenCL C built-ins ``intel_convert_tfloat32{n}_as_float{n}`` are the same
rule (family ``intel_tf32_convert``).  The cases mirror those built-ins: the
OpenCL SPIR-V vector sizes 1 (scalar), 2, 3, 4, 8, 16 (8 and 16 with
capability Vector16) x the value tiers ``exact`` (already tf32), ``random``
(any finite bits) and ``special`` (ties with even and odd kept bits, carries
into the exponent, the largest finite, +-inf, NaN, zeros, subnormals).
"""

from __future__ import annotations

from dataclasses import dataclass

from cts.space import space

__all__ = [
    "SpirvTf32RoundCase",
    "spirv_tf32_round_cases",
    "TF32_SPV_EXTENSION",
    "TF32_CAPABILITY",
    "TF32_WIDTHS",
]

TF32_SPV_EXTENSION = "SPV_INTEL_tensor_float32_conversion"
TF32_CAPABILITY = 6425  # TensorFloat32RoundingINTEL
TF32_OPCODE = 6426  # OpRoundFToTF32INTEL
TF32_WIDTHS = (1, 2, 3, 4, 8, 16)
TF32_TIERS = ("exact", "random", "special")


@dataclass(frozen=True)
class SpirvTf32RoundCase:
    """OpRoundFToTF32INTEL on a scalar (width 1) or a vector of ``width``
    32-bit floats, on one value tier."""

    width: int
    tier: str
    family: str = "spirv_tf32_round"

    @property
    def id(self) -> str:
        return f"roundtf32-w{self.width}-{self.tier}"

    @property
    def operand_type(self) -> str:
        return "float" if self.width == 1 else f"v{self.width}float"

    @property
    def spec_row(self) -> str:
        return f"OpRoundFToTF32INTEL %{self.operand_type} (capability 6425)"

    @property
    def extension(self) -> str:
        return TF32_SPV_EXTENSION

    @property
    def module_key(self) -> tuple:
        return (self.family, self.width)

    @property
    def axes(self) -> dict:
        return {"width": self.width, "tier": self.tier}


def spirv_tf32_round_cases(tiers: tuple[str, ...]) -> list[SpirvTf32RoundCase]:
    """6 operand widths x the value tiers (18 cases with every tier)."""
    sp = space().combine("width", TF32_WIDTHS).combine("tier", [t for t in tiers if t in TF32_TIERS])
    return [SpirvTf32RoundCase(p.width, p.tier) for p in sp]
