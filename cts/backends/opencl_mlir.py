"""OpenCL mixin of the MLIR family (``gpu.subgroup_mma_*``, ``gpu.rotate``):
the ops this suite lowers to OpenCL C (``gpu.rotate`` and ``mma_rotate``,
through cl_khr_subgroup_rotate; ``cts.kernels.rotate_cl.mlir_rotate_kernel``)
run here; the matrix ops, which lower to SPIR-V cooperative matrix, are
skipped with what the device lacks.  Does not import ``opencl.py`` (that
module imports this one)."""

from __future__ import annotations

import numpy as np

from cts.backends.opencl_sizes import SizesOpenCL
from cts.kernels import KernelSource
from cts.kernels.rotate_cl import mlir_rotate_kernel

__all__ = ["MlirOpenCL"]


class MlirOpenCL(SizesOpenCL):
    def unsupported_mlir_mma(self, case) -> str | None:
        """Only the rotate-based MLIR ops have a realization on OpenCL: the
        others need a cooperative-matrix lowering (SPIR-V
        CooperativeMatrixKHR), which is checked and named."""
        from cts.families.mlir import ROTATE_OPS

        info = self.describe()
        if case.op not in ROTATE_OPS:
            caps = set(info.extra.get("spirv_capabilities") or ())
            if "CooperativeMatrixKHR" not in caps:
                return (
                    f"gpu.subgroup_mma {case.op} lowers to SPIR-V cooperative matrix; the device lacks "
                    "capability CooperativeMatrixKHR"
                )
            return f"gpu.subgroup_mma {case.op}: this suite realizes only gpu.rotate and mma_rotate on OpenCL"
        if not self.has_extension("cl_khr_subgroup_rotate"):
            return "device lacks cl_khr_subgroup_rotate (the lowering of gpu.rotate / mma_rotate)"
        sized = self.sized_subgroups(case.sg)
        if sized:
            return sized
        if case.elem in ("i1", "bf16"):
            return (
                f"gpu.rotate on {case.elem}: the OpenCL C rotate built-ins (this suite's lowering on OpenCL) "
                "take no bool / bfloat16 gentype (cl_khr_subgroup_rotate, gentype list)"
            )
        if case.elem == "f16" and not self.has_extension("cl_khr_fp16"):
            return "device lacks cl_khr_fp16 (element type f16)"
        if case.elem == "f64" and not self.has_extension("cl_khr_fp64"):
            return "device lacks cl_khr_fp64 (element type f64)"
        return None

    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        src, names, written = mlir_rotate_kernel(program, buffers, case.sg, self.requires_subgroup_attribute)
        P = next(iter(buffers.values())).shape[0]
        ks = KernelSource(
            entry="mlir_k",
            source=self.with_prelude(src),
            global_size=(P * case.sg,),
            local_size=(case.sg,),
            args=names,
            arg_types=tuple(str(buffers[k].dtype) for k in names),
            notes=(f"{P} subgroups, one per work-group; buffer rows per subgroup",),
        )
        ins = {k: np.ascontiguousarray(v).reshape(-1) for k, v in buffers.items() if k not in written}
        outs = {k: (buffers[k].dtype, buffers[k].size) for k in written}
        res = self.run_kernel(ks, ins, outs)
        out = {k: np.array(v) for k, v in buffers.items()}
        for k in written:
            out[k] = res[k].reshape(buffers[k].shape)
        return out
