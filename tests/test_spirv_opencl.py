"""SPIR-V subgroup MMA on OpenCL: support detection (unit, with a fake
device), and on a real OpenCL device when one is present (Intel's CPU
runtime in CI, local-runtimes 2.4): the capability skip reason of every
case (with what the runtime does with a module declaring 6236), and the kernel plumbing of the
generated modules checked through the control module (Result = C)."""

import dataclasses

import numpy as np
import pytest

from cts.backends import BackendError, make_backend
from cts.backends.base import DeviceInfo
from cts.backends.opencl_spirv import MIN_VERSION, SpirvOpenCL, make_version
from cts.families.spirv_intel import SpirvMmaCase, spirv_intel_cases
from cts.kernels.spirv_intel import control_module_text
from cts.kernels.spirv_tools import assemble
from cts.runs.spirv import case_registers, crosscheck_cases


# ------------------------------------------------------------ detection
class _NV:
    def __init__(self, name, version):
        self.name, self.version = name, version


class FakeDevice(SpirvOpenCL):
    name = "fake"

    def __init__(self, exts=(), caps=(), spv=(), versions=(), sizes=(8, 16, 32), il="SPIR-V_1.2"):
        self._exts, self._caps, self._spv, self._il = set(exts), caps, spv, il
        self.device = type("D", (), {"extensions_with_version": [_NV(n, v) for n, v in versions]})()
        self._info = DeviceInfo("opencl", "FakeGPU", extensions=tuple(exts), subgroup_sizes=sizes)

    def describe(self):
        return self._info

    def has_extension(self, name):
        return name in self._exts


@pytest.fixture
def fake_queries(monkeypatch):
    from cts.backends import clquery

    monkeypatch.setattr(clquery, "il_version", lambda d: FakeDevice.current._il)
    monkeypatch.setattr(clquery, "spirv_capabilities", lambda d: tuple(FakeDevice.current._caps))
    monkeypatch.setattr(clquery, "spirv_extensions", lambda d: tuple(FakeDevice.current._spv))

    def make(**kw):
        FakeDevice.current = FakeDevice(**kw)
        return FakeDevice.current

    return make


def test_make_version():
    assert MIN_VERSION == make_version(1, 1, 0) == 0x401000


def test_detect_by_spirv_queries(fake_queries):
    dev = fake_queries(
        exts=("cl_khr_spirv_queries",), caps=(6236,), spv=("SPV_INTEL_subgroup_matrix_multiply_accumulate",)
    )
    assert dev.spirv_mma_unsupported(16) is None


def test_detect_by_extension_version(fake_queries):
    ok = fake_queries(versions=[("cl_intel_subgroup_matrix_multiply_accumulate", make_version(1, 1, 0))])
    assert ok.spirv_mma_unsupported(8) is None
    old = fake_queries(versions=[("cl_intel_subgroup_matrix_multiply_accumulate", make_version(1, 0, 0))])
    assert "version 1.0.0" in old.spirv_mma_unsupported(8)


def test_capability_without_extension_string_is_not_enough(fake_queries):
    dev = fake_queries(exts=("cl_khr_spirv_queries",), caps=(6236,))
    assert "no SPV_INTEL_subgroup_matrix_multiply_accumulate" in dev.spirv_mma_unsupported(8)


def test_no_il_is_a_reason(fake_queries):
    assert "accepts no SPIR-V IL" in fake_queries(il="").spirv_mma_unsupported(8)


def test_required_rows_follow_the_minimum_subgroup_size(fake_queries):
    kw = dict(
        exts=("cl_khr_spirv_queries", "cl_intel_subgroup_matrix_multiply_accumulate_tf32"),
        caps=(6236,),
        spv=("SPV_INTEL_subgroup_matrix_multiply_accumulate",),
    )
    dev = fake_queries(sizes=(8, 16, 32), **kw)
    reasons = {c.sg: dev.unsupported_spirv_intel_mma(c) for c in spirv_intel_cases(("exact",))}
    assert reasons[8] is None
    assert "minimum subgroup size of FakeGPU is 8" in reasons[16]
    dev = fake_queries(sizes=(16, 32), **kw)
    reasons = {c.sg: dev.unsupported_spirv_intel_mma(c) for c in spirv_intel_cases(("exact",))}
    assert reasons[16] is None and "subgroup size 8 not supported" in reasons[8]
    half = SpirvMmaCase(16, 16, 4, "f16", "f16", "f16", "f16", "exact")
    assert "cl_khr_fp16" in dev.unsupported_spirv_intel_mma(half)
    ext = dataclasses.replace(half, sg=32, c="f32", result="f32", level="extended")
    assert dev.unsupported_spirv_intel_mma(ext) is None
    dev = fake_queries(sizes=(16, 32), exts=kw["exts"][:1], caps=(6236,), spv=kw["spv"])
    tf32 = SpirvMmaCase(16, 8, 4, "tf32", "tf32", "f32", "f32", "exact")
    assert "_tf32 not supported" in dev.unsupported_spirv_intel_mma(tf32)


