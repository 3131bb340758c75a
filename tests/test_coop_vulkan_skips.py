"""The Vulkan backend's skip and selection rules without a GPU: the device state the backend would have queried is planted, the
decisions are its own.  A Vulkan run (reports/h100-vulkan/) exercises the
same functions on a real driver."""

from __future__ import annotations

import numpy as np
import pytest

from cts.backends.base import BackendError, Unsupported
from cts.backends.vulkan import VulkanBackend
from cts.families.coop import CoopCase, CoopEntry, MatType, coop_cases, load_profile
from cts.runs.coop import device_muladd

H100 = load_profile("h100")


def _device(entries=H100.entries, sg=32, bf16=True, reason=None) -> VulkanBackend:
    b = VulkanBackend()
    b._ready = True  # as if _open had run against a device reporting ``entries``
    b.reason, b.entries, b.subgroup_size, b.bf16_coop = reason, list(entries), sg, bf16
    b.features = {"bufferDeviceAddress": True, "vulkanMemoryModel": True, "subgroupSizeControl": True}
    b.features |= {"variablePointers": True, "variablePointersStorageBuffer": True}
    b.float_controls = {16: True, 32: True, 64: True}
    b.subgroup = {"minSubgroupSize": sg, "maxSubgroupSize": sg, "requiredSubgroupSizeStages": 0x20}
    b.subgroup["maxComputeWorkGroupInvocations"] = 1024
    return b


def test_khr_axes_skip_naming_the_missing_feature():
    """Each KHR axis skips with the feature it needs when the device lacks it."""
    cs = {c.id: c for c in coop_cases(H100.entries, ("exact", "special"), 32, ("vk",))}
    e = H100.entries[0]
    bda = cs["vk-load-A16x16-f16-row-padded-bda-exact"]
    avail = cs["vk-store-A16x16-f16-row-tight-storage-avail-exact"]
    struct = cs[f"vk-muladd-{e.tag}-row-struct-exact"]
    sgmin, wg4 = cs[f"vk-muladd-{e.tag}-row-sgmin-exact"], cs[f"vk-muladd-{e.tag}-row-wg4-exact"]
    b = _device()
    assert [b.unsupported(c) for c in (bda, avail, struct, sgmin, wg4)] == [None] * 5
    b.features = {}
    assert "bufferDeviceAddress is not supported" in b.unsupported(bda)
    assert "vulkanMemoryModel is not supported" in b.unsupported(avail)
    assert "vulkanMemoryModel is not supported" in b.unsupported(struct)
    assert "subgroupSizeControl" in b.unsupported(sgmin)
    vp = cs["vk-load-A16x16-f16-row-padded-storage-varptr-exact"]
    vw = cs["vk-store-A16x16-f16-row-padded-workgroup-varptr-exact"]
    assert "variablePointersStorageBuffer is not supported" in b.unsupported(vp)
    assert "variablePointers is not supported" in b.unsupported(vw)
    sp = cs["vk-convert-C16x16-f32_to_f16-special"]
    assert b.unsupported(sp) is None
    b.float_controls = {16: False, 32: True}
    assert (
        b.unsupported(sp) == "shaderSignedZeroInfNanPreserveFloat16 is not supported (inf / NaN conversions)"
    )
    b = _device()
    b.subgroup["minSubgroupSize"] = 16
    assert "minSubgroupSize is 16" in b.unsupported(sgmin)
    b.subgroup["maxComputeWorkGroupInvocations"] = 64
    assert "maxComputeWorkGroupInvocations" in b.unsupported(wg4)


def test_reported_table_runs_every_case_of_its_space():
    b = _device()
    cs = coop_cases(H100.entries, ("exact", "wrap"), 32, ("vk",))
    assert [c.id for c in cs if b.unsupported(c)] == []


def test_no_device_reason_is_every_case_skip():
    b = _device(reason="no Vulkan physical device")
    cs = coop_cases(H100.entries, ("exact",), 32, ("vk",))
    assert {b.unsupported(c) for c in cs} == {"no Vulkan physical device"}
    assert b.coop_entries() is None  # the plugin then falls back to a profile


