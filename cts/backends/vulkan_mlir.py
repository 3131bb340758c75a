"""Vulkan mixin: the MLIR family through upstream MLIR's own lowering.  A case's program (cts.families.mlir_program, the one the
emulator interprets) becomes MLIR text (cts.kernels.mlir_text), ``mlir-opt``
lowers it to SPIR-V (cts.kernels.mlir_tools: convert-gpu-to-spirv,
spirv-lower-abi-attrs, spirv-update-vce, mlir-translate --serialize-spirv),
and the device runs that binary: the judged stack is compiler + driver.

* The target env is the device's own: SPIR-V version from the API version,
  capabilities and extensions from the features it reports, its subgroup
  size, its VkCooperativeMatrixPropertiesKHR entries.
* A case the device cannot run is a skip naming the missing feature,
  property entry, subgroup size or operation bit, decided before the
  compiler runs (a target env without the capability would make the
  compiler refuse it, and that refusal would not be the compiler's fault).
* A text the compiler refuses is a toolchain verdict
  (:class:`cts.errors.ToolchainError`: tool, version, message), apart from
  the device verdicts.
* The suite's own text is parsed and verified by the same mlir-opt first
  (``mlir_tools.check_text``): an op the version lacks is a skip naming the
  version, a verifier error on the suite's text a harness error.
* What spirv-val for the device's target environment says about the module
  as produced, plus the rules it lacks (the toolchain pitfalls of
  specs/mlir-lowering.md: ``VulkanMemoryModel`` dropped under a Shader
  memory model, ``SPV_KHR_subgroup_rotate`` dropped by spirv-update-vce, si8
  MulAdd without the signedness operands), are the module's findings: the
  module still runs as produced (to say whether its semantics hold; without
  it the family would judge nothing on Vulkan), the findings go with the
  case's row (:meth:`take_module_findings`; the report counts each once),
  and a wrong result or a refusal of such a module is a toolchain verdict,
  never the device's.
* Lane programs (thread-local, rotate) run at the case's subgroup size
  (required with subgroup size control where the device has it); the
  others do not look at lanes and run at the device's size.  One work-group
  is one subgroup; work-group p runs subgroup row p of the buffers.
"""

from __future__ import annotations

import numpy as np

from cts.errors import CaseError, Unsupported
from cts.families.mlir import LANE_OPS
from cts.families.mlir_program import Program, program_from
from cts.judge.env import VULKAN, vulkan_env_from_spirv
from cts.kernels import mlir_text
from cts.kernels.mlir_text import CoopProp, VulkanTarget

__all__ = ["MlirVulkan", "MLIR_VK_TYPE"]

# MLIR element type -> the suite's VkComponentTypeKHR name (cts.families.coop.VK_COMPONENT)
MLIR_VK_TYPE = {"f16": "f16", "f32": "f32", "f64": "f64", "si8": "i8", "ui8": "u8", "i32": "i32"}
_VK_MLIR = {"f16": "f16", "f32": "f32", "f64": "f64", "i8": "si8", "u8": "ui8", "i32": "si32", "u32": "ui32"}
_DTYPE_ELEM = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "si8",
    "uint8": "ui8",
    "int32": "i32",
}
_TYPE_FEATURES = {
    "f16": ("shaderFloat16", "storageBuffer16BitAccess"),
    "f64": ("shaderFloat64",),
    "si8": ("shaderInt8", "storageBuffer8BitAccess"),
    "ui8": ("shaderInt8", "storageBuffer8BitAccess"),
    "i8": ("shaderInt8", "storageBuffer8BitAccess"),
    "i16": ("shaderInt16", "storageBuffer16BitAccess"),
    "i64": ("shaderInt64",),
    "bf16": ("storageBuffer16BitAccess",),
}
OPS_BITS = {"BASIC": 0x1, "ROTATE": 0x200, "ROTATE_CLUSTERED": 0x400}
USE = {"AOp": "A", "BOp": "B", "COp": "C"}


def matrices(ops: list) -> tuple[set, list]:
    """(matrix types (rows, cols, elem, tag), compute type triples) of a program."""
    env: dict[str, tuple] = {}
    computes = []
    for op in ops:
        if op[0] == "load":
            env[op[1]] = (op[7], op[8], op[9], op[10])
        elif op[0] == "constant":
            env[op[1]] = (op[3], op[4], op[5], op[6])
        elif op[0] == "compute":
            computes.append((env[op[2]], env[op[3]], env[op[4]]))
            env[op[1]] = env[op[4]]
        elif op[0] == "elementwise":
            r, c, _, tag = env[op[3][0]]
            env[op[1]] = (r, c, op[4], tag)
        elif op[0] in ("insert_all", "insert"):
            env[op[1]] = env[op[2]]
    return set(env.values()), computes


