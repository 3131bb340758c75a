"""Mutation proof for joint_matrix: the clean emulator passes every case of
the catalog, and each named fault of the joint_matrix emulator mixin makes
at least one case fail -- the one the fault targets.

Runs in-process with few tiles per case.  Cases are interleaved across
operations so a fault is met early; the fault -> first catching case table
is printed (``pytest tests/test_joint_mutations.py -s``).
"""

from collections import defaultdict
from itertools import zip_longest

import numpy as np
import pytest

from cts.backends.emu_joint import JOINT_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.joint import joint_cases
from cts.runs.joint import run_joint
from reference.data import TIERS
from tests.mutation import Mutations

SEED = 1
TILES = 4

# the operation each fault must be caught by (the one that exercises it)
TARGET = {
    "joint_packed_as_row": "mad",
    "joint_stride_ignored": "ldst",
    "joint_col_major_transposed_twice": "mad",
    "joint_vnni_factor_wrong": "mad",
    "joint_checked_no_zero_fill": "load_checked",
    "joint_checked_store_not_dropped": "store_checked",
    "joint_apply_coords_swapped": "apply",
    "joint_apply_packed_coords": "apply",
    "joint_store_overwrites_gaps": "ldst",
    "joint_d_as_c_type": "mad",
    "joint_copy_reinterprets": "copy",
    "joint_packed_a_as_packed_b": "mad",
}


def _interleaved():
    by_op = defaultdict(list)
    for c in joint_cases(TIERS):
        by_op[c.op].append(c)
    out = []
    for group in zip_longest(*by_op.values()):
        out += [c for c in group if c is not None]
    return out


CASES = _interleaved()


def test_every_fault_has_a_target():
    assert set(TARGET) == set(JOINT_FAULTS)


JOINT = Mutations("joint_matrix", lambda c, be: run_joint(c, be, SEED, subgroups=TILES))


@pytest.mark.e2e
def test_clean_emulator_passes_every_case():
    JOINT.assert_clean(CASES)


@pytest.fixture(scope="module")
def first_catch():
    return JOINT.first_kills(JOINT_FAULTS, lambda fault: [c for c in CASES if c.op == TARGET[fault]])


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(JOINT_FAULTS))
def test_fault_is_caught_by_its_target_operation(fault, first_catch):
    assert first_catch[fault], f"fault {fault!r} not caught by any {TARGET[fault]} case"


# ------------------------------------------- legal deviations must pass
class _LegalJointDevice(EmulatorBackend):
    """A joint_matrix device doing what SYCL 5.2 leaves open: ``ftz`` flushes
    subnormal mad inputs to zero (no spec rules on subnormals); ``acc16``
    accumulates in the 16-bit C/D type, rounding after every product (the
    internal precision is open).  The default profile must pass both."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self._types = None

    def run_joint_matrix(self, case, **kw):
        self._types = case.types if case.op == "mad" else None
        return super().run_joint_matrix(case, **kw)

    def _jm_mad(self, A, B, C, is_int):
        if is_int or self._types is None:
            return super()._jm_mad(A, B, C, is_int)
        from reference.dtypes import etype
        from reference.tolerance import flush_subnormals

        a, b, c, d = self._types
        if self.mode == "ftz":
            A, B, C = (flush_subnormals(X, etype(t)) for X, t in ((A, a), (B, b), (C, c)))
            return super()._jm_mad(A, B, C, is_int)
        acc = next((t for t in (c, d) if etype(t).bits == 16), None)
        if acc is None:
            return super()._jm_mad(A, B, C, is_int)
        r = etype(acc).round
        s = r(np.asarray(C, dtype=np.float64))
        with np.errstate(invalid="ignore", over="ignore"):
            for k in range(A.shape[2]):
                s = r(s + A[:, :, k, None] * B[:, None, k, :])
        return s


@pytest.mark.parametrize("mode, tiers", [("ftz", ("special",)), ("acc16", ("rounding", "random"))])
def test_a_legal_joint_device_passes_the_default_profile(mode, tiers):
    be = _LegalJointDevice(mode)
    cases = [c for c in CASES if c.op == "mad" and c.tier in tiers]
    assert cases
    JOINT.assert_clean(cases, be)
