"""Kernel generators and OpenCL skip decisions of the rotate / MLIR rooms,
without a device: every SPIR-V module passes spirv-val, the OpenCL C names
the built-ins, and a device lacking something gets a skip naming it."""

import numpy as np
import pytest

from cts.backends.base import CaseError, DeviceInfo
from cts.backends.opencl_mlir import MlirOpenCL
from cts.backends.opencl_rotate import REQUIRE_VECTORS_ENV, RotateOpenCL
from cts.families.mlir import mlir_cases
from cts.families.rotate import GENTYPES, RotateCase
from cts.kernels.rotate_cl import mlir_rotate_kernel, rotate_cl_program
from cts.kernels.rotate_spv import SpvError, assemble_spv13, rotate_spv_module


@pytest.mark.parametrize("sg", [4, 64])
@pytest.mark.parametrize("t", [*GENTYPES, "bool"])
def test_every_spirv_module_validates(t, sg):
    for w in (1, 2, 3, 4):
        blob = assemble_spv13(rotate_spv_module(t, sg, (w,)))
        assert blob[:4] == b"\x03\x02\x23\x07"


def test_spirv_val_rejects_a_broken_module():
    with pytest.raises(SpvError, match="spirv-val|spirv-as"):
        assemble_spv13(rotate_spv_module("int", 8).replace("OpCapability GroupNonUniformRotateKHR\n", ""))


def test_opencl_c_program_calls_every_variant():
    src = rotate_cl_program("half", 16)
    assert "cl_khr_fp16" in src and "intel_reqd_sub_group_size(16)" in src
    assert "sub_group_rotate(v, d)" in src
    for c in (1, 2, 4, 8, 16):
        assert f"sub_group_clustered_rotate(v, d, {c}u)" in src


def test_the_program_of_every_size_holds_each_cases_own_kernel():
    from cts.kernels.rotate_cl import rotate_cl_sized_entry, rotate_cl_sizes_program

    for nonuniform in (False, True):
        merged = rotate_cl_sizes_program("half", (4, 16, 64), nonuniform)
        assert merged.count("cl_khr_fp16") == 1 and merged.count("kernel void") == 3
        for sg in (4, 16, 64):
            own = rotate_cl_program("half", sg, nonuniform)
            body = own[own.index("__attribute__") :].replace("rotate_k(", f"{rotate_cl_sized_entry(sg)}(")
            assert body in merged, sg  # the same kernel, under the size's own name


class _FakeDevice(RotateOpenCL, MlirOpenCL):
    def __init__(self, extensions=(), caps=(), sizes=(8, 16), il="SPIR-V_1.3"):
        self._info = DeviceInfo(
            "opencl",
            "fake",
            extensions=tuple(extensions),
            subgroup_sizes=tuple(sizes),
            extra={"il_version": il, "spirv_capabilities": list(caps), "spirv_extensions": []},
        )

    def describe(self):
        return self._info

    def has_extension(self, name):
        return name in self._info.extensions


FULL_EXT = ("cl_khr_subgroup_rotate", "cl_intel_required_subgroup_size", "cl_khr_fp16", "cl_khr_fp64")
FULL_CAPS = ("GroupNonUniformRotateKHR", "SubgroupDispatch", "Int8", "Int16", "Float16", "Float64")


@pytest.mark.parametrize(
    "case, dev, words",
    [
        (RotateCase("opencl_c", "int", 1, 8, 0), _FakeDevice(FULL_EXT[1:]), "cl_khr_subgroup_rotate"),
        (RotateCase("opencl_c", "int", 1, 32, 0), _FakeDevice(FULL_EXT), "not 32"),
        (RotateCase("opencl_c", "half", 1, 8, 0), _FakeDevice(FULL_EXT[:2]), "cl_khr_fp16"),
        (
            RotateCase("spirv", "int", 1, 8, 2),
            _FakeDevice(FULL_EXT, FULL_CAPS[1:]),
            "GroupNonUniformRotateKHR",
        ),
        (RotateCase("spirv", "char", 1, 8, 0), _FakeDevice(FULL_EXT, FULL_CAPS[:2]), "Int8"),
        (RotateCase("spirv", "int", 1, 8, 0), _FakeDevice(FULL_EXT, FULL_CAPS, il=""), "IL"),
        (RotateCase("spirv", "float", 4, 8, 0), _FakeDevice(FULL_EXT, FULL_CAPS), REQUIRE_VECTORS_ENV),
    ],
)
def test_skip_reasons_name_what_is_missing(case, dev, words):
    reason = dev.unsupported_subgroup_rotate(case)
    assert reason and words in reason


