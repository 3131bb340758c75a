"""OpenCL mixin: the subgroup built-ins family in OpenCL C and in SPIR-V
(clCreateProgramWithIL).  Same interface as the emulator's
``run_subgroup_builtins``: launch shape in, every work-item's five words
out.  Does not import ``opencl.py`` (that module imports this one)."""

from __future__ import annotations

import numpy as np

from cts.backends.opencl_sizes import SizesOpenCL
from cts.kernels import KernelSource
from cts.kernels.rotate_spv import assemble
from cts.kernels.subgroup_builtins import SGB_ENTRY, SGB_SPV_ENV, SGB_WORDS, sgb_cl_program, sgb_spv_module

__all__ = ["SubgroupBuiltinsOpenCL"]


class SubgroupBuiltinsOpenCL(SizesOpenCL):
    def _sgb_spirv_sized(self) -> bool:
        """SPIR-V modules declare ``OpExecutionMode SubgroupSize`` unless the
        device has one size and neither the extension nor SubgroupDispatch."""
        caps = set(self.describe().extra.get("spirv_capabilities") or ())
        return self.requires_subgroup_attribute or "SubgroupDispatch" in caps

    def unsupported_subgroup_builtins(self, case) -> str | None:
        info = self.describe()
        if case.api == "opencl_c":
            if not (self.has_extension("cl_khr_subgroups") or self.opencl_c_std):
                feats = str(info.extra.get("opencl_c_version", ""))
                if not feats.startswith("OpenCL C 3"):
                    return "device lacks cl_khr_subgroups and OpenCL C 3.0 with __opencl_c_subgroups"
        else:
            if "SPIR-V" not in str(info.extra.get("il_version", "")):
                return "device takes no SPIR-V IL (CL_DEVICE_IL_VERSION empty)"
            caps = set(info.extra.get("spirv_capabilities") or ())
            if caps and "Kernel" not in caps:
                return "device lacks SPIR-V capability Kernel"
        return self.sized_subgroups(case.sg)

    def kernel_source_subgroup_builtins(self, case, subgroups: int = 0, shape=None) -> KernelSource:
        G, L = shape or (2, 4 * case.sg)
        common = {
            "entry": SGB_ENTRY,
            "global_size": (G * L,),
            "local_size": (L,),
            "args": ("info",),
            "arg_types": ("uint32",),
            "notes": (f"{G} work-groups of {L}; info[5 * g + k]: size, id, local id, count, max",),
        }
        if case.api == "opencl_c":
            return KernelSource(
                source=self.with_prelude(sgb_cl_program(case.sg, self.requires_subgroup_attribute)), **common
            )
        text = sgb_spv_module(case.sg, self._sgb_spirv_sized())
        return KernelSource(il=assemble(text, SGB_SPV_ENV), **common)

    def run_subgroup_builtins(self, case, groups: int, local: int) -> dict:
        ks = self.kernel_source_subgroup_builtins(case, shape=(groups, local))
        out = self.run_kernel(ks, {}, {"info": (np.uint32, SGB_WORDS * groups * local)})
        return {"info": out["info"]}
