"""Case space of the float multiply-accumulate targets that the numerics
fingerprint (``cts.numerics``) and its ``model`` tier (family ``float_mma``,
cases/test_numerics_model.py) know: plain tables, read by the emulator,
the OpenCL backend and the numerics layer."""

from __future__ import annotations

__all__ = ["FLOAT_MMA_TARGETS", "INTEL_FLOAT_ROWS"]

# (a_type, c_type, M, N, K): every float multiply-accumulate target the numerics
# experiments know: the float rows of the Intel built-ins (cl_intel_subgroup_matrix_multiply_accumulate,
# New OpenCL C Functions), one tile shape each (sub-group size 16, M = 8), and the float
# cooperative-matrix
# entries of the built-in h100 profile (16x16x16, cts/profiles/h100.json).  The
# numerics model tier is collected from it; the emulator offers all of it.
FLOAT_MMA_TARGETS: tuple[tuple[str, str, int, int, int], ...] = (
    ("f16", "f32", 8, 16, 16),
    ("bf16", "f32", 8, 16, 16),
    ("f16", "f16", 8, 16, 16),
    ("bf16", "bf16", 8, 16, 16),
    ("f16", "f32", 16, 16, 16),
    ("f16", "f16", 16, 16, 16),
    ("bf16", "f32", 16, 16, 16),
)

# (a = b type, accumulator / result type): the float rows of
# cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C Functions (N = 16)
INTEL_FLOAT_ROWS = (("f16", "f32"), ("bf16", "f32"), ("f16", "f16"), ("bf16", "bf16"))
