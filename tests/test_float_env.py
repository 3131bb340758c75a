"""The execution environment's float rules in the verdict (cts/judge/env.py):
what a Vulkan module without SignedZeroInfNanPreserve / DenormPreserve
leaves undefined is counted and named, not judged; the emulator's legal-
latitude variants pass where the latitude exists and fail where the module
declares the mode (or in IEEE arithmetic)."""

import numpy as np
import pytest

from cts.backends.base import CaseError
from cts.backends.emulator import EmulatorBackend
from cts.families.mlir import mlir_cases
from cts.judge.env import IEEE, VULKAN, VULKAN_PRESERVE, vulkan_env_from_spirv
from cts.runs.mlir import run_mlir

# the special-data elementwise cases (and divf's plain data) the latitude variants touch, f16 and f32
CASES = [
    c
    for c in mlir_cases()
    if c.op == "elementwise" and c.elem in ("f16", "f32") and c.sg == 16 and (c.data or c.optype == "divf")
]


def _failing(faults):
    be = EmulatorBackend(faults)
    out, undefined = [], 0
    for c in CASES:
        try:
            v = run_mlir(c, be, 1).verdict
        except CaseError:
            out.append(c.id)
            continue
        undefined += sum(v.undefined.values())
        if not v.passed:
            out.append(c.id)
    return out, undefined


def test_the_cases_exist():
    assert len(CASES) > 40 and any(c.id == "elementwise-negatef-f16-zero" for c in CASES)


@pytest.mark.parametrize("env", [(), ("env_vulkan",), ("env_vulkan_preserve",)])
def test_an_ieee_device_passes_every_environment(env):
    bad, _ = _failing(env)
    assert bad == []


# variant -> the case that must show it where the latitude does not exist
LATITUDE = {
    "lat_negate_as_sub": "elementwise-negatef-f16-zero",
    "lat_inf_as_nan": "elementwise-addf-f32-inf",
    "lat_flush_denorms": "elementwise-addf-f32-subnormal",
    "lat_fdiv_out_of_range": "elementwise-divf-f32-zero",
}


@pytest.mark.parametrize("variant", list(LATITUDE))
def test_a_latitude_passes_without_the_mode(variant):
    bad, undefined = _failing((variant, "env_vulkan"))
    assert bad == [] and undefined > 0


@pytest.mark.parametrize("variant", list(LATITUDE))
def test_a_latitude_fails_where_the_module_declares_the_mode_or_in_ieee(variant):
    ieee, _ = _failing((variant,))
    if variant == "lat_flush_denorms":  # IEEE environments keep accepting a flush (OpenCL, PTX .ftz)
        assert ieee == []
    else:
        assert LATITUDE[variant] in ieee
    preserve, _ = _failing((variant, "env_vulkan_preserve"))
    if variant == "lat_fdiv_out_of_range":  # no mode bounds OpFDiv outside its range: still legal
        assert preserve == []
    else:
        assert LATITUDE[variant] in preserve


def test_the_known_offender_is_judged_by_the_environment():
    """elementwise-negatef-f16-zero on a module without SignedZeroInfNanPreserve:
    a 0 - x device is not failed; the zeros whose sign differs are named."""
    case = next(c for c in CASES if c.id == "elementwise-negatef-f16-zero")
    v = run_mlir(case, EmulatorBackend(("lat_negate_as_sub", "env_vulkan")), 1).verdict
    assert v.passed
    (reason,) = [k for k in v.undefined if "sign of a zero" in k]
    assert "no SignedZeroInfNanPreserve for 16-bit floats" in reason
    assert "undefined by the environment" in v.summary()


def test_undefined_reasons_name_the_divisor_range():
    x = np.array([1.0, 1.0, 1.0, 1.0])
    y = np.array([2.0**-127, 2.0, 2.0**127, 0.0])
    und = VULKAN_PRESERVE.undefined("divf", [x, y], x / y, x / y, 32)
    assert (
        list(und) == ["divisor outside [2^-126, 2^126]"] and und["divisor outside [2^-126, 2^126]"].sum() == 3
    )
    assert IEEE.undefined("divf", [x, y], x / y, x / y, 32) == {}
    assert "divisor outside [2^-14, 2^14]" in VULKAN.undefined("divf", [x, y], x / y, x / y, 16)


def test_a_zero_of_the_same_sign_is_not_counted():
    e = np.array([0.0, -0.0, 1.0])
    und = VULKAN.undefined("negatef", [e], e, np.array([0.0, 0.0, 1.0]), 32)
    (mask,) = [m for k, m in und.items() if "sign of a zero" in k]
    assert mask.tolist() == [False, True, False]


def test_modes_are_read_from_the_module():
    from cts.kernels.rotate_spv import assemble
    from cts.kernels.rotate_vk import VK_TARGET_ENV

    text = """
               OpCapability Shader
               OpCapability SignedZeroInfNanPreserve
               OpCapability DenormPreserve
               OpExtension "SPV_KHR_float_controls"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpExecutionMode %main SignedZeroInfNanPreserve 32
               OpExecutionMode %main DenormPreserve 16
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"""
    env = vulkan_env_from_spirv(assemble(text, VK_TARGET_ENV))
    assert env.signed_zero_inf_nan == {32} and env.denorm_preserve == {16} and env.fdiv_range
    assert vulkan_env_from_spirv(b"") == VULKAN