def test_missing_entry_and_matrix_type_are_named():
    e = H100.entries[0]  # m16n16k16 f16 -> f16
    rest = [x for x in H100.entries if x != e]
    b = _device(rest)
    assert b.unsupported(CoopCase("muladd", entry=e)) == f"no VkCooperativeMatrixPropertiesKHR entry {e.tag}"
    only_f32 = [x for x in H100.entries if x.C == "f32" and x.M == 16 and x.N == 16]
    b = _device(only_f32)
    m = MatType("C", 16, 16, "f32")
    assert b.unsupported(CoopCase("load", mat=m)) is None
    reason = b.unsupported(CoopCase("convert", mat=m, to="f16"))
    assert reason == "no reported entry has the matrix type C16x16-f16"
    assert "C8x8-f32" in b.unsupported(CoopCase("load", mat=MatType("C", 8, 8, "f32")))


def test_subgroup_size_bf16_feature_and_form():
    b = _device(sg=64)
    assert "subgroup size 32, device has 64" in b.unsupported(
        CoopCase("length", mat=MatType("A", 16, 16, "f16"))
    )
    b = _device(bf16=False)
    bf = next(e for e in H100.entries if e.A == "bf16")
    assert b.unsupported(CoopCase("muladd", entry=bf)) == "shaderBFloat16CooperativeMatrix is not supported"
    assert "Vulkan form only" in b.unsupported(CoopCase("load", api="clspv", mat=MatType("A", 16, 16, "f16")))


def test_device_muladd_refuses_an_unreported_entry():
    b = _device([x for x in H100.entries if x.A != "bf16"])
    bf = CoopEntry(16, 16, 16, "bf16", "bf16", "f32", "f32")
    with pytest.raises(Unsupported, match="no VkCooperativeMatrixPropertiesKHR entry"):
        device_muladd(b, bf, np.zeros((16, 16)), np.zeros((16, 16)), np.zeros((16, 16)))


def test_device_selection():
    b = VulkanBackend("h100")
    names, exts = ["llvmpipe", "NVIDIA H100 80GB HBM3"], [set(), {"VK_KHR_cooperative_matrix"}]
    assert b._select(names, exts) == 1
    assert VulkanBackend(None)._select(names, exts) == 1  # default: the first with the extension
    assert VulkanBackend("0")._select(names, exts) == 0
    with pytest.raises(BackendError, match="only 2 Vulkan device"):
        VulkanBackend("7")._select(names, exts)
    with pytest.raises(BackendError, match="matches no Vulkan device"):
        VulkanBackend("radeon")._select(names, exts)


def test_entries_the_generator_cannot_express_skip_as_suite_gaps():
    """A reported workgroup-scope entry or one with C != Result type: the GLSL
    generator cannot write it, so the case skips naming the suite's gap
    instead of failing the driver."""
    wg = CoopEntry(16, 16, 16, "f16", "f16", "f32", "f32", scope="workgroup")
    mixed = CoopEntry(16, 16, 16, "f16", "f16", "f16", "f32")
    b = _device([*H100.entries, wg, mixed])
    cs = coop_cases([wg, mixed], ("exact",), 32, ("vk",))
    assert len({c.id for c in cs}) == len(cs)  # a workgroup-scope matrix type has its own ids
    gaps = [c for c in cs if c.entry is not None or c.mat.scope == "workgroup"]
    assert len(gaps) > 20
    for c in cs:
        reason = b.unsupported(c)
        if c in gaps:
            assert reason and reason.startswith("not realized by the suite"), (c.id, reason)
        else:  # the subgroup matrix types of the mixed entry are ordinary ones
            assert reason is None, (c.id, reason)


