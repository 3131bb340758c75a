"""The MLIR family through upstream mlir-opt on a real Vulkan driver
(lavapipe in CI where prepared, the H100 on the GPU machine; skipped with
the reason where there is no device, no cooperative matrix or no MLIR tools).

* Cases of every op run and pass through MLIR -> mlir-opt -> SPIR-V -> the
  device, at the device's own subgroup size and shapes.
* Wrong MLIR texts (the case's text with ``transpose`` dropped, a
  leadDimension off by one, a gpu.rotate width doubled) are valid MLIR that
  mlir-opt lowers without complaint (tests/test_mlir_text.py); the device
  run through the real lowering catches each of them.
* The si8 product the lowering gets wrong (it drops the SPIR-V signedness
  operands) is the lowering's fault, not the driver's: the same binary with
  MatrixA/B/C/ResultSignedComponentsKHR added passes on the device.

``CTS_VULKAN_DEVICE`` picks the device by name (default: the backend's choice).
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from cts.errors import BackendError, CaseError
from cts.families.mlir import mlir_cases
from cts.runs.mlir import run_mlir
from tests.conftest import vulkan_or_skip

SEED = 3


@pytest.fixture(scope="module")
def vk():
    vulkan_or_skip()
    from cts.backends.vulkan import VulkanBackend
    from cts.kernels import mlir_tools

    try:
        mlir_tools.tool_version()
    except mlir_tools.MlirToolError as e:
        pytest.skip(f"no MLIR tools ({mlir_tools.PACKAGE}): {e}")
    try:
        b = VulkanBackend.from_options(device=os.environ.get("CTS_VULKAN_DEVICE"))
    except (BackendError, OSError) as e:
        pytest.skip(f"no Vulkan device: {e}")
    if b.reason or b.coop_reason:
        pytest.skip(b.reason or b.coop_reason)
    yield b
    b.close()


def runnable(vk, pattern: str):
    """The cases whose id matches ``pattern`` that the device can run."""
    return [c for c in mlir_cases() if re.fullmatch(pattern, c.id) and vk.unsupported(c) is None]


def passed(vk, case) -> bool:
    try:
        return run_mlir(case, vk, SEED).verdict.passed
    except CaseError:  # e.g. a broken thread-local map: caught too
        return False


PICKS = (
    r"load_store-(f16|f32)-padded-loadT-storeN.*",
    r"compute-f16_f16_f32-aT-bT-padded.*",
    r"compute-ui8_ui8_i32-aN-bT-tight.*",
    r"constant-(COp-f32|AOp-f16).*",
    r"elementwise-(addf|divf|negatef|extf|divs)-.*",
    r"thread_local-(COp-f32|AOp-f16|BOp-f16).*",
    r"gpu_rotate-(i32|f16x3)-sg\d+-w\d+-off1",
    r"mma_rotate-(AOp-f16|COp-f32)-sg\d+-off1.*",
)


@pytest.mark.parametrize("pattern", PICKS)
def test_mlir_cases_pass_through_the_real_lowering(vk, pattern):
    cases = runnable(vk, pattern)
    if not cases:
        pytest.skip(f"{vk.info.name}: no case matching {pattern} at its subgroup size / shapes")
    bad = [c.id for c in cases[:6] if not passed(vk, c)]
    assert not bad, bad


def _mutant(change):
    """A backend text hook that applies ``change`` to the real text."""

    def hook(real):
        def text(case, prog, target):
            good = real(case, prog, target)
            bad = change(good)
            assert bad != good, "the mutation did not apply"
            return bad

        return text

    return hook


def _drop_transpose(text):
    return text.replace(", transpose}", "}", 1)


def _lead_plus_one(text):
    return re.sub(
        r"leadDimension = (\d+) ", lambda m: f"leadDimension = {int(m.group(1)) + 1} ", text, count=1
    )


def _double_width(text):
    return re.sub(
        r"(gpu.rotate %\w+, \d+, )(\d+)", lambda m: f"{m.group(1)}{2 * int(m.group(2))}", text, count=1
    )


MUTANTS = {
    "transpose dropped": (r"compute-f16_f16_f32-aT-bN-padded.*|load_store-f32-tight-loadT-storeN.*", _drop_transpose),
    "leadDimension off by one": (r"load_store-f32-padded-loadN-storeN.*", _lead_plus_one),
    "rotate width doubled": (r"gpu_rotate-i32-sg\d+-w(2|4|8|16)-off1", _double_width),
}  # fmt: skip


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_a_wrong_mlir_text_is_caught_through_the_real_lowering(vk, mutant, monkeypatch):
    pattern, change = MUTANTS[mutant]
    cases = [c for c in runnable(vk, pattern) if c.op != "gpu_rotate" or 2 * c.width <= c.sg]
    if not cases:
        pytest.skip(f"{vk.info.name}: no case matching {pattern}")
    case = cases[0]
    assert passed(vk, case), f"control: {case.id} must pass with the real text"
    real = vk.mlir_module_text
    monkeypatch.setattr(vk, "mlir_module_text", _mutant(change)(real))
    assert not passed(vk, case), f"{mutant} in {case.id} was not caught on {vk.info.name}"


@pytest.mark.e2e
def test_the_si8_failure_is_the_lowering_not_the_driver(vk, monkeypatch, tmp_path):
    """convert-gpu-to-spirv writes OpCooperativeMatrixMulAddKHR on si8
    matrices without the signedness operands: the device multiplies them
    as unsigned (the case fails, and the lowered module carries the
    finding); the same binary with the operands added passes."""
    from cts.kernels import mlir_tools
    from cts.kernels.spirv_tools import tool_path

    cases = runnable(vk, r"compute-si8_si8_i32-aN-bN-tight.*")
    if not cases:
        pytest.skip(f"{vk.info.name}: no s8 x s8 + s32 entry")
    case = cases[0]
    assert not passed(vk, case)
    tool, findings = vk.take_module_findings()  # the evidence that makes the wrong result the tool's
    assert tool.startswith("mlir-opt") and any("without MatrixASignedComponentsKHR" in f for f in findings), (
        findings
    )
    real = mlir_tools.to_spirv

    def with_signedness(text, val_env="vulkan1.3"):
        code, meta = real(text, val_env)
        spv, asm = tmp_path / "m.spv", tmp_path / "m.spvasm"
        spv.write_bytes(code)
        dis = subprocess.run(
            [tool_path("spirv-dis"), "--raw-id", str(spv)], capture_output=True, text=True
        ).stdout
        flags = "|".join(f"Matrix{x}SignedComponentsKHR" for x in ("A", "B", "C", "Result"))
        fixed, n = re.subn(r"(OpCooperativeMatrixMulAddKHR( %\d+){4})\s*$", rf"\1 {flags}", dis, flags=re.M)
        assert n == 1
        asm.write_text(fixed)
        subprocess.run(
            [tool_path("spirv-as"), "--target-env", "spv1.6", str(asm), "-o", str(spv)], check=True
        )
        return spv.read_bytes(), meta

    monkeypatch.setattr(mlir_tools, "to_spirv", with_signedness)
    assert passed(vk, case), "the signed product is still wrong: the driver's fault, not only the lowering's"
