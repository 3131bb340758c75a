"""The Intel float built-ins as an abstract ``mma(A, B, C) -> D`` for the
numerics fingerprint: logical tiles are packed into the
per-invocation register images of the spec (reference.layout; SPV_INTEL_subgroup_matrix_multiply_accumulate,
"Mapping Matrix Data to Invocations"), run through any backend's ``run_intel_mma`` (the emulator, or an
OpenCL device, natively or through a prelude) and decoded back.  The tile
is M = 8 rows, N = sub-group size 16, K = 16 (fp16 / bf16), as in
``intel_sub_group_{f16,bf16}_{f16,bf16}_matrix_mad_k16``."""

from __future__ import annotations

from cts.backends.float_mma import intel_mma_fn
from cts.errors import Unsupported
from cts.families.float_mma import INTEL_FLOAT_ROWS
from cts.families.intel import IntelMmaCase
from cts.numerics.probes import Target

__all__ = ["INTEL_FLOAT_ROWS", "intel_targets", "intel_mma_fn"]


def intel_targets(backend, device: str, rows=INTEL_FLOAT_ROWS, M: int = 8) -> list[Target]:
    """One target per float built-in the backend can run (others raise
    Unsupported with the backend's reason when called)."""
    out = []
    for a, acc in rows:
        case = IntelMmaCase("intel_mma", 16, a, a, 16, M, acc, "random")
        reason = backend.unsupported(case)
        if reason:
            mma = _unsupported(reason)
        else:
            mma = intel_mma_fn(backend, case)
        out.append(Target(f"{device} [{case.builtin}]", M, 16, 16, a, acc, mma))
    return out


def _unsupported(reason: str):
    def mma(A, B, C):
        raise Unsupported(reason)

    return mma
