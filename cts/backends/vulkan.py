"""Backend ``vulkan``: cooperative matrix on a real Vulkan driver through the
``vulkan`` package (VK_KHR_cooperative_matrix; the GPU recipe: reports/h100-vulkan/setup.sh).

* Instance (API 1.3), one physical device chosen with ``--device`` (index or
  substring of the name; default: the first that reports
  VK_KHR_cooperative_matrix), a logical device created with the feature
  chain the driver reports (Vulkan 1.1/1.2/1.3 features,
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR,
  VkPhysicalDeviceShaderBfloat16FeaturesKHR and
  VkPhysicalDeviceShaderSubgroupRotateFeatures where offered) passed back as
  ``pNext`` so everything supported is enabled.  A device without
  cooperative matrix still runs the subgroup-rotate family
  (:mod:`cts.backends.vulkan_rotate`).
* ``vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`` (through
  vkGetInstanceProcAddr) gives the entries the case space is built from.
* One compute pipeline per generated module (cts.kernels.coop_glsl,
  validated with spirv-val), cached in-process; host-visible coherent
  storage buffers; one dispatch of one workgroup (= one subgroup) per
  subgroup row of the buffers; read-back of every buffer.

Skips (never errors) when the loader, a device, the extension, or the
property entry a case needs is missing; a bad ``--device`` is a one-line
usage error.  ``cts.runs.coop.device_muladd(backend, entry, A, B, C) -> D``
is the public entry point for experiments (the numerics fingerprint).
"""

from __future__ import annotations

import numpy as np

from cts.backends.base import Backend, BackendError, CaseError, DeviceInfo
from cts.backends.vulkan_rotate import ROTATE_EXTENSION_VK, ROTATE_FEATURES_STYPE
from cts.families.coop import COOP_EXTENSION, CoopEntry
from cts.families.registry import device_mixins, resolve

__all__ = ["VulkanBackend"]

BF16_FEATURES_STYPE = 1000141000  # VkPhysicalDeviceShaderBfloat16FeaturesKHR
MAX_GROUPS = 65535  # guaranteed maxComputeWorkGroupCount[0]
WAIT_NS = 20_000_000_000  # a dispatch that takes longer is a hang (the per-case pytest timeout is 300 s)


