"""The rotate family's shortcuts give what the long way gives.

* The emulator computes all launches of a case in one call
  (``run_subgroup_rotate_launches``): each launch's result is the one a call
  for that launch alone returns, with every fault.
* The run flow works out once per subgroup size, cluster, rule and launches
  what does not depend on the data (``_plan``): its sources are the
  reference's for the map a device of consecutive subgroups reports.
* A device reporting a usable map of its own (not that one) is judged from
  its own map, as before: the same verdict as the usual map up to the
  subgroup numbers it names.
"""

import re
from dataclasses import replace

import numpy as np
import pytest

from cts.backends.emu_rotate import ROTATE_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.rotate import rotate_cases, rotate_launches
from cts.runs.rotate import _plan, rotate_values, run_rotate
from reference.rotate import expected_rotation

SEED = 4
# every api, cluster kind, vector width and partial-subgroup shape, few sizes
CASES = [c for c in rotate_cases() if c.sg in (4, 16) and c.type in ("uchar", "half", "ulong", "bool")]


def _operands(case, rng) -> list[dict]:
    return [
        {
            "values": rotate_values(case, ln.groups, ln.local, rng),
            "deltas": np.array([d for _, d in ln.deltas], dtype=np.int64),
            "const": np.array(ln.const, dtype=np.int32),
        }
        for ln in rotate_launches(case)
    ]


@pytest.mark.parametrize("fault", ["", *ROTATE_FAULTS])
def test_launches_in_one_call_are_the_launches_one_by_one(fault):
    dev = EmulatorBackend((fault,) if fault else ())
    rng = np.random.default_rng(SEED)
    for case in CASES:
        ops = _operands(case, rng)
        together = dev.run_subgroup_rotate_launches(case, ops)
        assert len(together) == len(ops) == 2
        for op, got in zip(ops, together):
            alone = dev.run_subgroup_rotate(case, **op)
            assert set(got) == set(alone)
            for k in alone:
                assert np.array_equal(got[k], alone[k]), (case.id, fault, k)


def test_plan_sources_are_the_references_for_the_usual_map():
    dev = EmulatorBackend()
    rng = np.random.default_rng(SEED)
    configs = {(c.api, c.sg, c.cluster): c for c in rotate_cases() if c.type == "uint" and c.width == 1}
    for case in configs.values():
        launches = rotate_launches(case)
        plan = _plan(case.sg, case.cluster, case.rule, tuple(launches))
        for i, (ln, op) in enumerate(zip(launches, _operands(case, rng))):
            res = dev.run_subgroup_rotate(case, **op)
            G, L = ln.groups, ln.local
            vals = op["values"].reshape(G * L, 1)
            exp, checked, src = expected_rotation(
                vals,
                (np.arange(G)[:, None] * L + res["sg_id"]).reshape(-1),
                res["sg_lid"].reshape(-1),
                res["sg_size"].reshape(-1),
                res["sg_max"].reshape(-1),
                np.repeat(op["deltas"], L),
                case.cluster or None,
                case.rule,
            )
            lo, hi = plan.base[i], plan.base[i + 1]
            assert np.array_equal(plan.checked[lo:hi], checked), case.id
            assert np.array_equal(plan.src[lo:hi], src), case.id
            assert (plan.index[lo:hi][~checked] == plan.base[-1]).all()
            assert np.array_equal(vals[plan.index[lo:hi][checked] - lo], exp[checked]), case.id


def test_cached_things_are_read_only_and_launch_lists_fresh():
    case = next(c for c in rotate_cases() if c.id == "spirv-uint-sg8-c2")
    a, b = rotate_launches(case), rotate_launches(case)
    assert a == b and a is not b
    a.clear()
    assert len(rotate_launches(case)) == 2
    plan = _plan(case.sg, case.cluster, case.rule, tuple(b))
    for arr in (plan.index, plan.checked, plan.src, *plan.deltas, *plan.const):
        assert not arr.flags.writeable
    res = run_rotate(case, EmulatorBackend(), SEED)
    assert res.verdict.passed and res.expected.flags.writeable


class _OwnMap(EmulatorBackend):
    """The emulator, reporting subgroup ids from 3 up (a usable map, not the
    usual one), in plain writable arrays; launches one by one."""

    def run_subgroup_rotate(self, case, values, deltas, const=None):
        res = {k: np.array(v) for k, v in super().run_subgroup_rotate(case, values, deltas, const).items()}
        res["sg_id"] += 3
        return res


class _Copies(EmulatorBackend):
    """The emulator's usual map in writable copies (no broadcast arrays)."""

    def run_subgroup_rotate(self, case, values, deltas, const=None):
        return {k: np.array(v) for k, v in super().run_subgroup_rotate(case, values, deltas, const).items()}


@pytest.mark.parametrize("fault", ["", "rotate_direction_reversed", "rotate_modulo_current_size"])
def test_a_map_of_the_devices_own_is_judged_from_that_map(fault):
    faults = (fault,) if fault else ()
    for case in CASES:
        usual = run_rotate(case, EmulatorBackend(faults), SEED).verdict
        copies = run_rotate(case, _Copies(faults), SEED).verdict
        own = run_rotate(case, _OwnMap(faults), SEED).verdict
        assert copies.as_dict() == usual.as_dict(), case.id
        assert (own.passed, own.elements, own.failures, own.notes) == (
            usual.passed,
            usual.elements,
            usual.failures,
            usual.notes,
        ), case.id
        assert len(own.mismatches) == len(usual.mismatches)
        for m, u in zip(own.mismatches, usual.mismatches):
            assert replace(m, hint="") == replace(u, hint=""), case.id
            three_up = re.sub(r", subgroup (\d+) lane", lambda x: f", subgroup {int(x[1]) + 3} lane", u.hint)
            assert m.hint == three_up != u.hint, case.id