def test_full_device_runs_scalars_and_vectors_on_request(monkeypatch):
    dev = _FakeDevice(FULL_EXT, FULL_CAPS)
    assert dev.unsupported_subgroup_rotate(RotateCase("spirv", "double", 1, 16, 4)) is None
    monkeypatch.setenv(REQUIRE_VECTORS_ENV, "1")
    assert dev.unsupported_subgroup_rotate(RotateCase("spirv", "bool", 3, 8, 2)) is None


def test_mlir_on_opencl_only_rotate_ops():
    dev = _FakeDevice(FULL_EXT, FULL_CAPS)
    for c in mlir_cases():
        reason = dev.unsupported_mlir_mma(c)
        if c.op in ("gpu_rotate", "mma_rotate"):
            if c.elem in ("i1", "bf16"):  # no OpenCL C gentype: a named gap
                assert "no bool / bfloat16 gentype" in reason, (c.id, reason)
            else:
                assert reason is None or f"not {c.sg}" in reason, (c.id, reason)  # fake device: sizes 8, 16
        else:
            assert "CooperativeMatrixKHR" in reason


def test_mlir_kernel_refuses_ops_without_a_realization():
    bufs = {"A": np.zeros((2, 256), np.float16), "D": np.zeros((2, 256), np.float32)}
    prog = [
        ("load", "a", "A", 0, 0, 16, False, 16, 16, "f16", "AOp"),
        ("compute", "d", "a", "a", "a", False, False),
    ]
    with pytest.raises(ValueError, match="compute"):
        mlir_rotate_kernel(prog, bufs, 16)


class _FakeRun(_FakeDevice):
    """Records the kernels run. ``fail``: "sizes" (the program of every size
    fails, as a build failure of one size's kernel fails the whole program),
    "both" (the case's own program fails too) or None."""

    prelude = None

    def __init__(self, sizes, fail=None):
        super().__init__(FULL_EXT, sizes=sizes)
        self.ran, self.fail = [], fail

    def with_prelude(self, text):
        return text

    def run_kernel(self, ks, inputs, outputs):
        self.ran.append(ks.entry)
        if self.fail == "both" or (self.fail == "sizes" and ks.entry != "rotate_k"):
            raise CaseError("kernel build failed on fake")
        n = outputs["out"][1]
        return {"out": np.zeros(n, outputs["out"][0]), "info": np.zeros(4 * n, np.uint32)}


@pytest.mark.parametrize(
    "sizes, fail, ran",
    [
        ((4, 8, 16), None, ["rotate_k8"]),  # the case's kernel in the program of every size
        ((4, 8, 16), "sizes", ["rotate_k8", "rotate_k"]),  # that failed: the case's own program judges
        ((8,), None, ["rotate_k"]),  # a device of one size: the case's own program
    ],
)
def test_a_case_runs_in_the_program_of_every_size_and_its_own_program_judges_a_failure(sizes, fail, ran):
    dev = _FakeRun(sizes, fail)
    dev.run_subgroup_rotate(
        RotateCase("opencl_c", "int", 1, 8, 0), np.zeros((2, 8, 1), np.uint32), np.zeros(2)
    )
    assert dev.ran == ran


def test_a_case_whose_own_program_fails_too_gets_that_failure():
    dev = _FakeRun((4, 8, 16), "both")
    with pytest.raises(CaseError, match="build failed"):
        dev.run_subgroup_rotate(
            RotateCase("opencl_c", "int", 1, 8, 0), np.zeros((2, 8, 1), np.uint32), np.zeros(2)
        )
    assert dev.ran == ["rotate_k8", "rotate_k"]
