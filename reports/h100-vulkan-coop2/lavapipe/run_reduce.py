#!/usr/bin/env python3
"""Standalone reproducer (needs only numpy and the `vulkan` Python binding):
OpCooperativeMatrixReduceNV, Reduce = Row, of an 8x8 f32 accumulator into an
8x16 Result, one subgroup (LocalSize 8).  SPV_NV_cooperative_matrix2
(OpCooperativeMatrixReduceNV): with Row the Result has the rows of Matrix and
any number of columns, every element the reduction of its row, so all 16
columns of row r must hold sum(x[r, :]).  The output buffer starts as the
sentinel 0x7fbadbad, so a column the driver never writes shows as such.

    VK_DRIVER_FILES=.../lvp.json python run_reduce.py [--2x2] [DEVICE-NAME-SUBSTRING]
Exit 1 when the result is wrong (lavapipe, Mesa 26.1.6: columns 8..15 keep the sentinel).
``--2x2``: OpCooperativeMatrixReduceNV 2x2 of a 16x16 f32 accumulator into 8x8 (each element the sum of
its 2x2 block); lavapipe dies in vkCreateComputePipelines (SIGSEGV)."""

import sys
from pathlib import Path

import numpy as np
import vulkan as vk

ffi = vk.ffi
TWO = "--2x2" in sys.argv
sys.argv = [a for a in sys.argv if a != "--2x2"]
SPV = (Path(__file__).parent / f"reduce-{'2x2-sum-C16x16' if TWO else 'row-sum-out8x16-C8x8'}-f32.spv").read_bytes()
SENTINEL = 0x7FBADBAD
n = 16 if TWO else 8
x = (np.arange(n * n, dtype=np.float32) + 1).reshape(n, n)  # inputs: row r = n*r+1 .. n*r+n
if TWO:
    expected = x.reshape(8, 2, 8, 2).sum(axis=(1, 3))
else:
    expected = np.repeat(x.sum(axis=1, keepdims=True), 16, axis=1)
OUT = expected.size

app = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
pds = vk.vkEnumeratePhysicalDevices(inst)
want = sys.argv[1] if len(sys.argv) > 1 else ""
pd = next(p for p in pds if want in vk.vkGetPhysicalDeviceProperties(p).deviceName)
print("device:", vk.vkGetPhysicalDeviceProperties(pd).deviceName)
c2 = ffi.new("uint32_t[12]")  # VkPhysicalDeviceCooperativeMatrix2FeaturesNV (the binding predates it)
ffi.cast("uint32_t*", c2)[0] = 1000593000
coop = vk.VkPhysicalDeviceCooperativeMatrixFeaturesKHR(pNext=ffi.cast("void*", c2))
f13 = vk.VkPhysicalDeviceVulkan13Features(pNext=coop)
f12 = vk.VkPhysicalDeviceVulkan12Features(pNext=f13)
f2 = vk.VkPhysicalDeviceFeatures2(pNext=f12)
vk.vkGetPhysicalDeviceFeatures2(pd, f2)  # every feature the driver reports is enabled below
qf = next(i for i, q in enumerate(vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)) if q.queueFlags & 2)
exts = ["VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2"]
dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(
    pNext=f2, queueCreateInfoCount=1, enabledExtensionCount=2, ppEnabledExtensionNames=exts,
    pQueueCreateInfos=[vk.VkDeviceQueueCreateInfo(queueFamilyIndex=qf, queueCount=1, pQueuePriorities=[1.0])],
), None)
queue = vk.vkGetDeviceQueue(dev, qf, 0)
mprops = vk.vkGetPhysicalDeviceMemoryProperties(pd)
host = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT


def buffer(data: bytes):
    b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(size=len(data), usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT), None)
    req = vk.vkGetBufferMemoryRequirements(dev, b)
    t = next(i for i in range(mprops.memoryTypeCount)
             if req.memoryTypeBits >> i & 1 and mprops.memoryTypes[i].propertyFlags & host == host)
    m = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=t), None)
    vk.vkBindBufferMemory(dev, b, m, 0)
    p = vk.vkMapMemory(dev, m, 0, len(data), 0)
    ffi.memmove(p, data, len(data))
    vk.vkUnmapMemory(dev, m)
    return b, m


bx, _ = buffer(x.tobytes())
bo, mo = buffer(np.full(OUT, SENTINEL, np.uint32).tobytes())
binds = [vk.VkDescriptorSetLayoutBinding(binding=i, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                         descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT) for i in (0, 1)]
dsl = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=2, pBindings=binds), None)
pl = vk.vkCreatePipelineLayout(dev, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[dsl]), None)
sm = vk.vkCreateShaderModule(dev, vk.VkShaderModuleCreateInfo(codeSize=len(SPV), pCode=SPV), None)
stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=sm, pName="main")
pipe = vk.vkCreateComputePipelines(dev, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=pl)], None)[0]
pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=[
    vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=2)]), None)
ds = vk.vkAllocateDescriptorSets(dev, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                                                     pSetLayouts=[dsl]))[0]
vk.vkUpdateDescriptorSets(dev, 2, [vk.VkWriteDescriptorSet(
    dstSet=ds, dstBinding=i, descriptorCount=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=(1 << 64) - 1)]) for i, b in ((0, bx), (1, bo))], 0, None)
cpool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=qf), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=cpool, level=0, commandBufferCount=1))[0]
vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
vk.vkCmdBindPipeline(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipe)
vk.vkCmdBindDescriptorSets(cb, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, [ds], 0, None)
vk.vkCmdDispatch(cb, 1, 1, 1)
vk.vkEndCommandBuffer(cb)
fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
vk.vkQueueSubmit(queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], fence)
vk.vkWaitForFences(dev, 1, [fence], vk.VK_TRUE, 10**10)
p = vk.vkMapMemory(dev, mo, 0, OUT * 4, 0)
bits = np.frombuffer(bytes(p[: OUT * 4]), np.uint32).reshape(expected.shape)
got = bits.view(np.float32)
never = bits == SENTINEL
print("expected row 0:", expected[0].tolist())
print("observed row 0:", ["never written" if n else float(v) for v, n in zip(got[0], never[0])])
bad = never | (got != expected)
print(f"{int(bad.sum())} of {OUT} elements wrong ({int(never.sum())} never written)")
sys.exit(1 if bad.any() else 0)
