"""The Intel float built-ins as an abstract ``mma(A, B, C) -> D`` on values:
logical tiles packed into the spec's per-invocation register images
(reference.layout; SPV_INTEL_subgroup_matrix_multiply_accumulate,
"Mapping Matrix Data to Invocations"), run through any backend's
``run_intel_mma`` (the emulator, or an OpenCL device natively or through a
prelude) and decoded back.  The OpenCL backend's ``run_float_mma`` and the
numerics fingerprint (``cts.numerics.intel``) use it."""

from __future__ import annotations

import numpy as np

from cts.families.intel import IntelMmaCase
from reference import layout
from reference.dtypes import etype

__all__ = ["intel_mma_fn"]


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
