"""Conformance cases for the MLIR gpu dialect's subgroup-MMA operations,
``gpu.rotate`` and the proposed ``gpu.subgroup_mma_rotate`` realized as its
RFC lowering (MLIR GPUOps.td op descriptions; LLVM Discourse RFC "Add GPU operations
to permute data in 2 loaded mma_matrix").

Ids name the op and its axes, e.g. ``test_mlir_mma[compute-f16_f16_f32-aT-bN-padded]``,
``test_mlir_mma[gpu_rotate-f32-sg16-w8-off7]``, ``test_mlir_mma[mma_rotate-COp-f32-sg16-off8]``.
"""

import pytest

from cts.families.mlir import mlir_cases
from cts.runs.mlir import run_mlir


@pytest.mark.cts_cases.with_args(mlir_cases)
def test_mlir_mma(case, cts):
    """One gpu-dialect program (load/store, compute, constant, elementwise,
    thread-local round trip, gpu.rotate, the mma_rotate lowering)."""
    cts.check(case, run_mlir)
