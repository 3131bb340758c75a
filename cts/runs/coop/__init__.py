"""Execution of one cooperative-matrix case: data -> buffers -> backend ->
verdict (SPV_KHR_cooperative_matrix; buffer contract in ``cts.families.coop``).

Acceptance rules (reference/tolerance.py names):
* I  integers exact: wrap, or clamp with SaturatingAccumulation (4.2).
* E  loads, stores, splats, element access, element-wise ops and MulAdd on
     exactly representable data: bit for bit (+0 == -0).
* F  float MulAdd / chain / gemm on random and special data: the gamma bound
     of reference.tolerance with n = (number of MulAdd steps) x (K + 1) terms
     (each step rounds into the Result type).
* C  conversions to a float type and element-wise add/sub/mul/scale on
     random data: the exact value or one of its two neighbours (no rounding
     mode is fixed; the Vulkan CTS accepts either direction too).
* D  float division on random data: within 3 ulp (Vulkan: 2.5 ulp).
The element-to-invocation mapping is implementation-defined (4.1) and never
checked: the ``length`` case records it and checks only that every element
is held by some invocation and that the length is the same everywhere.
"""

from __future__ import annotations

from cts.families.coop import owner_from_mapping
from cts.runs.coop.data import SUBGROUPS_PER_CASE
from cts.runs.coop.matrix_ops import decode_mapping
from cts.runs.coop.muladd import coop_muladd, device_muladd, is_coop_device
from cts.runs.coop.run import device_owner, run_coop

__all__ = [
    "run_coop",
    "coop_muladd",
    "device_muladd",
    "device_owner",
    "is_coop_device",
    "SUBGROUPS_PER_CASE",
    "decode_mapping",
    "owner_from_mapping",
]
