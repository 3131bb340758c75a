"""Backend ``cuda``: the MLIR family through upstream MLIR's NVVM path on
the CUDA driver (issue 18; specs/mlir-lowering.md "To PTX for CUDA").

A case's program (cts.families.mlir_program, the one the emulator
interprets) becomes MLIR text with ``#nvvm.target<chip = sm_XY>`` (the
device's compute capability), ``mlir-opt`` lowers it to PTX
(convert-gpu-to-nvvm, reconcile-unrealized-casts, gpu-module-to-binary
{format=isa}; cts.kernels.mlir_tools, cached on disk), and the CUDA driver
API of PyPI ``cuda-bindings`` loads it (cuModuleLoadData), launches one
block of one warp (32 threads) per subgroup row of the buffers
(cuLaunchKernel) and reads the buffers back.  Each 1-D memref argument is
five kernel parameters: allocated pointer, aligned pointer, offset, size,
stride.

* Without the package or the driver (no GPU) the backend still imports and
  opens: every case skips with one line saying why.
* A case the NVVM lowering does not cover (``failed to legalize``:
  gpu.rotate, shapes and type pairs WMMA lacks) skips naming the missing
  lowering and the tool's version; any other refusal (a verifier, a crash
  of the tool) is a toolchain verdict (:class:`cts.errors.ToolchainError`).
* Lane programs (thread-local, rotate) need the case's subgroup size to be
  the warp size, 32.
"""

from __future__ import annotations

import hashlib

import numpy as np

from cts.backends.base import Backend, BackendError, CaseError, DeviceInfo, Unsupported
from cts.errors import HarnessError, ToolchainError
from cts.families.mlir import LANE_OPS
from cts.families.mlir_program import case_program, program_from
from cts.kernels import mlir_text
from cts.kernels.mlir_text import CudaTarget

__all__ = ["CudaBackend", "WARP"]

WARP = 32


