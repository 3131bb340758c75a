"""joint_matrix on a real device through cooperative matrix.

SYCL implementations lower ``joint_matrix_mad`` to SPIR-V cooperative-matrix
MulAdd (``SPV_KHR_cooperative_matrix``; spec-digest 4.1 and 5.2).  A backend
that reports VkCooperativeMatrixPropertiesKHR entries (``coop_entries()`` ->
(entries, subgroup size), the cooperative-matrix room's Vulkan backend)
realizes every joint_matrix mad combination of spec-digest 5.3 whose
(M, N, K, A, B, C, D) equals a reported, non-saturating, subgroup-scope
entry.  The SYCL memory side (layouts row_major / col_major /
ext_intel_packed, strides) has no cooperative-matrix counterpart for the
packed layout, so it is done on the host: the emulator's joint_matrix
load/store address generator reads the operands out of the SYCL memory
images and writes D back; the device does the multiply-accumulate
(``cts.families.coop_run.coop_muladd``).  The verdict is the same as on the
emulator (``joint_run.run_joint``: Rules I / E / R / F, padding check).

Everything else skips with a reason naming what is missing: no
cooperative-matrix entry point on the backend, no matching property, or a
saturating-only entry.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from cts.backends.emu_joint import JointEmulation

from .joint import COMBOS, JointCase, _canonical, _mad_tiers

__all__ = ["coop_cases", "run_joint_coop", "CoopJointDevice", "matching_entry"]


def coop_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """Current-API mad combinations, one case per distinct (types, shape,
    tier) over all architectures (the first architecture names it).  Only
    power-of-two M, N, K: the shapes a cooperative-matrix property can be
    expected to list (spec-digest 4.3); the other M of the "M<=8" rows run
    on the emulator (test_joint_matrix)."""
    seen = set()
    out = []
    for arch, a, b, c, d, shapes, note in COMBOS:
        for M, N, K in shapes:
            if any(x & (x - 1) for x in (M, N, K)):
                continue
            for tier in _mad_tiers(d, a, tiers):
                key = (a, b, c, d, M, N, K, tier)
                if key in seen:
                    continue
                seen.add(key)
                lay = _canonical(arch, "cur", a)
                out.append(
                    JointCase(
                        arch,
                        "cur",
                        "mad",
                        (a, b, c, d),
                        M,
                        N,
                        K,
                        "mad",
                        lay,
                        "tight",
                        tier,
                        note,
                        family="joint_matrix_coop",
                    )
                )
    return out


def matching_entry(entries, case: JointCase):
    """The reported entry that realizes this mad exactly, or None."""
    a, b, c, d = case.types
    for e in entries:
        if (e.M, e.N, e.K, e.A, e.B, e.C, e.R) == (case.M, case.N, case.K, a, b, c, d):
            if not e.sat and e.scope == "subgroup":
                return e
    return None


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
        muladd = self._muladd
        if muladd is None:
            from cts.families.coop_run import coop_muladd as muladd  # the coop family's public entry

        a, b, c, d = case.types
        la, lb, lc, ld = case.layouts
        h = self._host
        A = h._jm_load(kw["a"], la, case.M, case.K, a, kw["sa"])
        B = h._jm_load(kw["b"], lb, case.K, case.N, b, kw["sb"])
        C = h._jm_load(kw["c"], lc, case.M, case.N, c, kw["sc"])
        D = muladd(self.backend, self.entry, A, B, C, sg=self.sg)
        return h._jm_store(kw["d"], np.asarray(D), ld, d, kw["sd"])


def run_joint_coop(case: JointCase, cts) -> None:
    """Gate on the device's reported properties, then check the case with
    the ordinary joint_matrix runner through :class:`CoopJointDevice`."""
    from cts.plugin import CaseRunner

    from .joint_run import run_joint

    be = cts.backend
    if hasattr(be, "coop_entries"):
        got = be.coop_entries()
    elif hasattr(be, "run_coop_matrix"):
        # The emulator plays a cooperative-matrix device with the session's
        # property profile (--coop-profile, default h100): the same gate and
        # the same coop_muladd path as a real driver.
        from cts.coop_plugin import coop_state

        entries, sg, _apis, _source = coop_state()
        got = (entries, sg)
    else:
        pytest.skip(
            f"backend {be.name!r} reports no cooperative-matrix properties (coop_entries); "
            "joint_matrix mad runs on a device only through VK_KHR_cooperative_matrix (--backend vulkan)"
        )
    if got is None:
        why = getattr(be, "reason", None) or (
            "the device reports no cooperative-matrix variants: no VK_KHR_cooperative_matrix / "
            "cl_khr_cooperative_matrix properties"
        )
        pytest.skip(
            f"backend {be.name!r}: no cooperative-matrix properties to realize joint_matrix with ({why})"
        )
    entries, sg = got
    if "tf32" in case.types:
        pytest.skip(
            "tf32 joint_matrix has no cooperative-matrix counterpart: VkComponentTypeKHR lists no tf32 "
            "component type (spec-digest 4.3), so no reported property can realize it"
        )
    e = matching_entry(entries, case)
    if e is None:
        a, b, c, d = case.types
        pytest.skip(
            f"device reports no non-saturating subgroup-scope cooperative-matrix property "
            f"M={case.M} N={case.N} K={case.K} A={a} B={b} C={c} Result={d} "
            f"({len(entries)} entries reported)"
        )
    h2 = copy.copy(cts.h)
    h2.backend = CoopJointDevice(be, e, sg)
    CaseRunner(h2, cts.item).check(case, run_joint)