class MlirVulkan:
    # ------------------------------------------------------------ the target
    def mlir_target(self, sg: int) -> VulkanTarget:
        """The target env from the device's own report."""
        feats, sgp = getattr(self, "features", {}), getattr(self, "subgroup", {})
        v = int(self.info.extra.get("apiVersion", 0))
        api = (v >> 22, (v >> 12) & 0x3FF)
        version = "v1.6" if api >= (1, 3) else "v1.5" if api >= (1, 2) else "v1.3"
        caps, exts = ["Shader"], []
        pairs = [
            ("shaderFloat16", "Float16", None),
            ("shaderFloat64", "Float64", None),
            ("shaderInt8", "Int8", None),
            ("shaderInt16", "Int16", None),
            ("shaderInt64", "Int64", None),
            ("storageBuffer16BitAccess", "StorageBuffer16BitAccess", "SPV_KHR_16bit_storage"),
            ("storageBuffer8BitAccess", "StorageBuffer8BitAccess", "SPV_KHR_8bit_storage"),
            ("vulkanMemoryModel", "VulkanMemoryModel", "SPV_KHR_vulkan_memory_model"),
        ]
        for feat, cap, ext in pairs:
            if feats.get(feat):
                caps.append(cap)
                exts += [ext] if ext else []
        if sgp.get("supportedOperations", 0) & OPS_BITS["BASIC"]:
            caps.append("GroupNonUniform")
        if feats.get("shaderSubgroupRotate"):
            caps.append("GroupNonUniformRotateKHR")
            exts.append("SPV_KHR_subgroup_rotate")
        props: list[CoopProp] = []
        if self.coop_reason is None:
            caps.append("CooperativeMatrixKHR")
            exts.append("SPV_KHR_cooperative_matrix")
            for e in self.entries:
                types = [_VK_MLIR.get(t) for t in (e.A, e.B, e.C, e.R)]
                if e.scope == "subgroup" and all(types):
                    props.append(CoopProp(e.M, e.N, e.K, *types, sat=e.sat))
        return VulkanTarget(sg, tuple(caps), tuple(exts), tuple(props), version)

    def mlir_module_text(self, case, prog: Program, target) -> str:
        """The MLIR text the device runs for ``case`` (tests replace it with a
        wrong one to show the stack catches it)."""
        return mlir_text.case_module(case, prog, target)

    # ------------------------------------------------------------ skips
    def unsupported_mlir_mma(self, case) -> str | None:
        if self.reason:
            return self.reason
        feats, sgp = getattr(self, "features", {}), getattr(self, "subgroup", {})
        if case.op in LANE_OPS and self._required_sg(case) is None:
            return f"case planned for subgroup size {case.sg}, device has {self.subgroup_size} and cannot require it"
        if not sgp.get("supportedOperations", 0) & OPS_BITS["BASIC"]:
            return "subgroupSupportedOperations lacks VK_SUBGROUP_FEATURE_BASIC_BIT (gpu.lane_id)"
        from cts.families.mlir_program import case_program

        prog = case_program(case)
        mats, computes = matrices(prog.ops)
        elems = {m[2] for m in mats} | {b.elem for b in prog.buffers.values()}
        for e in sorted(elems):
            for f in _TYPE_FEATURES.get(e, ()):
                if not feats.get(f):
                    return f"feature {f} is not supported (element type {e})"
        if case.op in ("gpu_rotate", "mma_rotate"):
            why = self._mlir_rotate_missing(case.elem)
            if why:
                return why
        if mats:
            if self.coop_reason:
                return self.coop_reason
            why = self._mlir_coop_missing(mats, computes)
            if why:
                return why
        return None

    def _mlir_rotate_missing(self, elem: str) -> str | None:
        feats, sgp = getattr(self, "features", {}), getattr(self, "subgroup", {})
        for f in ("shaderSubgroupRotate", "shaderSubgroupRotateClustered"):
            if not feats.get(f):
                extra = " (mlir-opt writes gpu.rotate's width as ClusterSize)" if "Clustered" in f else ""
                return f"feature {f} is not supported{extra}"
        for bit in ("ROTATE", "ROTATE_CLUSTERED"):
            if not sgp.get("supportedOperations", 0) & OPS_BITS[bit]:
                return f"subgroupSupportedOperations lacks VK_SUBGROUP_FEATURE_{bit}_BIT"
        # shaderSubgroupExtendedTypes: subgroup operations on 8-, 16- and 64-bit integers and 16-bit floats
        if elem in ("f16", "bf16", "si8", "ui8", "i8", "i16", "i64") and not feats.get(
            "shaderSubgroupExtendedTypes"
        ):
            return f"feature shaderSubgroupExtendedTypes is not supported (gpu.rotate on {elem})"
        return None

    def _mlir_coop_missing(self, mats: set, computes: list) -> str | None:
        entries = [e for e in self.entries if e.scope == "subgroup" and not e.sat]
        allowed = set()
        for e in entries:
            allowed |= {
                ("A", e.M, e.K, e.A),
                ("B", e.K, e.N, e.B),
                ("C", e.M, e.N, e.C),
                ("C", e.M, e.N, e.R),
            }
        for rows, cols, elem, tag in sorted(mats):
            vk = MLIR_VK_TYPE[elem]
            names = ("i32", "u32") if vk == "i32" else (vk,)
            if not any((USE[tag], rows, cols, t) in allowed for t in names):
                return f"no VkCooperativeMatrixPropertiesKHR entry has the matrix type {USE[tag]} {rows}x{cols} {vk}"
        for (m, k, a, _), (_, n, b, _), (_, _, c, _) in computes:
            va, vb, vc = MLIR_VK_TYPE[a], MLIR_VK_TYPE[b], MLIR_VK_TYPE[c]
            cs = ("i32", "u32") if vc == "i32" else (vc,)
            if not any(
                (e.M, e.N, e.K, e.A, e.B) == (m, n, k, va, vb) and e.C in cs and e.R in cs for e in entries
            ):
                return f"no VkCooperativeMatrixPropertiesKHR entry M{m} N{n} K{k} {va}x{vb}+{vc} (subgroup, no saturation)"
        return None

    # ------------------------------------------------------------ running
    def take_module_findings(self) -> tuple[str, list[str]]:
        """(tool, findings) of the module the last case ran (empty: a valid
        module, or none ran), then forgotten."""
        out = getattr(self, "_mlir_findings", ("", []))
        self._mlir_findings = ("", [])
        return out

    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        from cts.kernels.mlir_tools import to_spirv

        if getattr(self, "dead", None):
            raise CaseError(f"Vulkan device unusable: {self.dead}")
        why = self.unsupported_mlir_mma(case)
        if why:
            raise Unsupported(why)
        lane = case.op in LANE_OPS
        sg = case.sg if lane else self.subgroup_size
        req = self._required_sg(case) if lane else 0
        prog = program_from(program, buffers, sg)
        target = self.mlir_target(sg)
        text = self.mlir_module_text(case, prog, target)
        v = int(self.info.extra.get("apiVersion", 0))
        val_env = "vulkan1.3" if (v >> 22, (v >> 12) & 0x3FF) >= (1, 3) else "vulkan1.2"
        code, meta = to_spirv(text, val_env)  # a refusal is a ToolchainError: the compiler's verdict
        self._mlir_envs = getattr(self, "_mlir_envs", {})
        self._mlir_envs[case.id] = vulkan_env_from_spirv(code)  # the float modes the module declares
        self._mlir_findings = (meta.get("tool", ""), list(meta.get("findings") or []))
        order = list(prog.buffers)
        arrays = {n: np.ascontiguousarray(buffers[n]) for n in order}
        groups = next(iter(arrays.values())).shape[0]
        try:
            out = self._dispatch(
                code, order, arrays, groups, case.id, required_sg=req, entry=mlir_text.func_name(case)
            )
        except CaseError:
            raise
        except Exception as e:  # noqa: BLE001 - a driver error fails this case only
            raise CaseError(f"Vulkan: {type(e).__name__}: {str(e)[:300]}") from None
        return {**buffers, **out}

    def float_env(self, case):
        """The Vulkan environment of the module that ran ``case`` (its
        OpExecutionMode float controls; cts.judge.env)."""
        return getattr(self, "_mlir_envs", {}).get(case.id, VULKAN)

    def mlir_toolchain(self) -> dict:
        """What the report names: the tool, its version and the pipeline."""
        from cts.errors import HarnessError
        from cts.kernels.mlir_tools import SPIRV_PIPELINE, tool_version

        try:
            return {"tool": tool_version(), "pipeline": SPIRV_PIPELINE}
        except HarnessError as e:
            return {"tool": f"not found: {str(e)[:200]}", "pipeline": SPIRV_PIPELINE}
