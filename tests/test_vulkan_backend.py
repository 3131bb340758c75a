"""The Vulkan backend's own paths on a real driver (Mesa lavapipe in CI, the
H100 on the GPU machine; skipped with the reason where no Vulkan device is
found): device selection by name and its errors, the property and feature
queries, buffer upload and read-back, the pipeline cache, specialization
constants and a pipeline that requires its subgroup size.

``CTS_VULKAN_DEVICE`` picks the device by name (default: the backend's choice).
"""

import os

import numpy as np
import pytest

from cts.errors import BackendError
from cts.families.rotate import rotate_cases
from tests.conftest import vulkan_or_skip


@pytest.fixture(scope="module")
def vk():
    vulkan_or_skip()
    from cts.backends.vulkan import VulkanBackend

    try:
        b = VulkanBackend.from_options(device=os.environ.get("CTS_VULKAN_DEVICE"))
    except BackendError as e:
        pytest.skip(f"no Vulkan device: {e}")
    if b.reason:
        pytest.skip(b.reason)
    yield b
    b.close()


def _identity_case(b):
    """ClusterSize 1: every invocation reads itself, whatever the map."""
    want = f"spirv-uint-sg{b.subgroup_size}-c1"
    case = next((c for c in rotate_cases() if c.id == want), None)
    if case is None or b.unsupported(case):
        pytest.skip(f"{b.info.name}: no rotate at its subgroup size ({case and b.unsupported(case)})")
    return case


def test_selection_by_name_and_its_errors(vk):
    from cts.backends.vulkan import VulkanBackend

    name = vk.info.name
    again = VulkanBackend.from_options(device=name.split()[0])
    try:
        assert again.info.name == name
    finally:
        again.close()
    with pytest.raises(BackendError, match="matches no Vulkan device; devices: "):
        VulkanBackend.from_options(device="no-such-device-xyz")
    with pytest.raises(BackendError, match=r"--device 99: only \d+ Vulkan device"):
        VulkanBackend.from_options(device="99")


def test_properties_and_features_are_the_drivers(vk):
    sg = vk.info.extra["subgroup"]
    assert sg["minSubgroupSize"] <= sg["subgroupSize"] <= sg["maxSubgroupSize"]
    assert sg["subgroupSize"] == vk.subgroup_size and sg["supportedOperations"] & 0x1  # BASIC
    assert sg["maxComputeWorkGroupInvocations"] >= 128  # the Vulkan minimum
    assert all(isinstance(v, bool) for v in vk.features.values())
    got = vk.coop_entries()
    if "VK_KHR_cooperative_matrix" in vk.exts and vk.features["cooperativeMatrix"]:
        entries, size = got
        assert entries and size == vk.subgroup_size
    else:
        assert got is None


def test_buffers_round_trip_and_pipelines_are_cached(vk):
    case = _identity_case(vk)
    L, G = 2 * case.sg + 3, 5
    vals = np.random.default_rng(3).integers(0, 1 << 32, size=(G, L, 1), dtype=np.uint64)
    before = len(vk._pipes)
    for _ in range(2):
        res = vk.run(case, values=vals, deltas=np.arange(G), const=np.zeros(G, np.int32))
        assert np.array_equal(res["out"], vals), "values did not come back unchanged through ClusterSize 1"
        assert (res["sg_max"] == case.sg).all()
        assert np.array_equal(np.sort(np.unique(res["sg_lid"])), np.arange(case.sg))
    assert len(vk._pipes) == before + 1, "the second launch of the same module and size compiled again"
    vk.run(case, values=vals[:, : L - 1], deltas=np.arange(G), const=np.zeros(G, np.int32))
    assert len(vk._pipes) == before + 2, (
        "another work-group size (specialization constant) needs its own pipeline"
    )


def test_a_pipeline_that_requires_its_subgroup_size(vk, monkeypatch):
    sg = vk.info.extra["subgroup"]
    if not (vk.features.get("subgroupSizeControl") and sg["requiredSubgroupSizeStages"] & 0x20):
        pytest.skip(f"{vk.info.name}: subgroup size control is not available for compute")
    case = _identity_case(vk)
    monkeypatch.setattr(
        type(vk), "_required_sg", lambda self, c: c.sg
    )  # require it even where it is the only one
    L, G = 2 * case.sg + 1, 3
    vals = np.arange(G * L, dtype=np.uint64).reshape(G, L, 1)
    res = vk.run(case, values=vals, deltas=np.zeros(G, np.int64), const=np.zeros(G, np.int32))
    assert np.array_equal(res["out"], vals)
    assert any(k[2] == case.sg for k in vk._pipes), "no pipeline was created with a required subgroup size"


def test_a_dispatch_past_its_limit_ends_the_device_for_later_cases(monkeypatch):
    """A hang is judged by a fence limit (WAIT_NS): the waiting case fails
    naming the limit, and every later case fails at once naming the first
    (its buffers stay with the device: freeing them would be invalid Vulkan).
    Here the limit is 0 ns on a large dispatch, on a backend of its own."""
    vulkan_or_skip()
    import cts.backends.vulkan as vmod
    from cts.errors import CaseError

    try:
        b = vmod.VulkanBackend.from_options(device=os.environ.get("CTS_VULKAN_DEVICE"))
    except BackendError as e:
        pytest.skip(f"no Vulkan device: {e}")
    if b.reason:
        pytest.skip(b.reason)
    try:
        case = _identity_case(b)
        L, G = 8 * case.sg, 4096
        vals = np.zeros((G, L, 1), dtype=np.uint64)
        args = dict(values=vals, deltas=np.zeros(G, np.int64), const=np.zeros(G, np.int32))
        b.run(case, **args)  # compiled and known to work before the limit changes
        monkeypatch.setattr(vmod, "WAIT_NS", 0)
        try:
            b.run(case, **args)
        except CaseError as e:
            assert "limit" in str(e) and "later cases are not run" in str(e), str(e)
        else:
            pytest.skip(f"{b.info.name} finished {G} work-groups within 0 ns: no timeout to observe")
        monkeypatch.undo()  # the normal limit again: the device is still refused
        assert vmod.WAIT_NS > 0
        with pytest.raises(CaseError, match="unusable"):
            b.run(case, **args)
    finally:
        if not getattr(b, "dead", None):
            b.close()
