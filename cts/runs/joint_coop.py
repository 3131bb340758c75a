"""joint_matrix on a real device through cooperative matrix.

SYCL implementations lower ``joint_matrix_mad`` to SPIR-V cooperative-matrix
MulAdd (``SPV_KHR_cooperative_matrix``; sycl_ext_oneapi_matrix).  A backend
that reports VkCooperativeMatrixPropertiesKHR entries (``coop_entries()`` ->
(entries, subgroup size), the cooperative-matrix room's Vulkan backend)
realizes every joint_matrix mad combination of sycl_ext_oneapi_matrix, Supported Combinations Per
Hardware whose (M, N, K, A, B, C, D) equals a reported, non-saturating, subgroup-scope
entry.  The SYCL memory side (layouts row_major / col_major /
ext_intel_packed, strides) has no cooperative-matrix counterpart for the
packed layout, so it is done on the host: the emulator's joint_matrix
load/store address generator reads the operands out of the SYCL memory
images and writes D back; the device does the multiply-accumulate
(``cts.runs.coop.coop_muladd``).  The verdict is the same as on the
emulator (``cts.runs.joint.run_joint``: Rules I / E / R / F, padding check).

Everything else skips with a reason naming what is missing: no
cooperative-matrix entry point on the backend, no matching property, or a
saturating-only entry.
"""

from __future__ import annotations

import numpy as np

from cts.backends.emu_joint import JointEmulation
from cts.errors import Unsupported
from cts.families.joint import JointCase, matching_entry
from cts.runs.coop import coop_muladd
from cts.runs.joint import run_joint

__all__ = ["run_joint_coop", "coop_joint_device", "CoopJointDevice"]


class _Host(JointEmulation):
    """The emulator's SYCL memory address generator, fault-free, on the host."""

    faults = frozenset()


class CoopJointDevice:
    """A backend view that runs ``run_joint_matrix`` mad cases: host-side
    SYCL loads/stores around the device's cooperative-matrix MulAdd."""

    def __init__(self, backend, entry, sg: int, muladd=None):
        """``muladd(backend, entry, A, B, C, sg=)`` -> D values; default: the
        cooperative-matrix family's ``coop_muladd``."""
        self.backend = backend
        self.entry = entry
        self.sg = sg
        self.name = getattr(backend, "name", "device")
        self._host = _Host()
        self._muladd = muladd

    def unsupported(self, case) -> str | None:
        return None

    def describe(self):
        return self.backend.describe()

    def run(self, case, **kw) -> np.ndarray:
        muladd = self._muladd or coop_muladd  # default: the coop family's public entry

        a, b, c, d = case.types
        la, lb, lc, ld = case.layouts
        h = self._host
        A = h._jm_load(kw["a"], la, case.M, case.K, a, kw["sa"])
        B = h._jm_load(kw["b"], lb, case.K, case.N, b, kw["sb"])
        C = h._jm_load(kw["c"], lc, case.M, case.N, c, kw["sc"])
        D = muladd(self.backend, self.entry, A, B, C, sg=self.sg)
        return h._jm_store(kw["d"], np.asarray(D), ld, d, kw["sd"])


def coop_joint_device(case: JointCase, backend, session_coop=None) -> CoopJointDevice:
    """The device view that realizes ``case`` on ``backend``: gate on the
    device's reported cooperative-matrix properties (``coop_entries()``) or,
    for a backend that plays a cooperative-matrix device from a property
    table (the emulator's ``run_coop_matrix``), on ``session_coop()`` ->
    (entries, subgroup size), the session's ``--coop-profile``.  Raises
    :class:`Unsupported` naming what is missing."""
    be = backend
    if hasattr(be, "coop_entries"):
        got = be.coop_entries()
    elif hasattr(be, "run_coop_matrix") and session_coop is not None:
        # The emulator plays a cooperative-matrix device with the session's
        # property profile (--coop-profile, default h100): the same gate and
        # the same coop_muladd path as a real driver.
        got = session_coop()
    else:
        raise Unsupported(
            f"backend {be.name!r} reports no cooperative-matrix properties (coop_entries); "
            "joint_matrix mad runs on a device only through VK_KHR_cooperative_matrix (--backend vulkan)"
        )
    if got is None:
        why = getattr(be, "reason", None) or (
            "the device reports no cooperative-matrix variants: no VK_KHR_cooperative_matrix / "
            "cl_khr_cooperative_matrix properties"
        )
        raise Unsupported(
            f"backend {be.name!r}: no cooperative-matrix properties to realize joint_matrix with ({why})"
        )
    entries, sg = got
    if "tf32" in case.types:
        raise Unsupported(
            "tf32 joint_matrix has no cooperative-matrix counterpart: VkComponentTypeKHR lists no tf32 "
            "component type (Vulkan specification, Cooperative Matrices), so no reported property can "
            "realize it"
        )
    e = matching_entry(entries, case)
    if e is None:
        a, b, c, d = case.types
        raise Unsupported(
            f"device reports no non-saturating subgroup-scope cooperative-matrix property "
            f"M={case.M} N={case.N} K={case.K} A={a} B={b} C={c} Result={d} "
            f"({len(entries)} entries reported)"
        )
    return CoopJointDevice(be, e, sg)


def run_joint_coop(case: JointCase, backend, seed: int, session_coop=None, **kw):
    """Gate on the device's reported properties (:func:`coop_joint_device`),
    then run and judge the case with the ordinary joint_matrix runner
    through the device view."""
    return run_joint(case, coop_joint_device(case, backend, session_coop), seed, **kw)
