"""Raw ``clGetDeviceInfo`` queries that pyopencl refuses, through ctypes.

* ``CL_DEVICE_SUB_GROUP_SIZES_INTEL`` (0x4108, cl_intel_required_subgroup_size):
  array of size_t.
* ``cl_khr_spirv_queries``: ``CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR``
  (0x12B9) and ``CL_DEVICE_SPIRV_EXTENSIONS_KHR`` (0x12BA), arrays of
  ``const char *``; ``CL_DEVICE_SPIRV_CAPABILITIES_KHR`` (0x12BB), array of
  cl_uint capability numbers (shared/specs/local-runtimes.md section 2.0).
* ``CL_DEVICE_IL_VERSION`` (0x105B), a string.

The queries go through the same ICD loader pyopencl uses (its bundled
``libOpenCL``), with the device's ``int_ptr``.  Every query returns an empty
value when the device does not know the parameter, never raises.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os

__all__ = [
    "SPIRV_CAPABILITY_NAMES",
    "capability_name",
    "il_version",
    "spirv_capabilities",
    "spirv_extended_instruction_sets",
    "spirv_extensions",
    "subgroup_sizes",
    "icd_loader",
    "device_info_bytes",
]

CL_DEVICE_IL_VERSION = 0x105B
CL_DEVICE_SUB_GROUP_SIZES_INTEL = 0x4108
CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR = 0x12B9
CL_DEVICE_SPIRV_EXTENSIONS_KHR = 0x12BA
CL_DEVICE_SPIRV_CAPABILITIES_KHR = 0x12BB

# SPIR-V capability enumerants (SPIR-V spec section 3.31 and the extension
# registry), checked against SPIRV-Tools v2025.5 (`OpCapability Name` assembled
# to its number).  Numbers not listed print as ``Capability(N)``.
SPIRV_CAPABILITY_NAMES: dict[int, str] = {
    0: "Matrix", 1: "Shader", 2: "Geometry", 3: "Tessellation", 4: "Addresses", 5: "Linkage",
    6: "Kernel", 7: "Vector16", 8: "Float16Buffer", 9: "Float16", 10: "Float64", 11: "Int64",
    12: "Int64Atomics", 13: "ImageBasic", 14: "ImageReadWrite", 15: "ImageMipmap", 17: "Pipes",
    18: "Groups", 19: "DeviceEnqueue", 20: "LiteralSampler", 21: "AtomicStorage", 22: "Int16",
    38: "GenericPointer", 39: "Int8", 43: "Sampled1D", 44: "Image1D", 46: "SampledBuffer",
    47: "ImageBuffer", 50: "ImageQuery", 56: "StorageImageWriteWithoutFormat", 58: "SubgroupDispatch",
    59: "NamedBarrier", 60: "PipeStorage", 61: "GroupNonUniform", 62: "GroupNonUniformVote",
    63: "GroupNonUniformArithmetic", 64: "GroupNonUniformBallot", 65: "GroupNonUniformShuffle",
    66: "GroupNonUniformShuffleRelative", 67: "GroupNonUniformClustered", 68: "GroupNonUniformQuad",
    71: "UniformDecoration", 4201: "CooperativeMatrixLayoutsARM", 4212: "Float8EXT",
    4213: "Float8CooperativeMatrixEXT", 4423: "SubgroupBallotKHR", 4431: "SubgroupVoteKHR",
    4433: "StorageBuffer16BitAccess", 4442: "VariablePointers", 4448: "StorageBuffer8BitAccess",
    4464: "DenormPreserve", 4465: "DenormFlushToZero", 4466: "SignedZeroInfNanPreserve",
    4467: "RoundingModeRTE", 4468: "RoundingModeRTZ", 4473: "UntypedPointersKHR", 5016: "Int64ImageEXT",
    5055: "ShaderClockKHR", 5112: "Int4TypeINTEL", 5114: "Int4CooperativeMatrixINTEL",
    5116: "BFloat16TypeKHR", 5117: "BFloat16DotProductKHR", 5118: "BFloat16CooperativeMatrixKHR",
    5297: "GroupNonUniformPartitionedNV", 5301: "ShaderNonUniform", 5345: "VulkanMemoryModel",
    5347: "PhysicalStorageBufferAddresses", 5357: "CooperativeMatrixNV", 5379: "DemoteToHelperInvocation",
    5404: "AtomicFloat16VectorNV", 5430: "CooperativeMatrixReductionsNV",
    5431: "CooperativeMatrixConversionsNV", 5432: "CooperativeMatrixPerElementOperationsNV",
    5433: "CooperativeMatrixTensorAddressingNV", 5434: "CooperativeMatrixBlockLoadsNV",
    5439: "TensorAddressingNV", 5568: "SubgroupShuffleINTEL", 5569: "SubgroupBufferBlockIOINTEL",
    5570: "SubgroupImageBlockIOINTEL", 5579: "SubgroupImageMediaBlockIOINTEL", 5582: "RoundToInfinityINTEL",
    5583: "FloatingPointModeINTEL", 5584: "IntegerFunctions2INTEL", 5603: "FunctionPointersINTEL",
    5604: "IndirectReferencesINTEL", 5606: "AsmINTEL", 5612: "AtomicFloat32MinMaxEXT",
    5613: "AtomicFloat64MinMaxEXT", 5616: "AtomicFloat16MinMaxEXT", 5617: "VectorComputeINTEL",
    5619: "VectorAnyINTEL", 5629: "ExpectAssumeKHR", 5696: "SubgroupAvcMotionEstimationINTEL",
    5844: "ArbitraryPrecisionIntegersINTEL", 5886: "UnstructuredLoopControlsINTEL",
    5892: "KernelAttributesINTEL", 5897: "FPGAKernelAttributesINTEL", 5906: "LoopFuseINTEL",
    6016: "DotProductInputAll", 6017: "DotProductInput4x8Bit", 6018: "DotProductInput4x8BitPacked",
    6019: "DotProduct", 6020: "RayCullMaskKHR", 6022: "CooperativeMatrixKHR",
    6024: "ReplicatedCompositesEXT", 6025: "BitInstructions", 6026: "GroupNonUniformRotateKHR",
    6029: "FloatControls2", 6033: "AtomicFloat32AddEXT", 6034: "AtomicFloat64AddEXT",
    6089: "LongCompositesINTEL", 6094: "OptNoneEXT", 6095: "AtomicFloat16AddEXT",
    6114: "DebugInfoModuleINTEL", 6115: "BFloat16ConversionINTEL", 6141: "SplitBarrierINTEL",
    6144: "ArithmeticFenceEXT", 6150: "FPGAClusterAttributesV2INTEL", 6169: "FPMaxErrorINTEL",
    6187: "GlobalVariableHostAccessINTEL", 6189: "GlobalVariableFPGADecorationsINTEL",
    6220: "SubgroupBufferPrefetchINTEL", 6228: "Subgroup2DBlockIOINTEL",
    6229: "Subgroup2DBlockTransformINTEL", 6230: "Subgroup2DBlockTransposeINTEL",
    6236: "SubgroupMatrixMultiplyAccumulateINTEL", 6241: "TernaryBitwiseFunctionINTEL",
    6400: "GroupUniformArithmeticKHR", 6425: "TensorFloat32RoundingINTEL",
    6427: "MaskedGatherScatterINTEL", 6441: "CacheControlsINTEL", 6460: "RegisterLimitsINTEL",
}  # fmt: skip

_LIB = None


def icd_loader():
    """The ICD loader pyopencl is linked against (bundled, else the system's)."""
    global _LIB
    if _LIB is None:
        import pyopencl

        cands = sorted(glob.glob(os.path.join(os.path.dirname(pyopencl.__file__), ".libs", "libOpenCL*")))
        path = cands[0] if cands else (ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
        lib = ctypes.CDLL(path)
        lib.clGetDeviceInfo.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
        ]
        lib.clGetDeviceInfo.restype = ctypes.c_int32
        _LIB = lib
    return _LIB


def device_info_bytes(device, param: int) -> bytes:
    lib = icd_loader()
    n = ctypes.c_size_t(0)
    if lib.clGetDeviceInfo(device.int_ptr, param, 0, None, ctypes.byref(n)) != 0 or n.value == 0:
        return b""
    buf = ctypes.create_string_buffer(n.value)
    if lib.clGetDeviceInfo(device.int_ptr, param, n.value, buf, None) != 0:
        return b""
    return buf.raw


def _strings(device, param: int) -> tuple[str, ...]:
    """A ``const char *[]`` parameter (pointers into driver memory)."""
    raw = device_info_bytes(device, param)
    size = ctypes.sizeof(ctypes.c_void_p)
    ptrs = [int.from_bytes(raw[i : i + size], "little") for i in range(0, len(raw) - size + 1, size)]
    return tuple(ctypes.string_at(p).decode(errors="replace") for p in ptrs if p)


def subgroup_sizes(device) -> tuple[int, ...]:
    raw = device_info_bytes(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL)
    size = ctypes.sizeof(ctypes.c_size_t)
    return tuple(int.from_bytes(raw[i : i + size], "little") for i in range(0, len(raw) - size + 1, size))


def il_version(device) -> str:
    return device_info_bytes(device, CL_DEVICE_IL_VERSION).rstrip(b"\0").decode(errors="replace").strip()


def spirv_extensions(device) -> tuple[str, ...]:
    return _strings(device, CL_DEVICE_SPIRV_EXTENSIONS_KHR)


def spirv_extended_instruction_sets(device) -> tuple[str, ...]:
    return _strings(device, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR)


def spirv_capabilities(device) -> tuple[int, ...]:
    raw = device_info_bytes(device, CL_DEVICE_SPIRV_CAPABILITIES_KHR)
    return tuple(int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw) - 3, 4))


def capability_name(number: int) -> str:
    return SPIRV_CAPABILITY_NAMES.get(number, f"Capability({number})")
