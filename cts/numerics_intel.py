"""The Intel float built-ins as an abstract ``mma(A, B, C) -> D`` for the
numerics fingerprint (issue 8): logical tiles are packed into the
per-invocation register images of the spec (reference.layout, spec-digest
1.2 / 3.4), run through any backend's ``run_intel_mma`` (the emulator, or an
OpenCL device, natively or through a prelude) and decoded back.  The tile
is M = 8 rows, N = sub-group size 16, K = 16 (fp16 / bf16), as in
``intel_sub_group_{f16,bf16}_{f16,bf16}_matrix_mad_k16``."""

from __future__ import annotations

import numpy as np

from reference import layout
from reference.dtypes import etype

from .backends.base import Unsupported
from .families.intel import IntelMmaCase
from .numerics import Target

__all__ = ["INTEL_FLOAT_ROWS", "intel_targets", "intel_mma_fn"]

# (a = b type, accumulator / result type): the float rows of spec-digest 1.3 (N = 16)
INTEL_FLOAT_ROWS = (("f16", "f32"), ("bf16", "f32"), ("f16", "f16"), ("bf16", "bf16"))


def intel_mma_fn(backend, case: IntelMmaCase):
    """mma(A (S,M,K), B (S,K,N), C (S,M,N)) -> D through ``backend``."""
    a_t, acc_t = etype(case.a), etype(case.acc)
    N = case.sg

    def mma(A, B, C):
        A_bits, B_bits, C_bits = a_t.encode(A), a_t.encode(B), acc_t.encode(C)
        a_regs = layout.a_register_image(A_bits, N, case.a_elem_bits)
        b_regs = layout.b_register_image(B_bits, case.b_elem_bits)
        c_regs = layout.c_register_image(C_bits)
        d = np.asarray(backend.run(case, a=a_regs, b=b_regs, c=c_regs))
        return acc_t.decode(layout.c_from_registers(d) & np.uint64(acc_t.mask))

    return mma


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
