"""Numerics fingerprint targets through ``--backend cuda``: the float
multiply-accumulate of NVIDIA Tensor Cores reached the way DPC++'s
joint_matrix reaches it on CUDA, one ``wmma.mma.sync`` per tile (the
joint_matrix PTX of cts.kernels.ptx_joint, run by cts.backends.cuda_joint),
all operands row-major with tight strides.

The targets are the float rows of joint_matrix's NVIDIA table (sycl_ext_oneapi_matrix,
"Supported Combinations Per Hardware"): f16 x f16 + f32 and + f16 (16x16x16), bf16 + f32 (16x16x16), tf32 +
f32 (16x16x8), f64 + f64 (8x8x4); the same silicon's Vulkan fingerprint
(cts.numerics.vk) reaches it through the driver's SPIR-V compiler instead
of PTX.
"""

from __future__ import annotations

import numpy as np

from cts.families.joint import JointCase
from cts.numerics.probes import Target
from reference.dtypes import etype

__all__ = ["CUDA_TARGETS", "cuda_targets", "cuda_mma"]

# (A type, C type, M, N, K) and the joint_matrix row that lists it
CUDA_TARGETS = (
    ("f16", "f32", 16, 16, 16),
    ("f16", "f16", 16, 16, 16),
    ("bf16", "f32", 16, 16, 16),
    ("tf32", "f32", 16, 16, 8),
    ("f64", "f64", 8, 8, 4),
)
_ARCH = {"f16": "sm70", "bf16": "sm80", "tf32": "sm80", "f64": "sm80"}


def _mem(t: str):
    return etype("f32" if t == "tf32" else t)


def cuda_mma(device, a: str, c: str, M: int, N: int, K: int, A, B, C) -> np.ndarray:
    """D = A x B + C (values (S, ., .) float64) on ``device`` (a backend with
    ``run_joint_matrix``), one warp per tile."""
    case = JointCase(_ARCH[a], "cur", "mad", (a, a, c, c), M, N, K, "mad", ("row",) * 4, "tight", "random")
    S = A.shape[0]
    ma, mc = _mem(a), _mem(c)
    kw = {
        "a": ma.encode(A).reshape(S, M * K),
        "b": ma.encode(B).reshape(S, K * N),
        "c": mc.encode(C).reshape(S, M * N),
        "d": np.zeros((S, M * N), dtype=np.uint64),
        "sa": K,
        "sb": N,
        "sc": N,
        "sd": N,
    }
    out = device.run_joint_matrix(case, **kw)
    return mc.decode(np.asarray(out).reshape(S, M, N))


def cuda_targets(selection_targets, device=None) -> list[Target]:
    """Targets for the selected (a, c, M, N, K) tuples; ``device``: a
    backend with ``run_joint_matrix`` (default: ``--backend cuda``)."""
    lacking = [t for t in selection_targets if t not in CUDA_TARGETS]
    if lacking:
        a, c, M, N, K = lacking[0]
        have = ", ".join(f"{x[0]}:{x[1]}:{x[2]}x{x[3]}x{x[4]}" for x in CUDA_TARGETS)
        raise ValueError(f"--targets {a}:{c}:{M}x{N}x{K}: no joint_matrix CUDA row; the rows are {have}")
    if device is None:
        from cts.backends import make_backend

        device = make_backend("cuda")
        if getattr(device, "reason", None):
            raise ValueError(f"no CUDA device: {device.reason}")
    name = f"{device.describe().name} (CUDA, joint_matrix WMMA PTX, {getattr(device, 'chip', '?')})"
    return [
        Target(
            name,
            M,
            N,
            K,
            a,
            c,
            lambda A, B, C, a=a, c=c, M=M, N=N, K=K: cuda_mma(device, a, c, M, N, K, A, B, C),
        )
        for a, c, M, N, K in selection_targets
    ]
