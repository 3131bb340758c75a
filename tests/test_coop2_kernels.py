"""NV cooperative matrix 2 modules and the Vulkan backend's coop2 skip rules
without a GPU: every module of the h100 space assembles and passes
``spirv-val --target-env vulkan1.3``, each carries the instruction and
capability of its op, and the backend names the missing feature, limit or
matrix type of a planted device state."""

from __future__ import annotations

import pytest

from cts.backends.vulkan import VulkanBackend
from cts.families.coop import load_profile
from cts.families.coop2 import ASSUMED, COOP2_EXTENSION, FEATURES, Coop2Props, coop2_cases
from cts.kernels.coop2_spv import module_text, spirv_module

H100 = load_profile("h100")
CASES = coop2_cases(H100.entries, ASSUMED, H100.subgroup_size)

WANT = {
    "reduce": ("OpCooperativeMatrixReduceNV", "CooperativeMatrixReductionsNV"),
    "perelem": ("OpCooperativeMatrixPerElementOpNV", "CooperativeMatrixPerElementOperationsNV"),
    "convert": ("CooperativeMatrixConversionsNV", "OpCooperativeMatrixStoreKHR"),
    "tensor": ("OpCreateTensorLayoutNV", "CooperativeMatrixTensorAddressingNV"),
    "decode": ("DecodeFunc", "CooperativeMatrixBlockLoadsNV"),
    "flex": ("OpCooperativeMatrixMulAddKHR",),
}


def test_every_module_validates():
    for c in CASES:
        assert spirv_module(c)[:4] == b"\x03\x02\x23\x07", c.id


@pytest.mark.parametrize("op", list(WANT))
def test_modules_carry_their_instruction(op):
    for c in (c for c in CASES if c.op == op):
        text = module_text(c)
        for w in WANT[op]:
            assert w in text, (c.id, w)


def test_ops_and_variants_in_the_text():
    by = {c.id: module_text(c) for c in CASES}
    assert "OpCooperativeMatrixTransposeNV" in by["vk2-convert-transpose-C16x16-f16-sg"]
    assert "OpCooperativeMatrixConvertNV" in by["vk2-convert-acc_a-C16x16-f16-sg"]
    assert "Row|Column" in by["vk2-reduce-rowcol-sum-same-C16x16-f32-sg"]
    assert "TensorView" in by["vk2-tensor-ld-clip-C16x16-f16-sg"]
    assert "OpCooperativeMatrixStoreTensorNV" in by["vk2-tensor-st-const-C16x16-f16-sg"]
    wg = next(t for i, t in by.items() if i.endswith("-wg128"))
    assert "LocalSize 128 1 1" in wg


def _device(features=FEATURES, max_dim=256, wg_max=256, exts=(COOP2_EXTENSION,), bf16=True) -> VulkanBackend:
    b = VulkanBackend()
    b._ready = True
    b.reason, b.coop_reason, b.entries, b.subgroup_size = None, None, list(H100.entries), 32
    b.bf16_coop = bf16
    b.exts = set(exts)
    b.features = {"vulkanMemoryModel": True, "bufferDeviceAddress": True, "shaderFloat16": True,
                  "storageBuffer16BitAccess": True}  # fmt: skip
    b._c2_props = Coop2Props(frozenset(features), max_dim, wg_max, ASSUMED.flex, "planted")
    return b


def _type_gap(reason) -> bool:
    # reductions to other shapes need types the assumed flexible table (granularity 16, f16 / f32) lacks;
    # acc -> A/B and transposes of 8-bit integers need 8-bit accumulators no entry has
    return reason is None or reason.startswith("no KHR entry or flexible-dimension entry has the matrix type")


def test_full_device_runs_every_case_its_types_allow():
    b = _device()
    got = {c.id: b.unsupported(c) for c in CASES}
    assert all(_type_gap(r) for r in got.values()), [(i, r) for i, r in got.items() if not _type_gap(r)]
    assert sum(r is None for r in got.values()) >= 153  # of 204 (the space grew since the bound was set)


def test_bf16_feature_is_named():
    b = _device(bf16=False)
    bf = [c for c in CASES if "bf16" in c.id]
    assert bf and {b.unsupported(c) for c in bf} == {"shaderBFloat16CooperativeMatrix is not supported"}


def test_missing_extension_and_features_are_named():
    assert {_device(exts=()).unsupported(c) for c in CASES} == {f"device does not report {COOP2_EXTENSION}"}
    b = _device(features=[f for f in FEATURES if f != "cooperativeMatrixReductions"])
    reasons = {b.unsupported(c) for c in CASES if c.op == "reduce"}  # the feature is named before types
    assert reasons == {"feature cooperativeMatrixReductions is not supported"}
    full = _device()
    assert all(b.unsupported(c) == full.unsupported(c) for c in CASES if c.op != "reduce")
    b = _device(features=[f for f in FEATURES if f != "cooperativeMatrixWorkgroupScope"])
    wg = [c for c in CASES if c.scope == "workgroup"]
    assert wg and {b.unsupported(c) for c in wg} == {
        "feature cooperativeMatrixWorkgroupScope is not supported"
    }


def test_flexible_dimension_limit_is_named():
    b = _device(max_dim=16)
    flex = [c for c in CASES if c.op == "flex"]
    assert all("cooperativeMatrixFlexibleDimensionsMaxDimension = 16" in b.unsupported(c) for c in flex)
    b = _device(wg_max=64)
    wg = [c for c in CASES if c.scope == "workgroup"]
    assert all("cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = 64" in b.unsupported(c) for c in wg)
