"""The rotate oracle on a device whose size built-in is wrong in partial
subgroups (Mesa rusticl 26.1: get_sub_group_size() returns 8 in a partial
last subgroup of 4): the rotate is judged on the subgroups the ids form,
full and partial, with a note naming the built-in; a rotate defect is still
caught there; a defect of a built-in the oracle needs (the local id) is a
"could not run" that names it."""

import numpy as np
import pytest

from cts.backends.emulator import EmulatorBackend
from cts.errors import CaseError
from cts.families.rotate import rotate_cases
from cts.runs.rotate import run_rotate

CASES = [
    c for c in rotate_cases() if c.sg == 8 and c.width == 1 and c.type in ("int", "half") and c.dbits == 32
]


def test_slice_has_both_apis_and_clusters():
    assert {c.api for c in CASES} == {"opencl_c", "spirv"} and len(CASES) >= 20


def test_wrong_partial_size_alone_leaves_every_rotate_case_passing_with_the_built_in_named():
    b = EmulatorBackend(("sgb_partial_size_is_max",))
    for c in CASES:
        v = run_rotate(c, b, 1).verdict
        assert v.passed, (c.id, v.summary())
        name = "get_sub_group_size()" if c.api == "opencl_c" else "BuiltIn SubgroupSize"
        said = [n for n in v.notes if name in n]
        assert len(said) == 2, (c.id, v.notes)  # one per launch (partial subgroups of 4 and 6)
        assert f"subgroup_builtins[{c.api}-sg8-partial]" in said[0]


@pytest.mark.parametrize("fault", ["rotate_direction_reversed", "rotate_modulo_current_size"])
def test_rotate_defects_are_still_caught_beside_the_wrong_size(fault):
    """rotate_modulo_current_size differs from the rule only in partial
    subgroups: caught means they are judged, not skipped."""
    b = EmulatorBackend(("sgb_partial_size_is_max", fault))
    failed = [c.id for c in CASES if not run_rotate(c, b, 1).verdict.passed]
    assert failed, fault
    if fault == "rotate_modulo_current_size":
        assert all(c.endswith("-rotate") or "-nonuniform" in c for c in failed), failed


class _LocalIdTwice(EmulatorBackend):
    """The emulator, but the last work-item of each partial subgroup repeats its neighbour's local id."""

    def run_subgroup_rotate(self, case, values, deltas, const=None):
        r = dict(super().run_subgroup_rotate(case, values, deltas, const))
        lid = np.array(r["sg_lid"])
        lid[:, -1] = lid[:, -2]
        r["sg_lid"] = lid
        return r


def test_a_wrong_local_id_is_a_could_not_run_naming_the_built_in():
    c = CASES[0]
    with pytest.raises(CaseError, match=r"get_sub_group_local_id\(\)|SubgroupLocalInvocationId"):
        run_rotate(c, _LocalIdTwice(), 1)
