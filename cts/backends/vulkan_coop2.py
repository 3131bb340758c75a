"""Vulkan mixin: NV cooperative matrix 2 (``VK_NV_cooperative_matrix2``).

* ``_coop2_link(tail)`` puts a ``VkPhysicalDeviceCooperativeMatrix2FeaturesNV``
  into the feature chain the device is created with (so every feature the
  driver reports is enabled) where the device lists the extension;
  ``_coop2_extensions()`` names the extension to enable.
* ``coop2_props()``: the seven features, ``VkPhysicalDeviceCooperativeMatrix2PropertiesNV``
  and the ``VkCooperativeMatrixFlexibleDimensionsPropertiesNV`` entries of
  ``vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV``.
  The ``vulkan`` package (1.3.275) predates the extension, so the structures
  are raw words (layouts from the Vulkan registry) and the command is reached
  through the loader's ``vkGetInstanceProcAddr``.
* ``unsupported_coop_matrix2(case)``: a skip naming the missing extension,
  feature, limit or matrix type; ``run_coop_matrix2`` dispatches the case's
  module (cts.kernels.coop2_spv) over the buffer contract of cts.runs.coop2.
"""

from __future__ import annotations

import numpy as np

from cts.errors import CaseError, Unsupported
from cts.families.coop import VK_COMPONENT
from cts.families.coop2 import COOP2_EXTENSION, FEATURES, Coop2Props, FlexEntry, type_supported

__all__ = ["Coop2Vulkan", "COOP2_FEATURES_STYPE"]

COOP2_FEATURES_STYPE = 1000593000
FLEX_PROPERTIES_STYPE = 1000593001  # VkCooperativeMatrixFlexibleDimensionsPropertiesNV
COOP2_PROPERTIES_STYPE = 1000593002  # VkPhysicalDeviceCooperativeMatrix2PropertiesNV
_FLEX_WORDS = 14  # sType, (pad), pNext (2 words), 10 members
_SCOPES = {2: "workgroup", 3: "subgroup"}


