"""``run_joint_matrix`` on the CUDA driver: SYCL joint_matrix's NVIDIA
Tensor Core rows (sm70 / sm72 / sm80 of sycl_ext_oneapi_matrix, Supported Combinations Per Hardware) as
the PTX DPC++'s CUDA path emits (cts.kernels.ptx_joint), assembled by the driver
(cuModuleLoadData) for the device's compute capability, one launch of one
warp per tile.

A mixin of :class:`cts.backends.cuda.CudaBackend`, which owns the driver's
child process; the emulated device of cts.backends.cuda_emu reuses it with
a PTX interpreter in place of the driver.  What does not run is a skip
naming why: a row of another architecture, a row whose minimum compute
capability the device lacks, a copy with no PTX counterpart, or a stride
that breaks the rule governing it (the SYCL CUDA rule "multiple of 8 for
half, 4 for float", or the PTX ISA's address alignment for the types that
rule does not name).
"""

from __future__ import annotations

import numpy as np

from cts.errors import Unsupported
from cts.kernels.ptx_joint import (
    ENTRY,
    NV_ARCH_CC,
    alignment_gap,
    buffer_names,
    joint_ptx,
    stride_skip,
    why_not,
)

__all__ = ["CudaJoint", "MEM_DTYPE"]

# memory container of each element type (tf32 in its float container)
MEM_DTYPE = {
    "f16": np.uint16,
    "bf16": np.uint16,
    "tf32": np.uint32,
    "f32": np.uint32,
    "i8": np.uint8,
    "u8": np.uint8,
    "i32": np.uint32,
    "f64": np.uint64,
}


def _buffer_types(case) -> dict[str, str]:
    if case.op == "mad":
        return dict(zip(("a", "b", "c", "d"), case.types))
    ts, td = (case.types * 2)[:2]
    return {"src": ts, "value": ts, "dst": td}


class CudaJoint:
    """The joint_matrix entry of a CUDA device.  Needs ``self.chip``
    (``sm_XY``) and ``self._run_rows(ptx, entry, block, rows) -> rows``."""

    ptx_variant: str | None = None  # a named wrong variant (cts.kernels.ptx_joint.WRONG_VARIANTS)

    def _joint_unsupported(self, case) -> str | None:
        why = why_not(case)
        if why:
            return why
        need = NV_ARCH_CC[case.arch]
        have = tuple(int(x) for x in self.compute_capability())
        if have < need:
            return (
                f"joint_matrix row {case.arch} needs compute capability {need[0]}.{need[1]} "
                f"(ext_oneapi_cuda table); the device is {have[0]}.{have[1]}"
            )
        return None

    unsupported_joint_matrix = _joint_unsupported  # the family's check (protocols.JointMatrixCheck)

    def take_notes(self) -> list[str]:
        """Findings of the cases run since the last call (report notes)."""
        out, self._joint_notes = list(getattr(self, "_joint_notes", [])), []
        return out

    def compute_capability(self) -> tuple[int, int]:
        major, minor = self.chip.split("_")[1][:-1], self.chip.split("_")[1][-1]
        return int(major), int(minor)

    def joint_ptx_text(self, case, strides: dict) -> str:
        """The PTX run for ``case`` with the run's strides."""
        return joint_ptx(case, self.chip, strides, self.ptx_variant)

    def run_joint_matrix(self, case, **kw) -> np.ndarray:
        strides = {k: int(v) for k, v in kw.items() if k in ("sa", "sb", "sc", "sd", "s_src", "s_dst")}
        skip = stride_skip(case, strides)
        if skip:
            raise Unsupported(skip)
        gap = alignment_gap(case, strides)
        if gap:  # a report note (deduplicated there), as the case's verdict is outside PTX's promise
            self._joint_notes = [*getattr(self, "_joint_notes", []), gap]
        types = _buffer_types(case)
        names = buffer_names(case)
        rows = {}
        for n in names:
            x = np.asarray(kw[n])
            if n == "value":
                x = x.reshape(-1, 1)
            rows[n] = np.ascontiguousarray(x.astype(MEM_DTYPE[types[n]]))
        out_name = names[-1]
        out = self._run_rows(self.joint_ptx_text(case, strides), ENTRY, 32, rows)
        return np.asarray(out[out_name]).astype(np.uint64)
