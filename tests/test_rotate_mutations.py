"""Mutation proof for subgroup rotate: the clean emulator passes every
rotate case, and each named rotate fault of the emulator makes at least one
case fail (``pytest tests/test_rotate_mutations.py -s`` prints the table).

The fault runs use the subgroup-size-8 and 16 slices of the case space (every
type, vector width and cluster size occurs there) to stay fast.
"""

import re

import pytest

from cts.backends.emu_rotate import ROTATE_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.rotate import rotate_cases
from cts.runs.rotate import run_rotate
from tests.mutation import Mutations, assert_kills_only

SEED = 1
# a wrong verdict, or a case error (e.g. an unusable subgroup map)
ROTATE = Mutations("rotate", lambda c, be: run_rotate(c, be, SEED), errors_kill=True)


def test_clean_emulator_passes_every_rotate_case():
    ROTATE.assert_clean(rotate_cases())


@pytest.fixture(scope="module")
def catches():
    return ROTATE.kills(ROTATE_FAULTS, [c for c in rotate_cases() if c.sg in (8, 16)])


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(ROTATE_FAULTS))
def test_rotate_fault_is_caught(fault, catches):
    ROTATE.assert_killed(catches, fault)


@pytest.mark.e2e
def test_rotate_faults_are_caught_where_expected(catches):
    """The cases that target a fault catch it: clusters catch the cluster
    base, vectors the vector tail, long/ulong/double the high word, floats
    the subnormal flush, and both APIs catch the direction."""
    assert all("-c" in c for c in catches["rotate_cluster_base_wrong"])
    assert all(re.search(r"\d$", c.split("-")[1]) for c in catches["rotate_vector_tail_unrotated"])
    assert {re.sub(r"\d+$", "", c.split("-")[1]) for c in catches["rotate_long_high_word_lost"]} == {
        "long",
        "ulong",
        "double",
    }
    assert any(c.startswith("opencl_c-half") for c in catches["rotate_subnormal_flushed"])
    assert any(c.startswith("spirv") for c in catches["rotate_direction_reversed"])
    assert any(c.startswith("opencl_c") for c in catches["rotate_negative_delta_as_zero"])
    # a device ignoring the required subgroup size leaves nothing to compare: every case must say so
    assert len(catches["rotate_required_size_ignored"]) == len([c for c in rotate_cases() if c.sg in (8, 16)])


@pytest.mark.e2e
def test_modulo_current_size_is_caught_only_by_non_power_of_two_partial_subgroups(catches, monkeypatch):
    """A device that wraps the source lane around the current (partial)
    subgroup's size instead of the maximum size: every plain rotate case
    catches it, and only through its launch whose partial subgroup has 3N/4
    work-items.  With the power-of-two partial subgroups alone (N/2: the
    suite's earlier launches) the same fault passes every case."""
    import cts.runs.rotate as runs
    from cts.families.rotate import rotate_launches

    plain = [c.id for c in rotate_cases() if c.sg in (8, 16) and not c.cluster]
    assert sorted(catches["rotate_modulo_current_size"]) == sorted(plain)
    wrong = EmulatorBackend(("rotate_modulo_current_size",))
    case = next(c for c in rotate_cases() if c.id == "spirv-uint-sg16-rotate")
    v = run_rotate(case, wrong, SEED).verdict
    assert v.mismatches and all("partial subgroup of 12)" in m.hint for m in v.mismatches), v.mismatches[
        0
    ].hint
    monkeypatch.setattr(
        runs, "rotate_launches", lambda c: [ln for ln in rotate_launches(c) if ln.tail == c.sg // 2]
    )
    cases = [c for c in rotate_cases() if c.sg in (4, 8, 16, 32, 64) and not c.cluster]
    ROTATE.assert_clean(cases, wrong)


# faults of the newer axes, and the only cases that may catch them: each is caught by its
# new cases and by nothing older (the axis is what exposes it)
NEW_AXIS_FAULTS = {
    "rotate_vector_wide_tail_unrotated": lambda c: c.width in (8, 16),
    "rotate_delta64_high_word": lambda c: c.dbits == 64,
    "rotate_narrow_delta_as_zero": lambda c: c.dbits in (8, 16),
    "rotate_nonuniform_compacted": lambda c: c.flow == "nonuniform",
}
MUST_CATCH = {
    "rotate_vector_wide_tail_unrotated": ("spirv-float16-sg8-rotate", "spirv-uchar8-sg8-rotate"),
    "rotate_delta64_high_word": ("spirv-int-sg8-rotate-delta64", "spirv-int-sg8-c2-delta64"),
    "rotate_narrow_delta_as_zero": ("spirv-int-sg8-rotate-delta8", "spirv-int-sg8-rotate-delta16"),
    "rotate_nonuniform_compacted": ("opencl_c-int-sg8-rotate-nonuniform", "spirv-float-sg16-c4-nonuniform"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(NEW_AXIS_FAULTS))
def test_new_axis_faults_are_caught_only_by_their_new_cases(fault, catches):
    by_id = {c.id: c for c in rotate_cases()}
    assert_kills_only(catches[fault], fault, lambda i: NEW_AXIS_FAULTS[fault](by_id[i]), MUST_CATCH[fault])


def test_nonuniform_checks_active_reads_and_keeps_the_rest():
    """The emulator's branch is the family's (the kernels'), and a
    nonuniform case checks both kinds of lanes: executing lanes reading
    executing lanes, and lanes outside the branch (their own value); reads
    of lanes outside the branch are not checked."""
    import numpy as np

    from cts.backends.emu_rotate import _branch_active
    from cts.families.rotate import nonuniform_active

    lid = np.arange(64)
    assert np.array_equal(_branch_active(lid), nonuniform_active(lid))
    case = next(c for c in rotate_cases() if c.id == "spirv-int-sg16-rotate-nonuniform")
    v = run_rotate(case, EmulatorBackend(), SEED).verdict
    assert v.passed
    notes = " ".join(v.notes)
    assert "inactive lane (not checked)" in notes
    # a device that runs the rotate on every lane (ignoring the branch) fails on the lanes outside it
    uniform = type(case)(case.api, case.type, case.width, case.sg, case.cluster)

    class IgnoresBranch(EmulatorBackend):
        def run_subgroup_rotate(self, c, **kw):
            return super().run_subgroup_rotate(uniform, **kw)

    v = run_rotate(case, IgnoresBranch(), SEED).verdict
    assert not v.passed and all(int(m.hint.split(" lane ")[1].split()[0]) % 3 == 2 for m in v.mismatches)
