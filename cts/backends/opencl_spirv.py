"""OpenCL mixin for SPV_INTEL_subgroup_matrix_multiply_accumulate: the
module of ``cts.kernels.spirv_intel`` (validated by spirv-val) is loaded with
``clCreateProgramWithIL`` (``build_program(il=...)``).

Support detection (cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V
Environment Specification), in this order:

1. the device accepts SPIR-V IL at all (``CL_DEVICE_IL_VERSION``);
2. ``cl_khr_spirv_queries`` lists the SPIR-V extension
   ``SPV_INTEL_subgroup_matrix_multiply_accumulate`` and capability 6236
   (SubgroupMatrixMultiplyAccumulateINTEL), or
3. ``cl_intel_subgroup_matrix_multiply_accumulate`` at version >= 1.1.0 in
   ``CL_DEVICE_EXTENSIONS_WITH_VERSION`` (the revision that added the SPIR-V
   environment rules, which make accepting the module mandatory).

Otherwise every case skips with the reason naming what is missing.  The
required combinations of subgroup size N apply to devices whose *minimum*
subgroup size is N (cl_intel_subgroup_matrix_multiply_accumulate,
Modifications to the OpenCL C and the OpenCL SPIR-V Environment Specifications); the tf32 row needs
``cl_intel_subgroup_matrix_multiply_accumulate_tf32``.

Intel's CPU runtime reports neither (local-runtimes 2.0, 2.4): all cases
skip there, the reason saying what the runtime does with a module declaring
capability 6236 (an observation, not a verdict: a device is held only to
what it lists, the same rule as capability 6425 below).

OpRoundFToTF32INTEL (family ``spirv_tf32_round``, capability 6425) runs
where the device claims it (``unsupported_spirv_tf32_round``); elsewhere its
cases skip naming the capability and what the runtime does with a module
declaring it (Intel's CPU runtime builds it without claiming it).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cts.backends.base import CaseError, Unsupported
from cts.kernels import KernelSource

__all__ = ["SpirvOpenCL", "MIN_VERSION", "make_version"]

SPV_EXTENSION = "SPV_INTEL_subgroup_matrix_multiply_accumulate"
CAPABILITY = 6236
CL_EXTENSION = "cl_intel_subgroup_matrix_multiply_accumulate"
TF32_EXTENSION = "cl_intel_subgroup_matrix_multiply_accumulate_tf32"


def make_version(major: int, minor: int, patch: int) -> int:
    """CL_MAKE_VERSION: 10 bits major, 10 bits minor, 12 bits patch."""
    return (major << 22) | (minor << 12) | patch


MIN_VERSION = make_version(1, 1, 0)

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _version_text(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


class SpirvOpenCL:
    """Family ``spirv_intel_mma`` on OpenCL."""

    # --- support ----------------------------------------------------------
    def _spirv_mma_device_reason(self) -> str | None:
        """None when the device must accept the instruction, else why not."""
        cached = getattr(self, "_spv_mma_reason", False)
        if cached is not False:
            return cached
        from cts.backends import clquery

        reason = None
        dev_name = self.describe().name
        il = clquery.il_version(self.device)
        if "SPIR-V" not in il:
            reason = f"{dev_name} accepts no SPIR-V IL (CL_DEVICE_IL_VERSION {il!r})"
        else:
            caps = set(clquery.spirv_capabilities(self.device))
            exts = set(clquery.spirv_extensions(self.device))
            by_query = CAPABILITY in caps and SPV_EXTENSION in exts
            version = self._extension_version(CL_EXTENSION)
            by_version = version is not None and version >= MIN_VERSION
            if not (by_query or by_version):
                if self.has_extension("cl_khr_spirv_queries"):
                    q = (
                        f"cl_khr_spirv_queries lists {'' if CAPABILITY in caps else 'no '}capability 6236 "
                        f"(SubgroupMatrixMultiplyAccumulateINTEL) and {'' if SPV_EXTENSION in exts else 'no '}"
                        f"{SPV_EXTENSION}"
                    )
                else:
                    q = "no cl_khr_spirv_queries"
                v = "absent" if version is None else f"version {_version_text(version)}"
                reason = f"{dev_name}: {q}; {CL_EXTENSION} {v} (SPIR-V form needs >= 1.1.0)"
                probe = self._spv_mma_probe()
                reason += f"; {probe}" if probe else ""
        self._spv_mma_reason = reason
        return reason

    def _spv_mma_probe(self) -> str:
        """What the runtime does with a module declaring capability 6236 that
        it does not list: said in the skip reason, judged nowhere (no spec
        sentence requires a device to refuse a capability it does not list;
        the OpenCL SPIR-V environment only holds a device to what it lists)."""
        from cts.families.spirv_intel import SpirvMmaCase
        from cts.kernels.spirv_intel import control_module_text
        from cts.kernels.spirv_tools import assemble

        if not callable(getattr(self, "build_program", None)):  # no driver compiler to ask
            return ""
        case = SpirvMmaCase(16, 32, 4, "i8", "i8", "i32", "i32", "exact")
        try:
            self.build_program(il=assemble(control_module_text(case)))
        except CaseError:
            return "the runtime builds not even the same kernel without the capability"
        try:
            self.build_program(il=assemble(control_module_text(case, declare_capability=True)))
        except CaseError as e:
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            said = [x for x in lines if "6236" in x or "apabilit" in x] or lines[-1:]
            return f"the runtime refuses a module declaring it: {said[0][:300] if said else 'build failed'}"
        return "the runtime builds a module declaring it all the same"

    def _extension_version(self, name: str) -> int | None:
        """Version from CL_DEVICE_EXTENSIONS_WITH_VERSION (OpenCL 3.0)."""
        try:
            for nv in self.device.extensions_with_version:
                if nv.name == name:
                    return int(nv.version)
        except Exception:  # OpenCL < 3.0 or a pyopencl without the query
            return None
        return None

    def spirv_mma_unsupported(self, sg: int | None = None) -> str | None:
        """Skip reason for the SPIR-V instruction (and subgroup size ``sg``)."""
        reason = self._spirv_mma_device_reason()
        if reason or sg is None:
            return reason
        sizes = self.describe().subgroup_sizes
        if sizes and sg not in sizes:
            return f"subgroup size {sg} not supported by {self.describe().name} (sizes {', '.join(map(str, sizes))})"
        return None

    def unsupported_spirv_intel_mma(self, case) -> str | None:
        case = getattr(case, "spirv", case)  # cross-check cases wrap a SPIR-V case
        reason = self.spirv_mma_unsupported(case.sg)
        if reason:
            return reason
        dev = self.describe()
        if case.level == "required" and dev.subgroup_sizes and min(dev.subgroup_sizes) != case.sg:
            return (
                f"minimum subgroup size of {dev.name} is {min(dev.subgroup_sizes)}: the required N={case.sg} "
                f"combinations belong to devices with minimum subgroup size {case.sg} "
                "(cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V "
                "Environment Specification)"
            )
        if case.a == "tf32" and not self.has_extension(TF32_EXTENSION):
            return f"{TF32_EXTENSION} not supported by {dev.name} (tf32 operands)"
        if "f16" in (case.c, case.result) and not self.has_extension("cl_khr_fp16"):
            return f"cl_khr_fp16 not supported by {dev.name} (half C / Result)"
        return None

    # --- kernel -------------------------------------------------------------
    def kernel_source_spirv_intel_mma(self, case, subgroups: int) -> KernelSource:
        """The validated module, one subgroup per work-group."""
        from cts.kernels.spirv_intel import ENTRY_POINT, module_text, specialization
        from cts.kernels.spirv_tools import assemble

        il = assemble(module_text(case))  # tool failure: HarnessError, never the device's
        spec = tuple(sorted(specialization(case).items()))
        N = case.sg
        kinds = (case.a_container_bits, 32, case.c_container_bits, case.result_container_bits, 32)
        return KernelSource(
            entry=ENTRY_POINT,
            il=il,
            global_size=(subgroups * N,),
            local_size=(N,),
            args=("a", "b", "c", "d", "sgsize"),
            arg_types=tuple(np.dtype(_UINT[b]).name for b in kinds),
            notes=(
                f"OpSubgroupMatrixMultiplyAccumulateINTEL, operands {case.literal:#x}, N={N} K={case.k} M={case.M}",
                "buffers hold raw container bits; invocation idx = (WorkgroupId.x*NumSubgroups+SubgroupId)*N+lid",
            )
            + ((f"K Dim: OpSpecConstant, SpecId/value set before the build: {spec}",) if spec else ()),
            spec_constants=spec,
        )

    def run_spirv_intel_mma(self, case, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """a (S, N, a_comps), b (S, N, b_comps), c (S, N, M) raw bits -> (S, N, M)."""
        reason = self.unsupported_spirv_intel_mma(case)
        if reason:
            raise Unsupported(reason)
        S, N, M = a.shape[0], case.sg, case.M
        ks = self.kernel_source_spirv_intel_mma(case, S)
        dt = [np.dtype(t) for t in ks.arg_types]
        out = self.run_kernel(
            ks,
            {
                "a": np.asarray(a).astype(dt[0]).reshape(-1),
                "b": np.asarray(b).astype(dt[1]).reshape(-1),
                "c": np.asarray(c).astype(dt[2]).reshape(-1),
            },
            {"d": (dt[3], S * N * M), "sgsize": (np.uint32, S * N)},
        )
        bad = out["sgsize"] != N
        if bad.any():
            got = sorted(set(out["sgsize"][bad].tolist()))
            raise CaseError(
                f"module ran with subgroup size {got} on {self.device_label}, not the SubgroupSize {N} it declares"
            )
        return out["d"].astype(np.uint64).reshape(S, N, M)

    # --- OpRoundFToTF32INTEL (SPV_INTEL_tensor_float32_conversion) ----------
    TF32_ROUND_ITEMS = 256

    def unsupported_spirv_tf32_round(self, case) -> str | None:
        """None where the device claims capability 6425: cl_khr_spirv_queries
        lists it with SPV_INTEL_tensor_float32_conversion, or the device lists
        cl_intel_subgroup_matrix_multiply_accumulate_tf32 (whose SPIR-V rules
        make accepting it mandatory, cl_intel_subgroup_matrix_multiply_accumulate_tf32), or --assume-extension
        names either (a prelude's cts-provides does not count: it cannot
        change what a SPIR-V module gets).  Else the skip reason names the
        capability and says what the runtime does with such a module."""
        cached = getattr(self, "_tf32_round_reason", False)
        if cached is not False:
            return cached
        from cts.backends import clquery
        from cts.families.spirv_tf32 import TF32_CAPABILITY, TF32_SPV_EXTENSION

        dev = self.describe()
        il = clquery.il_version(self.device)
        explicit = set(getattr(self, "assumed_explicit", ()))
        caps = set(clquery.spirv_capabilities(self.device))
        exts = set(clquery.spirv_extensions(self.device))
        reason = None
        if "SPIR-V" not in il:
            reason = f"{dev.name} accepts no SPIR-V IL (CL_DEVICE_IL_VERSION {il!r})"
        elif not (
            (TF32_CAPABILITY in caps and TF32_SPV_EXTENSION in exts)
            or TF32_EXTENSION in dev.extensions
            or explicit & {"*", TF32_SPV_EXTENSION, TF32_EXTENSION}
        ):
            if "cl_khr_spirv_queries" in dev.extensions:
                q = (
                    f"cl_khr_spirv_queries lists {'' if TF32_CAPABILITY in caps else 'no '}capability 6425 "
                    f"(TensorFloat32RoundingINTEL) and {'' if TF32_SPV_EXTENSION in exts else 'no '}"
                    f"{TF32_SPV_EXTENSION}"
                )
            else:
                q = "no cl_khr_spirv_queries to claim capability 6425 (TensorFloat32RoundingINTEL)"
            reason = f"{dev.name}: {q}; no {TF32_EXTENSION}; {self._tf32_round_probe()}"
        self._tf32_round_reason = reason
        return reason

    def _tf32_round_probe(self) -> str:
        """What the runtime does with a module it was not told to accept."""
        from cts.kernels.spirv_tf32 import module_text
        from cts.kernels.spirv_tools import assemble

        try:
            self.build_program(il=assemble(module_text(1)))
        except CaseError as e:
            lines = [x.strip() for x in str(e).splitlines() if x.strip()]
            said = [x for x in lines if "6425" in x or "apabilit" in x or "nsupported" in x] or lines[-1:]
            return f"the runtime refuses a module declaring it: {said[0][:300] if said else 'build failed'}"
        return (
            "the runtime builds a module declaring it all the same (no rejection); "
            "--assume-extension SPV_INTEL_tensor_float32_conversion runs these cases on it"
        )

    def kernel_source_spirv_tf32_round(self, case, subgroups: int = 0) -> KernelSource:
        from cts.kernels.spirv_tf32 import ENTRY_POINT, module_text
        from cts.kernels.spirv_tools import assemble

        return KernelSource(
            entry=ENTRY_POINT,
            il=assemble(module_text(case.width)),
            global_size=(self.TF32_ROUND_ITEMS,),
            local_size=None,
            args=("x", "y"),
            arg_types=("uint32", "uint32"),
            notes=(f"OpRoundFToTF32INTEL on {case.width} float(s) per work-item; x, y as raw bits",),
        )

    def run_spirv_tf32_round(self, case, x: np.ndarray) -> np.ndarray:
        """x float32 (items, width) -> the rounded float32 (items, width)."""
        x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
        ks = self.kernel_source_spirv_tf32_round(case)
        ks = replace(ks, global_size=(x.shape[0],))
        out = self.run_kernel(ks, {"x": x.view(np.uint32).reshape(-1)}, {"y": (np.uint32, x.size)})
        return out["y"].view(np.float32).reshape(x.shape)
