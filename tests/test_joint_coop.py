"""The device path of joint_matrix (cts/runs/joint_coop.py): matching a
joint_matrix mad combination to a reported cooperative-matrix property, and
the host-side SYCL layouts around a device MulAdd.

The device MulAdd is replaced here by small stand-ins (a correct one and
wrong ones) so the plumbing is proven without a GPU; on a GPU the
cooperative-matrix family's ``coop_muladd`` is used.
"""

from dataclasses import dataclass

import numpy as np
import pytest

from cts.families.joint import COMBOS, JointCase, matching_entry
from cts.families.joint import joint_coop_cases as coop_cases
from cts.runs.joint import run_joint
from cts.runs.joint_coop import CoopJointDevice
from reference.data import TIERS


@dataclass(frozen=True)
class Entry:  # the fields of VkCooperativeMatrixPropertiesKHR the matcher reads
    M: int
    N: int
    K: int
    A: str
    B: str
    C: str
    R: str
    sat: bool = False
    scope: str = "subgroup"


H100_LIKE = [
    Entry(16, 16, 16, "f16", "f16", "f16", "f16"),
    Entry(16, 16, 16, "f16", "f16", "f32", "f32"),
    Entry(16, 16, 32, "i8", "i8", "i32", "i32"),
    Entry(16, 16, 16, "bf16", "bf16", "f32", "f32"),
    Entry(16, 16, 16, "f16", "f16", "f32", "f16", sat=True),
]


def good_muladd(backend, e, A, B, C, sg):
    with np.errstate(invalid="ignore", over="ignore"):
        return (A[:, :, :, None] * B[:, None, :, :]).sum(axis=2) + C


def no_acc_muladd(backend, e, A, B, C, sg):
    return good_muladd(backend, e, A, B, np.zeros_like(C), sg)


def transposed_b_muladd(backend, e, A, B, C, sg):
    return good_muladd(backend, e, A, B.transpose(0, 2, 1), C, sg)


def _case(types, M, N, K, tier, layouts):
    return JointCase("xmx16", "cur", "mad", types, M, N, K, "mad", layouts, "pad", tier)


def test_matching_is_exact_and_ignores_saturating_entries():
    f16f32 = _case(("f16", "f16", "f32", "f32"), 16, 16, 16, "exact", ("row", "packed", "row", "row"))
    assert matching_entry(H100_LIKE, f16f32) == H100_LIKE[1]
    mixed = _case(("f16", "f16", "f32", "f16"), 16, 16, 16, "exact", ("row", "row", "row", "row"))
    assert matching_entry(H100_LIKE, mixed) is None  # only a saturating entry has these types
    small = _case(("f16", "f16", "f32", "f32"), 8, 16, 16, "exact", ("row", "row", "row", "row"))
    assert matching_entry(H100_LIKE, small) is None


def test_coop_catalog_covers_matching_rows():
    cases = coop_cases(TIERS)
    assert len({c.id for c in cases}) == len(cases)
    hits = {c.types for c in cases if matching_entry(H100_LIKE, c)}
    assert ("f16", "f16", "f32", "f32") in hits and ("bf16", "bf16", "f32", "f32") in hits
    assert all(not (c.M & (c.M - 1)) for c in cases)
    assert {c.arch for c in cases} >= {a for a, *_ in COMBOS if a != "amx"}


LAYOUTS = [("row", "packed", "row", "row"), ("col", "col", "col", "row"), ("row", "row", "row", "col")]


@pytest.mark.parametrize("layouts", LAYOUTS)
@pytest.mark.parametrize("tier", ["exact", "onehot", "random"])
def test_host_layouts_around_a_correct_device_pass(layouts, tier):
    case = _case(("f16", "f16", "f32", "f32"), 16, 16, 16, tier, layouts)
    dev = CoopJointDevice(None, H100_LIKE[1], 32, muladd=good_muladd)
    assert run_joint(case, dev, 1, subgroups=4).verdict.passed


@pytest.mark.parametrize("wrong", [no_acc_muladd, transposed_b_muladd])
def test_wrong_device_muladd_is_caught(wrong):
    case = _case(("f16", "f16", "f32", "f32"), 16, 16, 16, "onehot", ("row", "packed", "row", "row"))
    dev = CoopJointDevice(None, H100_LIKE[1], 32, muladd=wrong)
    assert not run_joint(case, dev, 1, subgroups=4).verdict.passed


@pytest.mark.parametrize("tier", ["exact", "onehot", "random", "special"])
def test_through_the_cooperative_matrix_family_entry(tier):
    """End to end with the cooperative-matrix family's own ``coop_muladd``
    on the emulator (its run_coop_matrix plays the device)."""
    from cts.backends.emulator import EmulatorBackend
    from cts.families.coop import CoopEntry

    entry = CoopEntry(16, 16, 16, "f16", "f16", "f32", "f32")
    case = _case(("f16", "f16", "f32", "f32"), 16, 16, 16, tier, ("row", "packed", "row", "col"))
    assert matching_entry([entry], case) == entry
    dev = CoopJointDevice(EmulatorBackend(), entry, 32)
    assert run_joint(case, dev, 1, subgroups=4).verdict.passed
    wrong = CoopJointDevice(EmulatorBackend(("coop_acc_ignored",)), entry, 32)
    if tier != "special":  # NaN/inf accumulators can hide a dropped C
        assert not run_joint(case, wrong, 1, subgroups=4).verdict.passed


@pytest.mark.e2e
def test_every_realizable_coop_case_runs_on_the_emulator():
    """Each of the device-path cases (all but tf32, which no cooperative-matrix
    component type can express) runs through the cooperative-matrix family's
    coop_muladd on the emulator with an entry of its own (M, N, K, types) and
    passes, so no combination of the catalog is left to the device alone."""
    from cts.backends.emulator import EmulatorBackend
    from cts.families.coop import CoopEntry

    be = EmulatorBackend()
    cases = [c for c in coop_cases(TIERS) if "tf32" not in c.types]
    assert len(cases) > 500
    bad = []
    for c in cases:
        entry = CoopEntry(c.M, c.N, c.K, *c.types)
        assert matching_entry([entry], c) == entry
        if not run_joint(c, CoopJointDevice(be, entry, 32), 1, subgroups=2).verdict.passed:
            bad.append(c.id)
    assert bad == []
