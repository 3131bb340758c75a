"""Cooperative-matrix pieces of the ``vulkan`` backend (a mixin of
``cts.backends.vulkan.VulkanBackend``): what the suite cannot generate, the
features the KHR axes need (``cts.families.coop.VARIANTS``), the entries the
device reports (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR), why a case
cannot run, and the run of a case's module over the buffer contract of
``cts.families.coop``."""

from __future__ import annotations

import numpy as np

from cts.backends.base import CaseError, Unsupported
from cts.families.coop import SCOPES, VK_COMPONENT, CoopEntry

__all__ = ["CoopVulkan"]


class CoopVulkan:
    # The length case's record of which invocation holds which element is
    # the device's own (cts.runs.coop.device_owner reads it for diagnostics),
    # and MulAdd on value tiles is cts.runs.coop.device_muladd.
    records_coop_owner = True

    def _query_entries(self) -> list[CoopEntry]:
        vk = self.vk
        fn = vk.vkGetInstanceProcAddr(self.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
        out, raw = [], []
        for p in fn(self.pd):
            types = [
                VK_COMPONENT.get(int(t), f"vk{int(t)}") for t in (p.AType, p.BType, p.CType, p.ResultType)
            ]
            row = {
                "M": int(p.MSize),
                "N": int(p.NSize),
                "K": int(p.KSize),
                "A": types[0],
                "B": types[1],
                "C": types[2],
                "R": types[3],
                "sat": bool(p.saturatingAccumulation),
                "scope": SCOPES.get(int(p.scope), f"scope{int(p.scope)}"),
            }
            raw.append(row)
            if all(not t.startswith("vk") for t in types) and not row["scope"].startswith("scope"):
                out.append(CoopEntry(**row))
            else:  # a component type or scope the suite has no name for: said in the report, not dropped
                unknown = [t for t in types if t.startswith("vk")] + [row["scope"]] * row["scope"].startswith(
                    "scope"
                )
                self.unexpressed.append(
                    f"M{row['M']} N{row['N']} K{row['K']} {'/'.join(types)} {row['scope']} "
                    f"(unknown to the suite: {', '.join(unknown)})"
                )
        self.info.extra["coop_properties"] = raw
        return out

    def coop_entries(self) -> tuple[list[CoopEntry], int] | None:
        """(entries, subgroup size) the device reports, or None without one."""
        self._open()
        if self.reason is not None or self.coop_reason is not None:
            return None
        return list(self.entries), self.subgroup_size

    def unsupported_coop_matrix(self, case) -> str | None:
        """Why the open device cannot run a cooperative-matrix case (the Vulkan
        form): no extension or feature, another subgroup size, no reported
        entry or matrix type, bf16 without its feature, what the suite cannot
        generate, or a feature a KHR axis needs."""
        if self.coop_reason:
            return self.coop_reason
        if case.api != "vk":
            return f"backend 'vulkan' runs the Vulkan form only, not {case.api}"
        if case.sg != self.subgroup_size:
            return f"case planned for subgroup size {case.sg}, device has {self.subgroup_size}"
        types = set()
        if case.entry is not None:
            if case.entry not in self.entries:
                return f"no VkCooperativeMatrixPropertiesKHR entry {case.entry.tag}"
            types = {case.entry.A, case.entry.B, case.entry.C, case.entry.R}
        else:
            from cts.families.coop import matrix_types

            allowed = matrix_types(self.entries)
            wanted = [case.mat] + (
                [type(case.mat)(case.mat.use, case.mat.rows, case.mat.cols, case.to)] if case.to else []
            )
            for m in wanted:
                if m not in allowed:
                    return f"no reported entry has the matrix type {m.tag}"
                types.add(m.t)
        if "bf16" in types and not self.bf16_coop:
            return "shaderBFloat16CooperativeMatrix is not supported"
        return self._not_generated(case) or self._khr_axis_missing(case)

    def run_coop_matrix(self, case, bufs: dict) -> dict:
        """Run the case's module over the buffer contract of cts.families.coop."""
        from cts.kernels.coop_glsl import kernel_buffers, spirv_module

        if getattr(self, "dead", None):
            raise CaseError(f"Vulkan device unusable: {self.dead}")
        code = spirv_module(
            case, self.subgroup_size
        )  # a host-tool failure is a HarnessError, not the device's
        order = [n for n, _ in kernel_buffers(case)]
        arrays = {n: np.ascontiguousarray(bufs[n]) for n in order}
        rows = next(iter(arrays.values())).shape[0]
        groups = rows
        if case.op == "gemm":
            from cts.families.coop import GEMM_TILES

            groups = rows * GEMM_TILES[0] * GEMM_TILES[1]
        from cts.kernels import coop_glsl_axes as kh

        groups = kh.workgroups(case, groups)
        if groups > self.max_groups:
            raise Unsupported(f"{groups} workgroups exceed the guaranteed {self.max_groups}")
        req = kh.required_subgroup(case)
        extra = {"required_sg": self.subgroup[f"{req}SubgroupSize"] if req else 0}
        if case.var == "sspec":
            from cts.families.coop import case_stride

            extra["spec"] = (case_stride(case),)
        if kh.push_data(case):
            extra["push"] = lambda addr: kh.push_data(case, addr.get("src", addr.get("dst", 0)))
            if case.mem == "bda":
                extra["bda"] = ("src", "dst")
        try:
            out = self._dispatch(code, order, arrays, groups, case.id, **extra)
        except CaseError:
            raise
        except Exception as e:  # noqa: BLE001 - a driver error fails this case only
            raise CaseError(f"Vulkan: {type(e).__name__}: {str(e)[:300]}") from None
        return {**bufs, **out}

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