def _fake_vulkan(wait_error=None):
    """A VulkanBackend over a stand-in ``vk`` module (no loader needed) whose
    fence wait succeeds or raises ``wait_error``."""
    from unittest import mock

    from cts.backends.vulkan import VulkanBackend

    vk = mock.MagicMock()
    vk.vkMapMemory.side_effect = lambda dev, mem, off, size, flags: bytearray(size)
    if wait_error is not None:
        vk.vkWaitForFences.side_effect = wait_error
    b = VulkanBackend()
    b.vk, b.ffi = vk, mock.MagicMock()
    b.device, b.pool, b.queue, b.fence = object(), object(), object(), object()
    b._buffer = lambda n: (mock.sentinel.buf, mock.sentinel.mem, max(256, n))
    b._pipeline = lambda code, n, spec=(), required_sg=0, entry_name="main": (object(), object(), object())
    return b, vk


def test_a_vulkan_dispatch_that_hangs_marks_the_device_dead_and_leaks_in_flight_work():
    """A timed-out (or lost) dispatch: its case fails naming the error; the
    buffers, pool and command buffer the device may still use are not freed;
    the next case fails at once without submitting anything."""
    import numpy as np

    from cts.backends.base import CaseError

    class VkTimeout(Exception):
        pass

    b, vk = _fake_vulkan(VkTimeout("timeout"))
    arrays = {"x": np.zeros(4, np.uint32)}
    with pytest.raises(CaseError, match="VkTimeout while waiting for case case-1"):
        b._dispatch(b"spv", ["x"], arrays, 1, "case-1")
    assert b.dead and vk.vkQueueSubmit.call_count == 1
    assert not vk.vkDestroyBuffer.called and not vk.vkFreeMemory.called
    assert not vk.vkFreeCommandBuffers.called and not vk.vkDestroyDescriptorPool.called
    from cts.families.coop import CoopCase, MatType

    case = CoopCase("length", "vk", mat=MatType("A", 16, 16, "f16"), sg=32)
    with pytest.raises(CaseError, match="Vulkan device unusable: VkTimeout while waiting for case case-1"):
        b.run_coop_matrix(case, {})
    assert vk.vkQueueSubmit.call_count == 1  # nothing more was submitted
    b._ready = True
    b.close()  # teardown neither waits for the hung work (no timeout there) nor frees what it uses
    assert not vk.vkDeviceWaitIdle.called and not vk.vkDestroyDevice.called and not vk.vkDestroyFence.called

    ok, vk2 = _fake_vulkan()
    out = ok._dispatch(b"spv", ["x"], arrays, 1, "case-2")
    assert out["x"].shape == (4,) and not getattr(ok, "dead", None)
    assert (
        vk2.vkFreeCommandBuffers.called and vk2.vkDestroyDescriptorPool.called and vk2.vkDestroyBuffer.called
    )


def test_reported_entries_the_suite_cannot_name_are_listed_not_dropped():
    from types import SimpleNamespace

    b, vk = _fake_vulkan()
    b.instance, b.pd = object(), object()

    def prop(a, c, scope=3):
        return SimpleNamespace(
            MSize=16, NSize=16, KSize=32, AType=a, BType=a, CType=c, ResultType=c,
            saturatingAccumulation=0, scope=scope,
        )  # fmt: skip

    fp8 = 1000491002  # a component type newer than the suite's table
    vk.vkGetInstanceProcAddr.return_value = lambda pd: [prop(3, 5), prop(fp8, 1), prop(3, 5, scope=7)]
    entries = b._query_entries()
    assert [(e.A, e.C) for e in entries] == [("i8", "i32")]
    assert len(b.unexpressed) == 2
    assert f"vk{fp8}" in b.unexpressed[0] and "scope7" in b.unexpressed[1]


