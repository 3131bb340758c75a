"""Backend ``cuda``: the MLIR family through upstream MLIR's NVVM path on
the CUDA driver (mlir-opt's gpu-lower-to-nvvm-pipeline, then the driver's PTX JIT), and
SYCL joint_matrix's NVIDIA rows as the WMMA PTX DPC++'s CUDA path emits
(cts.backends.cuda_joint, cts.kernels.ptx_joint).

A case's program (cts.families.mlir_program, the one the emulator
interprets) becomes MLIR text with ``#nvvm.target<chip = sm_XY>`` (the
device's compute capability), ``mlir-opt`` lowers it to PTX
(convert-gpu-to-nvvm, reconcile-unrealized-casts, gpu-module-to-binary
{format=isa}; cts.kernels.mlir_tools, cached on disk), and the CUDA driver
API of PyPI ``cuda-bindings`` loads it (cuModuleLoadData), launches one
block of one warp (32 threads) per subgroup row of the buffers, each row in
its own allocations (cuLaunchKernel) and reads the buffers back.  The
driver work runs in a child process (cts.backends.cuda_device): a kernel
fault is sticky for the process that met it, so it ends that child only,
and the next case gets a fresh one.  Each 1-D memref argument is
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

import os
import subprocess
import sys

import numpy as np

from cts.backends.base import Backend, BackendError, CaseError, DeviceInfo, Unsupported
from cts.backends.cuda_device import recv, send
from cts.backends.cuda_joint import CudaJoint
from cts.errors import HarnessError, ToolchainError
from cts.families.mlir import LANE_OPS
from cts.families.mlir_program import case_program, program_from
from cts.kernels import mlir_text
from cts.kernels.mlir_text import CudaTarget

__all__ = ["CudaBackend", "WARP"]

WARP = 32


class CudaBackend(CudaJoint, Backend):
    name = "cuda"

    def __init__(self, device: str | None = None):
        self.selector = device
        self._ready = False
        self.reason: str | None = None
        self._proc = None
        self._first = None
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
    def _child(self):
        """The child process that holds the CUDA driver (cts.backends.cuda_device),
        started on first use and again after a kernel fault ended it."""
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "cts.backends.cuda_device", str(self.selector or "")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
            try:
                self._first = recv(self._proc.stdout)
            except EOFError:
                code = self._proc.wait()
                self._proc = None
                raise CaseError(f"CUDA: the driver process ended at start (exit {code})") from None
        return self._proc

    def _open(self) -> None:
        if self._ready:
            return
        self._ready = True
        try:
            self._child()
        except CaseError as e:
            self._none(str(e))
            return
        kind, what = self._first
        if kind == "usage":
            raise BackendError(what)
        if kind != "info":
            self._none(what)
            self._stop()
            return
        self.chip = f"sm_{what['major']}{what['minor']}"
        self.info = DeviceInfo(
            backend="cuda",
            name=what["name"],
            platform="CUDA",
            driver=what["driver"],
            version=self.chip,
            subgroup_sizes=(what["warp"],),
            extra={
                "compute_capability": f"{what['major']}.{what['minor']}",
                "mlir_toolchain": self.mlir_toolchain(),
            },
        )

    def _none(self, why: str) -> None:
        self.reason = why
        self.info = DeviceInfo(backend="cuda", name="no CUDA device", extra={"reason": why})

    def _stop(self) -> None:
        if self._proc is not None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except Exception:  # noqa: BLE001
                self._proc.kill()
            self._proc = None

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
        return self.unsupported_by_family(case)  # the family's check (cts.families.registry `check`)

    def unsupported_mlir_mma(self, case) -> str | None:
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
            except Unsupported as e:  # an op variant this mlir-opt lacks (it checked the suite's text first)
                self._lowering[text] = str(e)
            except HarnessError:
                self._lowering[text] = None  # no tools, or the suite's invalid text: the run's harness error
        return self._lowering[text]

    # --------------------------------------------------------- execution
    def float_env(self, case):
        """PTX from the NVVM lowering: IEEE zeros, infinities, NaNs and division (cts.judge.env)."""
        from cts.judge.env import PTX

        return PTX

    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        from cts.kernels.mlir_tools import ptx_findings, to_ptx, tool_version

        if self.reason:
            raise Unsupported(self.reason)
        prog = program_from(program, buffers, WARP if case.op not in LANE_OPS else case.sg)
        text = self._text(case, prog)
        ptx = to_ptx(text)  # a refusal is a ToolchainError: the compiler's verdict
        self._mlir_findings = (tool_version(), ptx_findings(text, ptx))
        return {**buffers, **self._execute(ptx, mlir_text.func_name(case), prog, buffers)}

    def take_module_findings(self) -> tuple[str, list[str]]:
        """(tool, findings) of the PTX the last case ran (``ptx_findings``:
        a wrong or refused result from such PTX is a toolchain verdict)."""
        out = getattr(self, "_mlir_findings", ("", []))
        self._mlir_findings = ("", [])
        return out

    def _execute(self, ptx: str, entry: str, prog, buffers: dict) -> dict:
        rows = {n: np.ascontiguousarray(buffers[n]) for n in prog.buffers}
        return self._run_rows(
            ptx, entry, prog.sg, rows, misaligned="convert-gpu-to-nvvm lowers the op without checking either"
        )

    def _run_rows(self, ptx: str, entry: str, block: int, rows: dict, misaligned: str = "") -> dict:
        """Each subgroup row of ``rows`` (name -> (S, n) arrays) as one launch
        of one block of ``block`` threads in the driver's child process;
        ``misaligned``: what a misaligned-address fault adds about who wrote
        the PTX."""
        if self.reason:
            raise Unsupported(self.reason)
        proc = self._child()
        try:
            send(proc.stdin, (ptx, entry, block, rows))
            kind, what = recv(proc.stdout)
        except (EOFError, BrokenPipeError, OSError):
            code = proc.wait()
            self._proc = None
            raise CaseError(f"CUDA: the driver process died during the case (exit {code})") from None
        if kind == "ok":
            return what
        if kind == "fault":
            self._stop()  # the fault is sticky there: a fresh process for the next case
            if "misaligned" in what:  # the PTX ISA's wmma.load/store alignment rules
                what += (
                    " (wmma.load / wmma.store need a 16-byte multiple leadDimension and an aligned "
                    f"address{'; ' + misaligned if misaligned else ''})"
                )
        raise CaseError(f"CUDA: {what}")

    def close(self) -> None:
        self._stop()
