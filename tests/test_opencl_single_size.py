"""OpenCL devices beside Intel's runtime: a device of one subgroup size
without cl_intel_required_subgroup_size (Mesa rusticl) runs kernels at that
size without the attribute; OpenCL C is built with -cl-std=CL3.0 where the
subgroup built-ins exist only there.  No device needed: the decisions are
made from the device's answers, given here."""

from types import SimpleNamespace

import pytest

from cts.backends.base import DeviceInfo
from cts.backends.opencl import OpenCLBackend
from cts.backends.opencl_sizes import cl_std_option
from cts.families.rotate import RotateCase
from cts.families.subgroup_builtins import SubgroupBuiltinsCase
from cts.kernels.rotate_cl import mlir_rotate_kernel, rotate_cl_program
from cts.kernels.subgroup_builtins import sgb_cl_program, sgb_spv_module


def _backend(
    extensions, sizes, caps=("SubgroupDispatch", "GroupNonUniformRotateKHR", "Int8", "Int16", "Float16")
):
    b = object.__new__(OpenCLBackend)
    b.assumed = b.assumed_explicit = frozenset()
    b.prelude = None
    b._cl_std = "-cl-std=CL3.0"
    b._info = DeviceInfo(
        backend="opencl",
        name="dev",
        platform="p",
        driver="d",
        version="OpenCL 3.0",
        extensions=tuple(extensions),
        subgroup_sizes=tuple(sizes),
        extra={
            "il_version": "SPIR-V_1.0 SPIR-V_1.3",
            "spirv_capabilities": list(caps),
            "spirv_extensions": [],
        },
    )
    return b


RUSTICL = ("cl_khr_subgroup_rotate", "cl_khr_fp16", "cl_khr_il_program")
INTEL = (*RUSTICL, "cl_intel_required_subgroup_size", "cl_khr_subgroups")


def test_one_size_without_the_extension_runs_that_size_only():
    b = _backend(RUSTICL, (8,))
    assert b.sized_subgroups(8) is None
    assert b.sized_subgroups(16) == "device has one subgroup size, 8, not 16"
    assert not b.requires_subgroup_attribute
    assert b.unsupported_subgroup_rotate(RotateCase("opencl_c", "int", 1, 8, 0)) is None
    assert "not 16" in b.unsupported_subgroup_rotate(RotateCase("opencl_c", "int", 1, 16, 0))
    assert b.unsupported_subgroup_builtins(SubgroupBuiltinsCase("opencl_c", 8, "partial")) is None


def test_several_sizes_without_the_extension_cannot_be_required():
    b = _backend(RUSTICL, (8, 16))
    assert "lacks cl_intel_required_subgroup_size" in b.sized_subgroups(8)
    assert "no subgroup sizes" in _backend(RUSTICL, ()).sized_subgroups(8)


def test_with_the_extension_every_listed_size_runs_with_the_attribute():
    b = _backend(INTEL, (8, 16, 32))
    assert b.sized_subgroups(16) is None and b.requires_subgroup_attribute
    assert "not 64" in b.sized_subgroups(64)


def test_kernels_carry_the_attribute_only_where_asked():
    attr = "intel_reqd_sub_group_size(8)"
    assert attr in rotate_cl_program("int", 8) and attr not in rotate_cl_program("int", 8, reqd=False)
    assert attr in sgb_cl_program(8) and attr not in sgb_cl_program(8, reqd=False)
    assert "SubgroupSize 8" in sgb_spv_module(8) and "OpExecutionMode" not in sgb_spv_module(8, reqd=False)
    prog = [("read_lane", "x", "a", "i32"), ("write_lane", "b", "x")]
    bufs = {k: __import__("numpy").zeros((1, 8), "int32") for k in ("a", "b")}
    assert attr in mlir_rotate_kernel(prog, bufs, 8)[0]
    assert attr not in mlir_rotate_kernel(prog, bufs, 8, reqd=False)[0]


def _ver(major, minor):
    return SimpleNamespace(name="OpenCL C", version=(major << 22) | (minor << 12))


def _device(default, versions, features):
    return SimpleNamespace(
        opencl_c_version=default,
        opencl_c_all_versions=[_ver(*v) for v in versions],
        opencl_c_features=[SimpleNamespace(name=f) for f in features],
    )


@pytest.mark.parametrize(
    "device, extensions, want",
    [
        # Mesa rusticl 26.1: default 1.2, 3.0 listed with __opencl_c_subgroups, no cl_khr_subgroups
        (_device("OpenCL C 1.2 ", [(1, 0), (1, 2), (3, 0)], ["__opencl_c_subgroups"]), (), "-cl-std=CL3.0"),
        # PoCL 6.0: default 1.2, but cl_khr_subgroups gives the built-ins there
        (_device("OpenCL C 1.2 PoCL", [(1, 2), (3, 0)], ["__opencl_c_subgroups"]), ("cl_khr_subgroups",), ""),
        # a 3.0 device without the subgroup feature, and a device whose default is already 3.0
        (_device("OpenCL C 1.2", [(1, 2), (3, 0)], ["__opencl_c_images"]), (), ""),
        (_device("OpenCL C 3.0", [(3, 0)], ["__opencl_c_subgroups"]), (), ""),
        (SimpleNamespace(opencl_c_version="OpenCL C 1.2"), (), ""),  # no OpenCL 3.0 queries
    ],
)
def test_cl_std_option(device, extensions, want):
    assert cl_std_option(device, extensions) == want
