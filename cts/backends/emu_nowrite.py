"""Emulator fault ``write_nothing``: a device whose kernels never store a
result.  Every output buffer comes back as it went in (the run flows'
sentinel fills), and where the backend allocates the output itself (the
register-image families, subgroup rotate) as the sentinel of its width that
the OpenCL and Vulkan backends fill their output buffers with
(``cts.judge.sentinel.width_fill``).  Subgroup rotate still reports its
subgroup map (launch metadata, not a result), so its elements can be judged.

The self-test of the sentinel fills: every judged element of every family
must fail and be named "never written" (tests/test_sentinels.py).
"""

from __future__ import annotations

import numpy as np

from cts.judge.sentinel import WIDTH_PATTERN

__all__ = ["NoWriteEmulation", "NOWRITE_FAULTS"]

NOWRITE_FAULTS: dict[str, str] = {
    "write_nothing": "no kernel stores a result: every output buffer keeps its initial fill",
}


def _fill(shape, bits: int) -> np.ndarray:
    return np.full(shape, WIDTH_PATTERN[bits], dtype=np.uint64)


def _width(name: str) -> int:
    return {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "i32": 32, "u32": 32}.get(name, 32)


class NoWriteEmulation:
    FAULTS = NOWRITE_FAULTS

    def _nowrite(self) -> bool:
        return "write_nothing" in self.faults

    def run_intel_mma(self, case, a, b, c):
        if self._nowrite():
            return _fill((a.shape[0], case.sg, case.M), _width(case.acc))
        return super().run_intel_mma(case, a, b, c)

    def run_intel_split_mma(self, case, a, b, c):
        if self._nowrite():
            return _fill((*a.shape[:2], case.sg, case.M), _width(case.acc))
        return super().run_intel_split_mma(case, a, b, c)

    def run_intel_tf32_convert(self, case, x):
        if self._nowrite():
            return _fill(np.shape(x), 32).astype(np.uint32).view(np.float32)
        return super().run_intel_tf32_convert(case, x)

    def run_spirv_intel_mma(self, case, a, b, c):
        if self._nowrite():
            return _fill((a.shape[0], case.sg, case.M), _width(case.result))
        return super().run_spirv_intel_mma(case, a, b, c)

    def run_spirv_tf32_round(self, case, x):
        if self._nowrite():
            return _fill(np.shape(x), 32).astype(np.uint32).view(np.float32)
        return super().run_spirv_tf32_round(case, x)

    def run_coop_matrix(self, case, bufs: dict) -> dict:
        if self._nowrite():
            return {k: np.array(v, copy=True) for k, v in bufs.items()}
        return super().run_coop_matrix(case, bufs)

    def run_coop_matrix2(self, case, bufs: dict) -> dict:
        if self._nowrite():
            return {k: np.array(v, copy=True) for k, v in bufs.items()}
        return super().run_coop_matrix2(case, bufs)

    def run_joint_matrix(self, case, **kw):
        if self._nowrite():
            return np.array(kw["d"] if case.op == "mad" else kw["dst"], copy=True)
        return super().run_joint_matrix(case, **kw)

    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        if self._nowrite():
            return {k: np.array(v, copy=True) for k, v in buffers.items()}
        return super().run_mlir_mma(case, program, buffers)

    def run_subgroup_rotate_launches(self, case, launches: list[dict]) -> list[dict]:
        return [self._unwritten_rotate(case, r) for r in super().run_subgroup_rotate_launches(case, launches)]

    def _unwritten_rotate(self, case, res: dict) -> dict:
        if self._nowrite():
            res = dict(res)
            res["out"] = _fill(np.shape(res["out"]), case.gentype.bits)
        return res

    def run_subgroup_builtins(self, case, groups: int, local: int) -> dict:
        if self._nowrite():  # every word of every work-item keeps the 32-bit fill
            return {"info": _fill((groups * local * 5,), 32).astype(np.uint32)}
        return super().run_subgroup_builtins(case, groups, local)
