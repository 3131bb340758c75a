"""Vulkan mixin: subgroup rotate (``VK_KHR_shader_subgroup_rotate``, core in
Vulkan 1.4; ``SPV_KHR_subgroup_rotate`` in the Shader environment).

Same interface as the emulator's ``run_subgroup_rotate``: values (G, L, W)
raw bits, one delta per work-group and which work-groups take it as a
constant in; results and the subgroup map each invocation reported out.

The SPIR-V form of the family runs here (``api == "spirv"``: scalars,
vectors of 2, 3, 4 and Boolean, which Vulkan allows); the OpenCL C built-ins
are the OpenCL backend's.  A case the device cannot run is a skip naming the
missing feature, property bit or limit:

* rotate: the extension (or Vulkan 1.4), ``shaderSubgroupRotate`` /
  ``shaderSubgroupRotateClustered``, the ROTATE / ROTATE_CLUSTERED bits of
  ``subgroupSupportedOperations`` (and BASIC, BALLOT for the map), compute in
  ``subgroupSupportedStages``;
* element types: ``shaderInt8`` / ``shaderInt16`` / ``shaderFloat16`` and
  ``shaderSubgroupExtendedTypes`` for 8-, 16- and 64-bit integers and 16-bit floats, ``shaderInt64``,
  ``shaderFloat64``;
* the subgroup size: the device's own ``subgroupSize``, or any size in
  [minSubgroupSize, maxSubgroupSize] when ``subgroupSizeControl`` is enabled
  and ``requiredSubgroupSizeStages`` includes compute (then the pipeline
  requires it with VkPipelineShaderStageRequiredSubgroupSizeCreateInfo);
* the work-group size (``maxComputeWorkGroupSize[0]``, invocations).

Pipelines are not created with ``REQUIRE_FULL_SUBGROUPS``: the partial last
subgroup of every work-group is the point of the launch.
"""

from __future__ import annotations

import numpy as np

from cts.errors import CaseError, Unsupported
from cts.families.rotate import rotate_launches
from cts.judge.sentinel import WIDTH_PATTERN
from cts.kernels.rotate_spv import assemble
from cts.kernels.rotate_vk import BINDINGS, VK_TARGET_ENV, WORDS, rotate_vk_module

__all__ = ["RotateVulkan", "ROTATE_EXTENSION_VK", "ROTATE_FEATURES_STYPE"]

ROTATE_EXTENSION_VK = "VK_KHR_shader_subgroup_rotate"
ROTATE_FEATURES_STYPE = 1000416000  # VkPhysicalDeviceShaderSubgroupRotateFeatures(KHR)
STAGE_COMPUTE = 0x20
OPS = {"BASIC": 0x1, "BALLOT": 0x8, "ROTATE": 0x200, "ROTATE_CLUSTERED": 0x400}

# element type -> the features its arithmetic needs, and whether subgroup
# operations on it need shaderSubgroupExtendedTypes
_TYPE_FEATURES = {
    "char": (("shaderInt8",), True),
    "uchar": (("shaderInt8",), True),
    "short": (("shaderInt16",), True),
    "ushort": (("shaderInt16",), True),
    "half": (("shaderFloat16",), True),
    # shaderSubgroupExtendedTypes covers 8-, 16- and 64-bit integers and 16-bit floats (Vulkan 1.2)
    "long": (("shaderInt64",), True),
    "ulong": (("shaderInt64",), True),
    "double": (("shaderFloat64",), False),
}


