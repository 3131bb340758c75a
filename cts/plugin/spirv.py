"""pytest options of the SPIR-V subgroup-MMA family (registered in
``cts.plugin.ROOM_PLUGINS``).

* ``--spirv-extended``: besides the 92 combinations the OpenCL SPIR-V
  environment requires (cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V
  Environment Specification), enumerate the ``extended`` tier:
  the other combinations the instruction's mapping rules define (subgroup
  sizes 4 and 32, other K, mixed C / Result precision).  Off by default.
"""

from __future__ import annotations

import pytest

from cts.families.spirv_intel import SpirvMmaCase, spirv_intel_cases

__all__ = ["spirv_cases", "extended_enabled"]

_STATE = {"extended": False}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--spirv-extended",
        action="store_true",
        default=False,
        help="SPIR-V subgroup MMA: also enumerate the extended combinations beyond the 92 "
        "the OpenCL SPIR-V environment requires (N = 4 and 32, other K, mixed C/Result types)",
    )


def pytest_configure(config: pytest.Config) -> None:
    _STATE["extended"] = bool(getattr(config.option, "spirv_extended", False))


def cts_rerun_args(config: pytest.Config) -> list[str]:
    return ["--spirv-extended"] if getattr(config.option, "spirv_extended", False) else []


def extended_enabled() -> bool:
    return _STATE["extended"]


def spirv_cases(tiers: tuple[str, ...]) -> list[SpirvMmaCase]:
    """The case function of cases/test_spirv_intel_mma.py."""
    return spirv_intel_cases(tiers, extended=extended_enabled())