class VulkanBackend(*(resolve(ref) for ref in device_mixins("vulkan")), Backend):  # cts.families.registry
    name = "vulkan"
    coop_apis = ("vk",)

    def __init__(self, device: str | None = None):
        self.selector = device
        self._ready = False
        self.reason: str | None = None  # why nothing can run (skip reason)
        self.coop_reason: str | None = None  # why cooperative matrix cannot run on an open device
        self._pipes: dict[bytes, tuple] = {}
        self.entries: list[CoopEntry] = []
        self.unexpressed: list[str] = []  # reported entries with types/scopes the suite cannot name
        self.info = DeviceInfo(backend="vulkan", name="(not opened)")

    @classmethod
    def from_options(cls, device=None, **other):
        b = cls(device)
        b._open()  # a wrong --device is a usage error now, not 800 skips
        if device is not None and getattr(b, "pd", None) is None and b.reason:
            # a device was asked for by name and none can be listed: not "all skipped"
            raise BackendError(f"--device {device!r}: no device can be selected ({b.reason})")
        return b

    # ------------------------------------------------------------ set-up
    def _open(self) -> None:
        if self._ready:
            return
        self._ready = True
        try:
            import vulkan as vk
        except Exception as e:  # noqa: BLE001 - OSError without a loader, ImportError without the package
            self.reason = f"no Vulkan loader/package: {type(e).__name__}: {str(e)[:160]}"
            self.info = DeviceInfo(backend="vulkan", name="no Vulkan", extra={"reason": self.reason})
            return
        self.vk, self.ffi = vk, vk.ffi
        try:
            app = vk.VkApplicationInfo(
                pApplicationName="subgroup-matrix-cts",
                applicationVersion=1,
                pEngineName="cts",
                engineVersion=1,
                apiVersion=vk.VK_MAKE_VERSION(1, 3, 0),
            )
            self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
            pds = list(vk.vkEnumeratePhysicalDevices(self.instance))
        except Exception as e:  # noqa: BLE001
            self.reason = f"no Vulkan device: {type(e).__name__}: {str(e)[:160]}"
            self.info = DeviceInfo(backend="vulkan", name="no Vulkan device", extra={"reason": self.reason})
            return
        if not pds:
            self.reason = "no Vulkan physical device"
            self.info = DeviceInfo(backend="vulkan", name="no Vulkan device", extra={"reason": self.reason})
            return
        names = [vk.vkGetPhysicalDeviceProperties(p).deviceName for p in pds]
        exts = [{e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(p, None)} for p in pds]
        idx = self._select(names, exts)
        self.pd, self.exts = pds[idx], exts[idx]
        props = vk.vkGetPhysicalDeviceProperties(self.pd)
        self._describe_props(props, names[idx])
        if COOP_EXTENSION not in self.exts:
            self.coop_reason = f"device {names[idx]!r} does not report {COOP_EXTENSION}"
        try:
            self._create_device()
            if self.coop_reason is None:
                self.entries = self._query_entries()
        except BackendError:
            raise
        except Exception as e:  # noqa: BLE001 - a driver that fails here is one line, not a traceback
            raise BackendError(
                f"Vulkan: setting up {names[idx]!r} failed: {type(e).__name__}: {str(e)[:200]}"
            ) from None

    def _select(self, names: list[str], exts: list[set]) -> int:
        sel = self.selector
        if sel in (None, ""):
            for i, e in enumerate(exts):
                if COOP_EXTENSION in e:
                    return i
            return 0
        if str(sel).isascii() and str(sel).isdigit():
            i = int(sel)
            if i >= len(names):
                raise BackendError(f"--device {sel}: only {len(names)} Vulkan device(s): {', '.join(names)}")
            return i
        hits = [i for i, n in enumerate(names) if str(sel).lower() in n.lower()]
        if not hits:
            raise BackendError(f"--device {sel!r} matches no Vulkan device; devices: {', '.join(names)}")
        if len(hits) > 1:
            listed = ", ".join(f"{i}: {names[i]}" for i in hits)
            raise BackendError(
                f"--device {sel!r} matches {len(hits)} Vulkan devices ({listed}): give the index"
            )
        return hits[0]

    def _describe_props(self, props, name: str) -> None:
        vk = self.vk
        v13 = vk.VkPhysicalDeviceVulkan13Properties()
        v11 = vk.VkPhysicalDeviceVulkan11Properties(pNext=v13)
        v12 = vk.VkPhysicalDeviceVulkan12Properties(pNext=v11)
        p2 = vk.VkPhysicalDeviceProperties2(pNext=v12)
        driver, sg = str(props.driverVersion), 0
        self.subgroup: dict = {}
        try:
            vk.vkGetPhysicalDeviceProperties2(self.pd, p2)
            sg = int(v11.subgroupSize)
            self.subgroup = {
                "subgroupSize": sg,
                "supportedStages": int(v11.subgroupSupportedStages),
                "supportedOperations": int(v11.subgroupSupportedOperations),
                "minSubgroupSize": int(v13.minSubgroupSize),
                "maxSubgroupSize": int(v13.maxSubgroupSize),
                "maxComputeWorkgroupSubgroups": int(v13.maxComputeWorkgroupSubgroups),
                "requiredSubgroupSizeStages": int(v13.requiredSubgroupSizeStages),
                "maxComputeWorkGroupSize": int(props.limits.maxComputeWorkGroupSize[0]),
                "maxComputeWorkGroupInvocations": int(props.limits.maxComputeWorkGroupInvocations),
            }
            self.float_controls = {
                w: bool(getattr(v12, f"shaderSignedZeroInfNanPreserveFloat{w}")) for w in (16, 32, 64)
            }
            dn = self.ffi.string(v12.driverName).decode(errors="replace")
            di = self.ffi.string(v12.driverInfo).decode(errors="replace")
            driver = f"{dn} {di}".strip() or driver
        except Exception:  # noqa: BLE001 - older loaders: keep the 1.0 facts
            pass
        self.subgroup_size = sg or 32
        v = props.apiVersion
        self.info = DeviceInfo(
            backend="vulkan",
            name=name,
            platform="Vulkan",
            driver=driver,
            version=f"Vulkan {v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}",
            extensions=tuple(
                sorted(e for e in self.exts if any(k in e for k in ("cooperative", "bfloat16", "subgroup")))
            ),
            subgroup_sizes=(self.subgroup_size,),
            extra={
                "driverVersion": int(props.driverVersion),
                "vendorID": int(props.vendorID),
                "apiVersion": int(v),
                "subgroup": self.subgroup,
            },
        )

    def _create_device(self) -> None:
        vk, ffi = self.vk, self.ffi
        self._bf16 = ffi.new("uint32_t[8]")
        raw = ffi.cast("uint32_t*", self._bf16)
        raw[0] = BF16_FEATURES_STYPE
        has_bf16 = "VK_KHR_shader_bfloat16" in self.exts
        has_coop = self.coop_reason is None
        has_rot = ROTATE_EXTENSION_VK in self.exts
        self._rot = ffi.new("uint32_t[6]")  # VkPhysicalDeviceShaderSubgroupRotateFeatures
        rot = ffi.cast("uint32_t*", self._rot)
        rot[0] = ROTATE_FEATURES_STYPE
        tail = ffi.cast("void*", self._rot) if has_rot else ffi.NULL
        if has_bf16:
            ffi.cast("void**", ffi.cast("char*", self._bf16) + 8)[0] = tail
            tail = ffi.cast("void*", self._bf16)
        tail = self._coop2_link(tail)  # VkPhysicalDeviceCooperativeMatrix2FeaturesNV where offered
        coop = vk.VkPhysicalDeviceCooperativeMatrixFeaturesKHR(pNext=tail)
        f13 = vk.VkPhysicalDeviceVulkan13Features(pNext=coop if has_coop else tail)
        f12 = vk.VkPhysicalDeviceVulkan12Features(pNext=f13)
        f11 = vk.VkPhysicalDeviceVulkan11Features(pNext=f12)
        f2 = vk.VkPhysicalDeviceFeatures2(pNext=f11)
        self._chain = [coop, f13, f12, f11, f2]  # kept alive: the driver reads them at vkCreateDevice
        vk.vkGetPhysicalDeviceFeatures2(self.pd, f2)
        self.bf16_coop = has_bf16 and bool(raw[6])
        f = f2.features
        self.features = {
            "cooperativeMatrix": has_coop and bool(coop.cooperativeMatrix),
            "shaderSubgroupRotate": has_rot and bool(rot[4]),
            "shaderSubgroupRotateClustered": has_rot and bool(rot[5]),
            "shaderSubgroupExtendedTypes": bool(f12.shaderSubgroupExtendedTypes),
            "subgroupSizeControl": bool(f13.subgroupSizeControl),
            "shaderInt16": bool(f.shaderInt16),
            "shaderInt64": bool(f.shaderInt64),
            "shaderFloat64": bool(f.shaderFloat64),
            "shaderFloat16": bool(f12.shaderFloat16),
            "shaderInt8": bool(f12.shaderInt8),
            "storageBuffer8BitAccess": bool(f12.storageBuffer8BitAccess),
            "storageBuffer16BitAccess": bool(f11.storageBuffer16BitAccess),
            "vulkanMemoryModel": bool(f12.vulkanMemoryModel),
            "bufferDeviceAddress": bool(f12.bufferDeviceAddress),
            "variablePointers": bool(f11.variablePointers),
            "variablePointersStorageBuffer": bool(f11.variablePointersStorageBuffer),
            "shaderBFloat16CooperativeMatrix": self.bf16_coop,
        }
        self.info.extra["features"] = {k: int(v) for k, v in self.features.items()}
        if has_coop and not coop.cooperativeMatrix:
            self.coop_reason = "cooperativeMatrix feature is not supported"
        qfs = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.pd)
        self.qf = next(i for i, q in enumerate(qfs) if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        names = (
            [COOP_EXTENSION] * (self.coop_reason is None)
            + ["VK_KHR_shader_bfloat16"] * has_bf16
            + [ROTATE_EXTENSION_VK] * has_rot
            + self._coop2_extensions()
        )
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.qf, queueCount=1, pQueuePriorities=[1.0])
        info = vk.VkDeviceCreateInfo(
            pNext=f2,
            queueCreateInfoCount=1,
            pQueueCreateInfos=[qinfo],
            enabledExtensionCount=len(names),
            ppEnabledExtensionNames=names,
        )
        self.device = vk.vkCreateDevice(self.pd, info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.qf, 0)
        self.mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.pd)
        self.pool = vk.vkCreateCommandPool(
            self.device,
            vk.VkCommandPoolCreateInfo(
                queueFamilyIndex=self.qf, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
            ),
            None,
        )
        self.fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)

    # --------------------------------------------------------- interface
    def describe(self) -> DeviceInfo:
        self._open()
        self.info.extra.setdefault("mlir_toolchain", self.mlir_toolchain())  # the MLIR family's compiler
        return self.info

    def unsupported(self, case) -> str | None:
        base = super().unsupported(case)
        if base:
            return base
        self._open()
        if self.reason:
            return self.reason
        return self.unsupported_by_family(case)  # the family's check (cts.families.registry `check`)

    # --------------------------------------------------------- execution
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

    def _pipeline(
        self,
        code: bytes,
        nbuf: int,
        spec: tuple[int, ...] = (),
        required_sg: int = 0,
        entry_name="main",
        push=0,
    ):
        """The compute pipeline of a module's entry point, cached per (module,
        values of specialization constants 0, 1, ..., required subgroup size
        or 0, entry point, push-constant bytes)."""
        key = (code, spec, required_sg, entry_name, push)
        if key in self._pipes:
            return self._pipes[key]
        vk, ffi = self.vk, self.ffi
        mod = vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )
        binds = [
            vk.VkDescriptorSetLayoutBinding(
                binding=i,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            )
            for i in range(nbuf)
        ]
        dsl = vk.vkCreateDescriptorSetLayout(
            self.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=nbuf, pBindings=binds), None
        )
        ranges = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=push)]
        pl = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=1,
                pSetLayouts=[dsl],
                pushConstantRangeCount=int(push > 0),
                pPushConstantRanges=ranges if push else None,
            ),
            None,
        )
        entry = ffi.new("char[]", entry_name.encode())  # DEVICE.md pitfall: keep pName alive
        keep: list = [entry]
        extra = {}
        if spec:
            data = ffi.new("uint32_t[]", list(spec))
            entries = [
                vk.VkSpecializationMapEntry(constantID=i, offset=4 * i, size=4) for i in range(len(spec))
            ]
            extra["pSpecializationInfo"] = vk.VkSpecializationInfo(
                mapEntryCount=len(spec), pMapEntries=entries, dataSize=4 * len(spec), pData=data
            )
            keep += [data, entries, extra["pSpecializationInfo"]]
        if required_sg:
            req = vk.VkPipelineShaderStageRequiredSubgroupSizeCreateInfo(requiredSubgroupSize=required_sg)
            extra["pNext"] = req
            keep.append(req)
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName=entry, **extra
        )
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)
        pipe = vk.vkCreateComputePipelines(self.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        self._pipes[key] = (pipe, pl, dsl, mod, stage, keep)
        return self._pipes[key]

    def _dispatch(
        self,
        code: bytes,
        order: list[str],
        arrays: dict,
        groups: int,
        case_id: str = "",
        spec: tuple[int, ...] = (),
        required_sg: int = 0,
        entry: str = "main",
        push=None,
        bda: tuple[str, ...] = (),
    ) -> dict:
        """One dispatch.  If the submitted work does not complete (timeout,
        device lost), its buffers, descriptor pool and command buffer may
        still be in use by the device: they are deliberately leaked, and the
        backend is marked dead so every later case fails at once naming this
        one (freeing them, or reusing the fence, would be invalid Vulkan and
        could make later cases read results too early)."""
        vk, ffi = self.vk, self.ffi
        pdata = push({}) if push else b""  # push(addresses of the ``bda`` buffers) -> bytes
        more = {"push": len(pdata)} if pdata else {}
        pipe, pl, dsl, *_ = self._pipeline(code, len(order), spec, required_sg, entry_name=entry, **more)
        made = []
        addr: dict = {}
        in_flight = False
        try:
            for n in order:
                x = arrays[n]
                buf, mem, size = self._buffer(x.nbytes, True) if n in bda else self._buffer(x.nbytes)
                made.append((buf, mem, size))
                if n in bda:
                    # the binding's wrapper returns its argument, not the address: call the C function
                    info = ffi.new("VkBufferDeviceAddressInfo*", {"sType": 1000244001, "buffer": buf})
                    addr[n] = int(vk.lib.vkGetBufferDeviceAddress(self.device, info))
                ptr = vk.vkMapMemory(self.device, mem, 0, size, 0)
                ffi.memmove(ptr, x.tobytes(), x.nbytes)
                vk.vkUnmapMemory(self.device, mem)
            dp = vk.vkCreateDescriptorPool(
                self.device,
                vk.VkDescriptorPoolCreateInfo(
                    maxSets=1,
                    poolSizeCount=1,
                    pPoolSizes=[
                        vk.VkDescriptorPoolSize(
                            type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=len(order)
                        )
                    ],
                ),
                None,
            )
            cb = None
            try:
                ds = vk.vkAllocateDescriptorSets(
                    self.device,
                    vk.VkDescriptorSetAllocateInfo(
                        descriptorPool=dp, descriptorSetCount=1, pSetLayouts=[dsl]
                    ),
                )[0]
                infos = [vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=s) for b, _, s in made]
                writes = [
                    vk.VkWriteDescriptorSet(
                        dstSet=ds,
                        dstBinding=i,
                        descriptorCount=1,
                        descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                        pBufferInfo=[infos[i]],
                    )
                    for i in range(len(order))
                ]
                vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)
                cb = vk.vkAllocateCommandBuffers(
                    self.device,
                    vk.VkCommandBufferAllocateInfo(commandPool=self.pool, level=0, commandBufferCount=1),
                )[0]
                vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
                vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
                vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [ds], 0, None)
                if pdata:
                    pbytes = push(addr)
                    pbuf = ffi.new("char[]", pbytes)
                    vk.vkCmdPushConstants(cb, pl, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(pbytes), pbuf)
                vk.vkCmdDispatch(cb, groups, 1, 1)
                vk.vkEndCommandBuffer(cb)
                vk.vkResetFences(self.device, 1, [self.fence])
                vk.vkQueueSubmit(
                    self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], self.fence
                )
                in_flight = True
                try:
                    vk.vkWaitForFences(self.device, 1, [self.fence], vk.VK_TRUE, WAIT_NS)
                except Exception as e:  # noqa: BLE001 - VkTimeout, VkErrorDeviceLost, ...
                    self.dead = (
                        f"{type(e).__name__} while waiting for case {case_id or '?'} "
                        f"({WAIT_NS / 1e9:.0f} s limit); later cases are not run on it"
                    )
                    raise CaseError(f"Vulkan: {self.dead}") from None
                in_flight = False
            finally:
                if not in_flight:
                    if cb is not None:
                        vk.vkFreeCommandBuffers(self.device, self.pool, 1, [cb])
                    vk.vkDestroyDescriptorPool(self.device, dp, None)
            out = {}
            for n, (_, mem, _size) in zip(order, made):
                x = arrays[n]
                ptr = vk.vkMapMemory(self.device, mem, 0, x.nbytes, 0)
                out[n] = np.frombuffer(bytes(ptr[: x.nbytes]), dtype=x.dtype).reshape(x.shape).copy()
                vk.vkUnmapMemory(self.device, mem)
            return out
        finally:
            if not in_flight:  # work the device may still run keeps its buffers (see above)
                for b, m, _ in made:
                    vk.vkDestroyBuffer(self.device, b, None)
                    vk.vkFreeMemory(self.device, m, None)

    max_groups = MAX_GROUPS

    def close(self) -> None:
        if not self._ready or self.reason or not hasattr(self, "device"):
            return
        if getattr(
            self, "dead", None
        ):  # work of a hung dispatch may still run: wait for nothing, free nothing
            return
        vk = self.vk
        try:
            vk.vkDeviceWaitIdle(self.device)
            for pipe, pl, dsl, mod, *_ in self._pipes.values():
                vk.vkDestroyPipeline(self.device, pipe, None)
                vk.vkDestroyPipelineLayout(self.device, pl, None)
                vk.vkDestroyDescriptorSetLayout(self.device, dsl, None)
                vk.vkDestroyShaderModule(self.device, mod, None)
            self._pipes.clear()
            vk.vkDestroyFence(self.device, self.fence, None)
            vk.vkDestroyCommandPool(self.device, self.pool, None)
            vk.vkDestroyDevice(self.device, None)
            vk.vkDestroyInstance(self.instance, None)
        except Exception:  # noqa: BLE001 - teardown must not fail a session
            pass