class RotateVulkan:
    def _rotate_api_ok(self) -> bool:
        v = int(self.info.extra.get("apiVersion", 0))
        return (v >> 22, (v >> 12) & 0x3FF) >= (1, 4)

    def unsupported_subgroup_rotate(self, case) -> str | None:
        if case.api != "spirv":
            return (
                "OpenCL C built-in (cl_khr_subgroup_rotate): the vulkan backend runs the SPIR-V form of the "
                "family (the spirv-* cases)"
            )
        feats, sgp = getattr(self, "features", {}), getattr(self, "subgroup", {})
        if ROTATE_EXTENSION_VK not in self.exts and not self._rotate_api_ok():
            return f"device lacks {ROTATE_EXTENSION_VK} (and is not Vulkan 1.4)"
        need = "shaderSubgroupRotateClustered" if case.cluster else "shaderSubgroupRotate"
        if not feats.get(need):
            return f"feature {need} is not supported"
        if not sgp.get("supportedStages", 0) & STAGE_COMPUTE:
            return "subgroupSupportedStages lacks VK_SHADER_STAGE_COMPUTE_BIT"
        for op in ("BASIC", "BALLOT", "ROTATE_CLUSTERED" if case.cluster else "ROTATE"):
            if not sgp.get("supportedOperations", 0) & OPS[op]:
                return f"subgroupSupportedOperations lacks VK_SUBGROUP_FEATURE_{op}_BIT"
        if case.width > 4:
            return (
                f"{case.tname}: vectors of {case.width} components need SPIR-V capability Vector16, a Kernel "
                "capability; the Vulkan (Shader) environment has vectors of 2, 3 and 4 components only"
            )
        dfeat = {8: "shaderInt8", 16: "shaderInt16", 64: "shaderInt64"}.get(case.dbits)
        if dfeat and not feats.get(dfeat):
            return f"feature {dfeat} is not supported (Delta / ClusterSize of {case.dbits} bits)"
        tf, ext = _TYPE_FEATURES.get(case.type, ((), False))
        for f in tf:
            if not feats.get(f):
                return f"feature {f} is not supported (element type {case.type})"
        if ext and not feats.get("shaderSubgroupExtendedTypes"):
            return (
                f"feature shaderSubgroupExtendedTypes is not supported (subgroup operations on {case.type})"
            )
        if self._required_sg(case) is None:
            lo, hi = sgp.get("minSubgroupSize", 0), sgp.get("maxSubgroupSize", 0)
            if (
                not feats.get("subgroupSizeControl")
                or not sgp.get("requiredSubgroupSizeStages", 0) & STAGE_COMPUTE
            ):
                return (
                    f"device subgroup size is {self.subgroup_size}, not {case.sg}, and it cannot require one"
                )
            return f"subgroup size {case.sg} is outside the device's range [{lo}, {hi}]"
        big = max(ln.local for ln in rotate_launches(case))
        limit = min(sgp.get("maxComputeWorkGroupSize", 128), sgp.get("maxComputeWorkGroupInvocations", 128))
        if big > limit:
            return f"work-groups of {big} exceed the device's limit of {limit} invocations"
        return None

    def _required_sg(self, case) -> int | None:
        """0: the device's own size is the case's (nothing to require); the
        size to require; None: the device cannot run the case's size."""
        sgp, feats = getattr(self, "subgroup", {}), getattr(self, "features", {})
        can = feats.get("subgroupSizeControl") and sgp.get("requiredSubgroupSizeStages", 0) & STAGE_COMPUTE
        if can and sgp.get("minSubgroupSize", 0) <= case.sg <= sgp.get("maxSubgroupSize", 0):
            if sgp["minSubgroupSize"] == sgp["maxSubgroupSize"] == self.subgroup_size:
                return 0
            return case.sg
        return 0 if case.sg == self.subgroup_size else None

    def run_subgroup_rotate(self, case, values: np.ndarray, deltas: np.ndarray, const=None) -> dict:
        if getattr(self, "dead", None):
            raise CaseError(f"Vulkan device unusable: {self.dead}")
        G, L, W = values.shape
        req = self._required_sg(case)
        if req is None:  # unsupported() said so first; a direct call gets the same reason
            raise Unsupported(self.unsupported_subgroup_rotate(case) or f"subgroup size {case.sg}")
        clusters = None if case.width == 1 else (0, 2)
        text = rotate_vk_module(
            case.type, case.sg, case.width, clusters, case.dbits, case.flow == "nonuniform"
        )
        code = assemble(text, VK_TARGET_ENV)  # a host-tool failure is a HarnessError, not the device's
        nw = WORDS[case.type]
        words = values.astype(np.uint64).reshape(-1)
        words = words.view(np.uint32) if nw == 2 else words.astype(np.uint32)
        n = G * L
        const = np.zeros(G, dtype=np.uint32) if const is None else np.asarray(const).astype(np.uint32)
        arrays = {
            "in": np.ascontiguousarray(words),
            # a 64-bit Delta: two words (low, high) per work-group; narrower ones: one word each
            "deltas": deltas.astype(np.int64).view(np.uint32)
            if case.dbits == 64
            else deltas.astype(np.int64).astype(np.int32).view(np.uint32),
            # the sentinel of the element width (cts.judge.sentinel), one word per element or two
            "out": np.full(n * W, WIDTH_PATTERN[case.gentype.bits], np.uint64).view(np.uint32)
            if nw == 2
            else np.full(n * W, WIDTH_PATTERN.get(case.gentype.bits, WIDTH_PATTERN[32]), np.uint32),
            "info": np.zeros(4 * n, dtype=np.uint32),
            "sel": np.array([case.cluster], dtype=np.uint32),
            "dsel": const,
        }
        try:
            res = self._dispatch(code, list(BINDINGS), arrays, G, case.id, spec=(L,), required_sg=req)
        except CaseError:
            raise
        except Exception as e:  # noqa: BLE001 - a driver error fails this case only
            raise CaseError(f"Vulkan: {type(e).__name__}: {str(e)[:300]}") from None
        out = res["out"]
        out = out.view(np.uint64) if nw == 2 else out.astype(np.uint64)
        info = res["info"].reshape(G, L, 4).astype(np.int64)
        return {
            "out": out.reshape(G, L, W),
            "sg_id": info[..., 0],
            "sg_lid": info[..., 1],
            "sg_size": info[..., 2],
            "sg_max": info[..., 3],
        }