class Coop2Vulkan:
    def _coop2_link(self, tail):
        """The coop2 features structure chained in front of ``tail`` (or
        ``tail`` itself where the device lacks the extension)."""
        ffi = self.ffi
        self._c2_feat = ffi.new("uint32_t[12]")  # sType, pad, pNext, 7 VkBool32
        raw = ffi.cast("uint32_t*", self._c2_feat)
        raw[0] = COOP2_FEATURES_STYPE
        if COOP2_EXTENSION not in self.exts or getattr(self, "coop_reason", None) is not None:
            return tail
        ffi.cast("void**", ffi.cast("char*", self._c2_feat) + 8)[0] = tail
        return ffi.cast("void*", self._c2_feat)

    def _coop2_extensions(self) -> list[str]:
        ok = COOP2_EXTENSION in self.exts and getattr(self, "coop_reason", None) is None
        return [COOP2_EXTENSION] if ok else []

    def coop2_props(self) -> Coop2Props | None:
        self._open()
        if getattr(self, "_c2_props", None) is not None:
            return self._c2_props
        if self.reason or getattr(self, "coop_reason", None) or COOP2_EXTENSION not in self.exts:
            self._c2_props = Coop2Props(source="device (no VK_NV_cooperative_matrix2)")
            return self._c2_props
        ffi, vk = self.ffi, self.vk
        raw = ffi.cast("uint32_t*", self._c2_feat)
        feats = frozenset(n for i, n in enumerate(FEATURES) if raw[4 + i])
        pb = ffi.new("uint32_t[8]")
        pr = ffi.cast("uint32_t*", pb)
        pr[0] = COOP2_PROPERTIES_STYPE
        vk.vkGetPhysicalDeviceProperties2(
            self.pd, vk.VkPhysicalDeviceProperties2(pNext=ffi.cast("void*", pb))
        )
        wg_max, max_dim, reserved = int(pr[4]), int(pr[5]), int(pr[6])
        flex, raw_rows = [], []
        fp = vk.lib.vkGetInstanceProcAddr(
            self.instance, b"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"
        )
        if fp != ffi.NULL:
            fn = ffi.cast("VkResult(*)(VkPhysicalDevice, uint32_t*, void*)", fp)
            n = ffi.new("uint32_t*")
            fn(self.pd, n, ffi.NULL)
            arr = ffi.new("uint32_t[]", max(1, _FLEX_WORDS * n[0]))
            for i in range(n[0]):
                arr[_FLEX_WORDS * i] = FLEX_PROPERTIES_STYPE
            fn(self.pd, n, arr)
            for i in range(n[0]):
                w = [int(arr[_FLEX_WORDS * i + j]) for j in range(4, _FLEX_WORDS)]
                types = [VK_COMPONENT.get(x, f"vk{x}") for x in w[3:7]]
                row = dict(Mg=w[0], Ng=w[1], Kg=w[2], A=types[0], B=types[1], C=types[2], R=types[3],
                           sat=bool(w[7]), scope=_SCOPES.get(w[8], f"scope{w[8]}"), wg=w[9])  # fmt: skip
                raw_rows.append(row)
                if not any(t.startswith("vk") for t in types) and not row["scope"].startswith("scope"):
                    flex.append(FlexEntry(**row))
        self.info.extra["coop2"] = {
            "features": sorted(feats),
            "cooperativeMatrixWorkgroupScopeMaxWorkgroupSize": wg_max,
            "cooperativeMatrixFlexibleDimensionsMaxDimension": max_dim,
            "cooperativeMatrixWorkgroupScopeReservedSharedMemory": reserved,
            "flexible_dimensions": raw_rows,
        }
        self._c2_props = Coop2Props(feats, max_dim, wg_max, tuple(flex), "device")
        return self._c2_props

    def unsupported_coop_matrix2(self, case) -> str | None:
        if getattr(self, "coop_reason", None):
            return self.coop_reason
        if COOP2_EXTENSION not in self.exts:
            return f"device does not report {COOP2_EXTENSION}"
        props = self.coop2_props()
        feats = getattr(self, "features", {})
        if case.feature not in props.features:
            return f"feature {case.feature} is not supported"
        if case.op == "decode" and "cooperativeMatrixTensorAddressing" not in props.features:
            return (
                "feature cooperativeMatrixTensorAddressing is not supported (block loads use tensor layouts)"
            )
        if case.op == "decode" and not feats.get("bufferDeviceAddress"):
            return "feature bufferDeviceAddress is not supported (DecodeFunc takes a PhysicalStorageBuffer pointer)"
        if not feats.get("vulkanMemoryModel"):
            return "feature vulkanMemoryModel is not supported (cooperative matrix modules use it)"
        if case.sg != self.subgroup_size:
            return f"case planned for subgroup size {case.sg}, device has {self.subgroup_size}"
        if case.scope == "workgroup":
            if "cooperativeMatrixWorkgroupScope" not in props.features:
                return "feature cooperativeMatrixWorkgroupScope is not supported"
            if case.wg > props.wg_max:
                return f"{case.wg} invocations exceed cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = {props.wg_max}"
        if case.op == "flex" and case.flex not in props.flex:
            return f"no VkCooperativeMatrixFlexibleDimensionsPropertiesNV entry {case.flex}"
        types = _types(case)
        if any(t == "f16" for *_, t in types) and not (
            feats.get("shaderFloat16") and feats.get("storageBuffer16BitAccess")
        ):
            return "features shaderFloat16 / storageBuffer16BitAccess are not supported"
        if any(t == "bf16" for *_, t in types) and not getattr(self, "bf16_coop", False):
            return "shaderBFloat16CooperativeMatrix is not supported"
        for use, r, c, t in types:
            why = type_supported(use, r, c, t, case.scope, self.entries, props, case.wg)
            if why:
                return why
        return None

    def run_coop_matrix2(self, case, bufs: dict) -> dict:
        from cts.kernels.coop2_spv import buffers, spirv_module

        if getattr(self, "dead", None):
            raise CaseError(f"Vulkan device unusable: {self.dead}")
        code = spirv_module(case)  # a host-tool failure is a HarnessError, not the device's
        order = [n for n, _, _ in buffers(case)]
        arrays = {n: np.ascontiguousarray(bufs[n]) for n in order}
        groups = next(iter(arrays.values())).shape[0]
        if groups > self.max_groups:
            raise Unsupported(f"{groups} workgroups exceed the guaranteed {self.max_groups}")
        try:
            out = self._dispatch(code, order, arrays, groups, case.id)
        except CaseError:
            raise
        except Exception as e:  # noqa: BLE001 - a driver error fails this case only
            raise CaseError(f"Vulkan: {type(e).__name__}: {str(e)[:300]}") from None
        return {**bufs, **out}


def _types(case) -> list[tuple[str, int, int, str]]:
    """The cooperative matrix types a case's module declares."""
    R, C, t = case.rows, case.cols, case.t
    if case.op == "reduce":
        return [("C", R, C, t), ("C", *case.out, t)]
    if case.op == "convert":
        dst = "A" if case.variant == "acc_a" else "B"
        return [("C", R, C, t), (dst, *case.out, case.to or t)]
    if case.op == "flex":
        f, K = case.flex, case.K
        return [("A", R, K, f.A), ("B", K, C, f.B), ("C", R, C, f.C), ("C", R, C, f.R)]
    return [(case.use, R, C, t)]
