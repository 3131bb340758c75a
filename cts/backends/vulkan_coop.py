"""Cooperative-matrix pieces of the ``vulkan`` backend (a mixin of
``cts.backends.vulkan.VulkanBackend``): what the suite cannot generate, the
features the KHR axes need (``cts.families.coop.VARIANTS``), and host-visible
buffers, with a device address where a PhysicalStorageBuffer case asks."""

from __future__ import annotations

__all__ = ["CoopVulkan"]


class CoopVulkan:
    def _khr_axis_missing(self, case) -> str | None:
        """The feature a KHR axis (cts.families.coop.VARIANTS) needs, when the device lacks it."""
        need = []
        if case.mem == "bda":
            need.append("bufferDeviceAddress")
        if case.var == "varptr":
            need.append("variablePointersStorageBuffer" if case.mem == "storage" else "variablePointers")
        if case.var in ("avail", "struct"):  # struct: spirv-val asks for the Vulkan memory model
            need.append("vulkanMemoryModel")
        features = getattr(self, "features", {})
        missing = [f for f in need if not features.get(f)]
        if missing:
            return f"{', '.join(missing)} is not supported (needed by the {case.var or case.mem} form)"
        if case.op == "convert" and case.tier == "special":
            from reference.dtypes import etype

            fc = getattr(self, "float_controls", {})
            for w in sorted({etype(case.mat.t).bits, etype(case.to).bits}):
                if not fc.get(w):
                    return f"shaderSignedZeroInfNanPreserveFloat{w} is not supported (inf / NaN conversions)"
        sub = getattr(self, "subgroup", {})
        if case.var in ("sgmin", "sgmax"):
            if not features.get("subgroupSizeControl") or not sub.get("requiredSubgroupSizeStages", 0) & 0x20:
                return "subgroupSizeControl with compute in requiredSubgroupSizeStages is not supported"
            size = sub.get(f"{case.var[2:]}SubgroupSize")
            if size != case.sg:
                return (
                    f"case planned for subgroup size {case.sg}, device's {case.var[2:]}SubgroupSize is {size}"
                )
        if case.var == "wg4" and 4 * case.sg > sub.get("maxComputeWorkGroupInvocations", 0):
            return f"4 subgroups of {case.sg} exceed maxComputeWorkGroupInvocations"
        return None

    @staticmethod
    def _not_generated(case) -> str | None:
        """Entries the device reports but cts.kernels.coop_glsl cannot
        express: a skip naming the suite's gap, not a failure of the driver."""
        gap = "not realized by the suite: {} (a coverage gap of the suite, not a device verdict)"
        scope = case.entry.scope if case.entry is not None else case.mat.scope
        if scope != "subgroup":
            return gap.format(f"{scope} scope is not generated (GLSL gl_ScopeSubgroup only)")
        if case.entry is not None and case.entry.C != case.entry.R:
            return gap.format(
                f"coopMatMulAdd cannot express C type {case.entry.C} != Result type {case.entry.R}"
            )
        return None

    def _buffer(self, nbytes: int, address: bool = False):
        vk = self.vk
        size = max(256, -(-nbytes // 256) * 256)
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | (0x20000 if address else 0)  # SHADER_DEVICE_ADDRESS
        buf = vk.vkCreateBuffer(
            self.device, vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=0), None
        )
        req = vk.vkGetBufferMemoryRequirements(self.device, buf)
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        mp = self.mem_props
        idx = next(
            i
            for i in range(mp.memoryTypeCount)
            if req.memoryTypeBits & (1 << i) and (mp.memoryTypes[i].propertyFlags & want) == want
        )
        flags = vk.VkMemoryAllocateFlagsInfo(flags=0x2) if address else None  # DEVICE_ADDRESS_BIT
        info = vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=idx)
        if flags is not None:
            info = vk.VkMemoryAllocateInfo(pNext=flags, allocationSize=req.size, memoryTypeIndex=idx)
        mem = vk.vkAllocateMemory(self.device, info, None)
        vk.vkBindBufferMemory(self.device, buf, mem, 0)
        return buf, mem, size
