"""OpenCL mixin: subgroup rotate in OpenCL C (cl_khr_subgroup_rotate) and in
SPIR-V (SPV_KHR_subgroup_rotate through clCreateProgramWithIL).

Same interface as the emulator's ``run_subgroup_rotate``: values (G, L, W)
raw bits and one delta per work-group in; results and the subgroup map each
work-item reported out.  A case the device cannot run is skipped with a
reason naming what is missing (extension, SPIR-V capability, subgroup size,
element type).  Does not import ``opencl.py`` (that module imports this one).
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from cts.backends.base import CaseError
from cts.backends.opencl_sizes import SizesOpenCL
from cts.families.rotate import SUBGROUP_SIZES, rotate_launches
from cts.kernels import KernelSource
from cts.kernels.rotate_cl import (
    HOST_DTYPE,
    rotate_cl_entry,
    rotate_cl_program,
    rotate_cl_sized_entry,
    rotate_cl_sizes_program,
)
from cts.kernels.rotate_spv import assemble_spv13, rotate_spv_entry, rotate_spv_module

__all__ = ["RotateOpenCL", "REQUIRE_VECTORS_ENV"]

# Vector and Boolean OpGroupNonUniformRotateKHR are legal SPIR-V but beyond
# what the OpenCL environment's built-ins cover; they run on OpenCL devices
# only when this is "1" (Intel's CPU runtime 2026.2 fails to link them:
# "Symbols not found: _Z16sub_group_rotateDv2_ii").
REQUIRE_VECTORS_ENV = "CTS_ROTATE_SPIRV_VECTORS"

# SPIR-V capabilities an element type needs besides GroupNonUniformRotateKHR
_SPV_TYPE_CAPS = {
    "char": "Int8",
    "uchar": "Int8",
    "bool": "Int8",
    "short": "Int16",
    "ushort": "Int16",
    "half": "Float16",
    "double": "Float64",
}


# host type of the deltas buffer per Delta width (SPIR-V Delta is unsigned; 32: the OpenCL C int)
_DELTA_DTYPE = {8: "uint8", 16: "uint16", 32: "int32", 64: "int64"}


def _launch(case) -> tuple[int, int]:
    """The first launch's shape (what a bundled kernel's notes describe)."""
    ln = rotate_launches(case)[0]
    return ln.groups, ln.local


class RotateOpenCL(SizesOpenCL):
    def unsupported_subgroup_rotate(self, case) -> str | None:
        info = self.describe()
        if case.api == "opencl_c":
            if not self.has_extension("cl_khr_subgroup_rotate"):
                return "device lacks cl_khr_subgroup_rotate"
            sized = self.sized_subgroups(case.sg)
            if sized:
                return sized
        else:
            il = str(info.extra.get("il_version", ""))
            if "SPIR-V" not in il:
                return "device takes no SPIR-V IL (CL_DEVICE_IL_VERSION empty)"
            caps = set(info.extra.get("spirv_capabilities") or ())
            spv_ext = set(info.extra.get("spirv_extensions") or ())
            if caps and "GroupNonUniformRotateKHR" not in caps:
                return "device lacks SPIR-V capability GroupNonUniformRotateKHR"
            if (
                not caps
                and "SPV_KHR_subgroup_rotate" not in spv_ext
                and not self.has_extension("cl_khr_subgroup_rotate")
            ):
                return "device reports neither SPV_KHR_subgroup_rotate nor cl_khr_subgroup_rotate"
            need = _SPV_TYPE_CAPS.get(case.type)
            if caps and need and need not in caps:
                return f"device lacks SPIR-V capability {need} (element type {case.type})"
            dneed = {8: "Int8", 16: "Int16", 64: "Int64"}.get(case.dbits)
            if caps and dneed and dneed not in caps:
                return f"device lacks SPIR-V capability {dneed} (Delta / ClusterSize of {case.dbits} bits)"
            if caps and case.width > 4 and "Vector16" not in caps:
                return f"device lacks SPIR-V capability Vector16 (vectors of {case.width} components)"
            if (case.width > 1 or case.type == "bool") and os.environ.get(REQUIRE_VECTORS_ENV) != "1":
                return (
                    f"{case.tname}: SPV_KHR_subgroup_rotate allows vector and Boolean values, but the OpenCL "
                    "environment defines the rotate built-ins for scalar non-Boolean gentypes only "
                    f"(cl_khr_subgroup_rotate, gentype list); set {REQUIRE_VECTORS_ENV}=1 to require them"
                )
            if caps and "SubgroupDispatch" not in caps:
                return (
                    f"cannot require subgroup size {case.sg}: device lacks SPIR-V capability SubgroupDispatch"
                )
        for ext in case.requirements:
            if not self.has_extension(ext):
                return f"device lacks {ext} (element type {case.type})"
        if info.subgroup_sizes and case.sg not in info.subgroup_sizes:
            sizes = ", ".join(map(str, info.subgroup_sizes))
            return f"device has subgroup sizes {sizes}, not {case.sg}"
        if not info.subgroup_sizes:
            return f"device reports no subgroup sizes (cannot require {case.sg})"
        return None

    def kernel_source_subgroup_rotate(self, case, subgroups: int = 0, shape=None) -> KernelSource:
        """What a run builds and launches for the case (``kernel_source``):
        the case's kernel in the program of every size (``_sizes_source``)
        where that applies, else its own program."""
        own = self._own_source(case, shape)
        return self._sizes_source(case, own) or own

    def _own_source(self, case, shape=None) -> KernelSource:
        """The case's own program: one kernel (OpenCL C) or one module (SPIR-V)."""
        G, L = shape or _launch(case)
        dt = HOST_DTYPE[case.gentype.bits]
        common = {
            "global_size": (G * L,),
            "local_size": (L,),
            "args": ("in", "deltas", "out", "info", "sel"),
            "arg_types": (dt, _DELTA_DTYPE[case.dbits], dt, "uint32", "int32"),
        }
        nonuniform = case.flow == "nonuniform"
        if case.api == "opencl_c":
            return KernelSource(
                entry=rotate_cl_entry(),
                source=self.with_prelude(
                    rotate_cl_program(case.type, case.sg, nonuniform, self.requires_subgroup_attribute)
                ),
                notes=(f"{G} work-groups of {L}; delta = deltas[group]; sel = [{case.cluster}]",),
                **common,
            )
        # one module per (type, sg, width): scalars carry every cluster size,
        # vectors the two the case space uses (plain and 2)
        clusters = None if case.width == 1 else (0, 2)
        text = rotate_spv_module(case.type, case.sg, (case.width,), clusters, case.dbits, nonuniform)
        il = assemble_spv13(text)  # tool failure: HarnessError, never the device's
        common["args"] += ("dsel",)
        common["arg_types"] += ("int32",)
        return KernelSource(
            entry=rotate_spv_entry(case.width),
            il=il,
            notes=(
                f"{G} work-groups of {L}; delta = deltas[WorkgroupId.x], or the dsel[WorkgroupId.x]-th "
                f"constant where that is > 0; sel = [{case.cluster}]",
                "assembly:\n" + text,
            ),
            **common,
        )

    def _sizes_source(self, case, ks: KernelSource) -> KernelSource | None:
        """``ks`` (an OpenCL C case's own program) as the kernel of its size in
        the program of every required size the device has, for the case's
        gentype and control flow (``rotate_cl_sizes_program``); None for SPIR-V
        or where the device names no size but the case's."""
        if case.api != "opencl_c":
            return None
        have = set(self.describe().subgroup_sizes or ())
        sizes = tuple(s for s in SUBGROUP_SIZES if s in have)
        if case.sg not in sizes or len(sizes) < 2:
            return None
        src = rotate_cl_sizes_program(case.type, sizes, case.flow == "nonuniform")
        return replace(ks, entry=rotate_cl_sized_entry(case.sg), source=self.with_prelude(src))

    def run_subgroup_rotate(self, case, values: np.ndarray, deltas: np.ndarray, const=None) -> dict:
        G, L, W = values.shape
        ks = self.kernel_source_subgroup_rotate(case, shape=(G, L))
        dt = np.dtype(HOST_DTYPE[case.gentype.bits])
        n = G * L
        const = np.zeros(G, dtype=np.int32) if const is None else np.asarray(const, dtype=np.int32)
        ins = {
            "in": values.reshape(n * W).astype(dt),
            "deltas": deltas.astype(np.int64).astype(_DELTA_DTYPE[case.dbits]),  # the low bits: the pattern
            "sel": np.array([case.cluster], dtype=np.int32),
        }
        if "dsel" in ks.args:
            ins["dsel"] = const
        elif const.any():
            raise ValueError("constant deltas are realized by the SPIR-V modules only")  # a suite bug
        outs = {"out": (dt, n * W), "info": (np.uint32, 4 * n)}
        try:
            res = self.run_kernel(ks, ins, outs)
        except CaseError:
            if ks.entry != rotate_cl_sized_entry(case.sg):  # it ran as its own program
                raise
            # the program of every size failed (to build, or to launch): the case's own program
            # says whether it is this case's fault (a build failure is kept, not rebuilt per case)
            res = self.run_kernel(self._own_source(case, (G, L)), ins, outs)
        info = res["info"].reshape(G, L, 4).astype(np.int64)
        return {
            "out": res["out"].astype(np.uint64).reshape(G, L, W),
            "sg_id": info[..., 0],
            "sg_lid": info[..., 1],
            "sg_size": info[..., 2],
            "sg_max": info[..., 3],
        }