# ---------------------------------------------------------- real device
@pytest.fixture(scope="module")
def opencl():
    pytest.importorskip("pyopencl")
    try:
        be = make_backend("opencl")
    except (BackendError, ValueError, KeyError) as e:
        pytest.skip(f"no OpenCL device: {e}")
    assert hasattr(be, "run_spirv_intel_mma"), "SPIR-V mixin not registered in _OPENCL_MIXINS"
    yield be
    be.close()


def test_cases_skip_with_the_capability_reason(opencl):
    reason = opencl.spirv_mma_unsupported()
    if reason is None:
        pytest.skip("device supports the SPIR-V instruction")
    assert "6236" in reason or "SPIR-V IL" in reason
    if "SPIR-V IL" not in reason:  # what the runtime does with such a module: said, not judged
        assert (
            "the runtime refuses a module declaring it" in reason or "builds a module declaring it" in reason
        )
    for case in spirv_intel_cases(("exact",)) + crosscheck_cases(("random",))[:4]:
        assert opencl.unsupported(case) == reason


@pytest.mark.parametrize(
    "case",
    [
        SpirvMmaCase(8, 32, 4, "i8", "i8", "i32", "i32", "random"),
        SpirvMmaCase(16, 16, 8, "bf16", "bf16", "bf16", "bf16", "random"),
        SpirvMmaCase(16, 16, 2, "f16", "f16", "f16", "f16", "random"),
        SpirvMmaCase(16, 8, 8, "tf32", "tf32", "f32", "f32", "random"),
        SpirvMmaCase(4, 32, 2, "i8", "u8", "i32", "i32", "random", "extended"),
        SpirvMmaCase(8, 32, 4, "i8", "i8", "i32", "i32", "random", kdim="spec"),
        SpirvMmaCase(16, 8, 8, "tf32", "tf32", "f32", "f32", "random", kdim="spec"),
    ],
    ids=lambda c: c.id,
)
def test_module_plumbing_with_the_control_kernel(opencl, case):
    """The generated kernel minus the instruction (Result = C) on the real
    driver: every invocation finds its operands and writes its Result where
    the host expects them, under the declared SubgroupSize.  With K Dim an
    OpSpecConstant the control adds K Dim - K to the stored subgroup size:
    the driver applied the value set before the build
    (clSetProgramSpecializationConstant)."""
    if case.sg not in opencl.describe().subgroup_sizes:
        pytest.skip(f"subgroup size {case.sg} not supported")
    ks = opencl.kernel_source_spirv_intel_mma(case, 6)
    ks = dataclasses.replace(ks, il=assemble(control_module_text(case)))
    ops = case_registers(case, 3, 6)
    dt = [np.dtype(t) for t in ks.arg_types]
    out = opencl.run_kernel(
        ks,
        {
            "a": ops["a_regs"].astype(dt[0]).reshape(-1),
            "b": ops["b_regs"].astype(dt[1]).reshape(-1),
            "c": ops["c_regs"].astype(dt[2]).reshape(-1),
        },
        {"d": (dt[3], ops["c_regs"].size), "sgsize": (np.uint32, 6 * case.sg)},
    )
    assert (out["sgsize"] == case.sg).all()
    assert (out["d"].astype(np.uint64) == ops["c_regs"].reshape(-1)).all()


def test_an_unset_specialization_constant_keeps_its_default(opencl):
    """The control's check is not vacuous: built without the value set, K Dim
    is its default 0 and every stored subgroup size is off by -K."""
    case = SpirvMmaCase(8, 32, 4, "i8", "i8", "i32", "i32", "random", kdim="spec")
    if case.sg not in opencl.describe().subgroup_sizes:
        pytest.skip(f"subgroup size {case.sg} not supported")
    ks = opencl.kernel_source_spirv_intel_mma(case, 2)
    assert ks.spec_constants == ((1, 32),)
    ks = dataclasses.replace(ks, il=assemble(control_module_text(case)), spec_constants=())
    ops = case_registers(case, 3, 2)
    dt = [np.dtype(t) for t in ks.arg_types]
    out = opencl.run_kernel(
        ks,
        {"a": ops["a_regs"].astype(dt[0]).reshape(-1), "b": ops["b_regs"].astype(dt[1]).reshape(-1),
         "c": ops["c_regs"].astype(dt[2]).reshape(-1)},
        {"d": (dt[3], ops["c_regs"].size), "sgsize": (np.uint32, 2 * case.sg)},
    )  # fmt: skip
    assert (out["sgsize"] == np.uint32((case.sg - case.k) % 2**32)).all()