class CudaBackend(Backend):
    name = "cuda"

    def __init__(self, device: str | None = None):
        self.selector = device
        self._ready = False
        self.reason: str | None = None
        self._modules: dict[str, object] = {}
        self._lowering: dict[str, str | None] = {}
        self.info = DeviceInfo(backend="cuda", name="(not opened)")

    @classmethod
    def from_options(cls, device=None, **other):
        b = cls(device)
        b._open()
        if device is not None and b.reason:
            raise BackendError(f"--device {device!r}: no CUDA device can be selected ({b.reason})")
        return b

    # ------------------------------------------------------------ set-up
    def _open(self) -> None:
        if self._ready:
            return
        self._ready = True
        try:
            from cuda.bindings import driver as cu
        except Exception as e:  # noqa: BLE001 - ImportError without the package
            self._none(
                f"no CUDA Python bindings (pip install -e '.[cuda]': cuda-bindings): {type(e).__name__}: {e}"
            )
            return
        self.cu = cu
        try:
            self._check(cu.cuInit(0)[0], "cuInit")
            n = self._call(cu.cuDeviceGetCount(), "cuDeviceGetCount")
            if not n:
                self._none("no CUDA device")
                return
            idx = self._select(cu, n)
            self.dev = self._call(cu.cuDeviceGet(idx), "cuDeviceGet")
            self.ctx = self._call(cu.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
            self._check(cu.cuCtxSetCurrent(self.ctx)[0], "cuCtxSetCurrent")
        except BackendError:
            raise
        except Exception as e:  # noqa: BLE001 - no driver library (no GPU), an old driver, ...
            self._none(f"no CUDA driver: {type(e).__name__}: {str(e)[:200]}")
            return
        attr = cu.CUdevice_attribute
        major = self._call(
            cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev), "cc"
        )
        minor = self._call(
            cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev), "cc"
        )
        warp = self._call(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE, self.dev), "warp size")
        name = self._call(cu.cuDeviceGetName(256, self.dev), "cuDeviceGetName")
        name = name.split(b"\0", 1)[0].decode(errors="replace")
        version = self._call(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        self.chip = f"sm_{major}{minor}"
        self.info = DeviceInfo(
            backend="cuda",
            name=name,
            platform="CUDA",
            driver=f"CUDA driver {version // 1000}.{version % 1000 // 10}",
            version=self.chip,
            subgroup_sizes=(int(warp),),
            extra={"compute_capability": f"{major}.{minor}", "mlir_toolchain": self.mlir_toolchain()},
        )

    def _none(self, why: str) -> None:
        self.reason = why
        self.info = DeviceInfo(backend="cuda", name="no CUDA device", extra={"reason": why})

    def _select(self, cu, n: int) -> int:
        sel = self.selector
        if sel in (None, ""):
            return 0
        names = [
            self._call(cu.cuDeviceGetName(256, self._call(cu.cuDeviceGet(i), "cuDeviceGet")), "name")
            .split(b"\0", 1)[0]
            .decode(errors="replace")
            for i in range(n)
        ]
        if str(sel).isdigit():
            if int(sel) >= n:
                raise BackendError(f"--device {sel}: only {n} CUDA device(s): {', '.join(names)}")
            return int(sel)
        hits = [i for i, nm in enumerate(names) if str(sel).lower() in nm.lower()]
        if len(hits) != 1:
            raise BackendError(
                f"--device {sel!r} matches {len(hits)} of the CUDA devices: {', '.join(names)}"
            )
        return hits[0]

    def _check(self, err, what: str) -> None:
        if int(err) != 0:
            ok, text = self.cu.cuGetErrorString(err)
            msg = text.decode() if int(ok) == 0 and text else str(err)
            raise CaseError(f"CUDA {what}: {msg}")

    def _call(self, ret, what: str):
        self._check(ret[0], what)
        return ret[1] if len(ret) == 2 else ret[1:]

    def mlir_toolchain(self) -> dict:
        from cts.kernels.mlir_tools import PTX_PIPELINE, tool_version

        try:
            return {"tool": tool_version(), "pipeline": PTX_PIPELINE}
        except HarnessError as e:
            return {"tool": f"not found: {str(e)[:200]}", "pipeline": PTX_PIPELINE}

    # --------------------------------------------------------- interface
    def describe(self) -> DeviceInfo:
        self._open()
        return self.info

    def unsupported(self, case) -> str | None:
        base = super().unsupported(case)
        if base:
            return base
        self._open()
        if self.reason:
            return self.reason
        if case.op in LANE_OPS and case.sg != WARP:
            return f"case planned for subgroup size {case.sg}; a CUDA warp is {WARP}"
        return self._no_lowering(case)

    def mlir_module_text(self, case, prog, target) -> str:
        """The MLIR text run for ``case`` (tests replace it with a wrong one)."""
        return mlir_text.case_module(case, prog, target)

    def _text(self, case, prog) -> str:
        return self.mlir_module_text(case, prog, CudaTarget(self.chip))

    def _no_lowering(self, case) -> str | None:
        """A skip when mlir-opt has no NVVM lowering of an op of the case
        (the tool decides, once per text: cached on disk)."""
        from cts.kernels.mlir_tools import to_ptx, tool_version

        prog = case_program(case)
        prog.sg = WARP if case.op not in LANE_OPS else case.sg
        text = self._text(case, prog)
        if text not in self._lowering:
            try:
                to_ptx(text)
                self._lowering[text] = None
            except ToolchainError as e:
                msg = str(e)
                legalize = "failed to legalize operation" in msg
                self._lowering[text] = (
                    f"{tool_version()} has no NVVM lowering: {msg[msg.index('failed to legalize') :]}"
                    if legalize
                    else None  # any other refusal: the toolchain verdict of the run
                )
            except HarnessError:
                self._lowering[text] = None  # no tools: the run says so as a harness error
        return self._lowering[text]

    # --------------------------------------------------------- execution
    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        from cts.kernels.mlir_tools import to_ptx

        if self.reason:
            raise Unsupported(self.reason)
        prog = program_from(program, buffers, WARP if case.op not in LANE_OPS else case.sg)
        ptx = to_ptx(self._text(case, prog))  # a refusal is a ToolchainError: the compiler's verdict
        try:
            return {**buffers, **self._launch(ptx, mlir_text.func_name(case), prog, buffers)}
        except (CaseError, Unsupported):
            raise
        except Exception as e:  # noqa: BLE001 - a driver error fails this case only
            raise CaseError(f"CUDA: {type(e).__name__}: {str(e)[:300]}") from None

    def _function(self, ptx: str, entry: str):
        key = hashlib.sha256(ptx.encode()).hexdigest()
        if key not in self._modules:
            cu = self.cu
            err, mod = cu.cuModuleLoadData(ptx.encode() + b"\0")
            if int(err) != 0:
                self._check(err, "cuModuleLoadData (the driver refused the PTX)")
            self._modules[key] = mod
        return self._call(
            self.cu.cuModuleGetFunction(self._modules[key], entry.encode()), "cuModuleGetFunction"
        )

    def _launch(self, ptx: str, entry: str, prog, buffers: dict) -> dict:
        cu = self.cu
        fn = self._function(ptx, entry)
        order = list(prog.buffers)
        arrays = {n: np.ascontiguousarray(buffers[n]) for n in order}
        groups = next(iter(arrays.values())).shape[0]
        ptrs, params = {}, []
        try:
            for n in order:
                x = arrays[n]
                d = self._call(cu.cuMemAlloc(max(x.nbytes, 4)), "cuMemAlloc")
                ptrs[n] = d
                self._check(cu.cuMemcpyHtoD(d, x.ctypes.data, x.nbytes)[0], "cuMemcpyHtoD")
                # the memref descriptor: allocated pointer, aligned pointer, offset, size, stride
                params += [int(d), int(d), 0, x.size, 1]
            words = [np.array([p], dtype=np.uint64) for p in params]
            argv = np.array([w.ctypes.data for w in words], dtype=np.uint64)
            self._check(
                cu.cuLaunchKernel(fn, groups, 1, 1, prog.sg, 1, 1, 0, 0, argv.ctypes.data, 0)[0],
                "cuLaunchKernel",
            )
            self._check(cu.cuCtxSynchronize()[0], "cuCtxSynchronize (the kernel failed)")
            out = {}
            for n in order:
                x = np.empty_like(arrays[n])
                self._check(cu.cuMemcpyDtoH(x.ctypes.data, ptrs[n], x.nbytes)[0], "cuMemcpyDtoH")
                out[n] = x
            return out
        finally:
            for d in ptrs.values():
                cu.cuMemFree(d)

    def close(self) -> None:
        if not self._ready or self.reason:
            return
        try:
            for mod in self._modules.values():
                self.cu.cuModuleUnload(mod)
            self._modules.clear()
            self.cu.cuDevicePrimaryCtxRelease(self.dev)
        except Exception:  # noqa: BLE001 - teardown must not fail a session
            pass