def _rotate_device(lo=32, hi=64, sg=64, control=True, **feat) -> VulkanBackend:
    """A device like AMD's (subgroup sizes 32..64, size control for compute)."""
    b = _device(sg=sg)
    b.exts = {"VK_KHR_shader_subgroup_rotate"}
    b.info.extra["apiVersion"] = (1 << 22) | (3 << 12)
    b.features = {
        "shaderSubgroupRotate": True,
        "shaderSubgroupRotateClustered": True,
        "shaderSubgroupExtendedTypes": True,
        "subgroupSizeControl": control,
        **{f: True for f in ("shaderInt8", "shaderInt16", "shaderInt64", "shaderFloat16", "shaderFloat64")},
        **feat,
    }
    b.subgroup = {
        "subgroupSize": sg,
        "supportedStages": 0x20,
        "supportedOperations": 0x6FF,
        "minSubgroupSize": lo,
        "maxSubgroupSize": hi,
        "requiredSubgroupSizeStages": 0x20 if control else 0,
        "maxComputeWorkGroupSize": 1024,
        "maxComputeWorkGroupInvocations": 1024,
    }
    return b


def _rot(i: str):
    from cts.families.rotate import rotate_cases

    return next(c for c in rotate_cases() if c.id == i)


def test_rotate_subgroup_sizes_come_from_size_control():
    b = _rotate_device()
    assert b.unsupported(_rot("spirv-uint-sg32-rotate")) is None
    assert b._required_sg(_rot("spirv-uint-sg32-rotate")) == 32  # required through the pipeline
    assert b._required_sg(_rot("spirv-uint-sg64-rotate")) == 64
    assert "outside the device's range [32, 64]" in b.unsupported(_rot("spirv-uint-sg16-rotate"))
    fixed = _rotate_device(control=False)
    assert (
        b._required_sg(_rot("spirv-uint-sg64-c2")) == 64
        and fixed._required_sg(_rot("spirv-uint-sg64-c2")) == 0
    )
    assert "cannot require one" in fixed.unsupported(_rot("spirv-uint-sg32-rotate"))


def test_rotate_skips_name_the_missing_feature_bit_or_api():
    assert "OpenCL C built-in" in _rotate_device().unsupported(_rot("opencl_c-int-sg32-rotate"))
    b = _rotate_device(shaderSubgroupRotateClustered=False)
    assert b.unsupported(_rot("spirv-uint-sg32-rotate")) is None
    assert "shaderSubgroupRotateClustered" in b.unsupported(_rot("spirv-uint-sg32-c4"))
    assert "shaderInt8" in _rotate_device(shaderInt8=False).unsupported(_rot("spirv-char-sg32-rotate"))
    assert "shaderFloat64" in _rotate_device(shaderFloat64=False).unsupported(_rot("spirv-double2-sg32-c2"))
    no_ext = _rotate_device(shaderSubgroupExtendedTypes=False)
    assert "shaderSubgroupExtendedTypes" in no_ext.unsupported(_rot("spirv-half-sg32-rotate"))
    # shaderSubgroupExtendedTypes: "8-bit integer, 16-bit integer, 64-bit integer, 16-bit floating-point"
    assert "shaderSubgroupExtendedTypes" in no_ext.unsupported(_rot("spirv-long-sg32-rotate"))
    assert no_ext.unsupported(_rot("spirv-double-sg32-rotate")) is None  # 64-bit floats are not among them
    assert "Vector16" in _rotate_device().unsupported(_rot("spirv-float16-sg8-rotate"))
    assert "shaderInt64" in _rotate_device(shaderInt64=False).unsupported(
        _rot("spirv-int-sg8-rotate-delta64")
    )
    assert "shaderInt8" in _rotate_device(shaderInt8=False).unsupported(_rot("spirv-int-sg8-c2-delta8"))
    b = _rotate_device()
    b.subgroup["supportedOperations"] &= ~0x400
    assert "ROTATE_CLUSTERED_BIT" in b.unsupported(_rot("spirv-uint-sg32-c2"))
    b.exts = set()
    assert "VK_KHR_shader_subgroup_rotate" in b.unsupported(_rot("spirv-uint-sg32-rotate"))
    b.subgroup["maxComputeWorkGroupInvocations"] = 128
    b.exts = {"VK_KHR_shader_subgroup_rotate"}
    assert "exceed the device's limit of 128" in b.unsupported(_rot("spirv-uint-sg64-rotate"))
