"""The subgroup built-ins family: its case space, its judge on the patterns
real drivers reported, and a mutation proof (every named fault of the
emulator fails the cases it should, naming the built-in it broke)."""

import numpy as np
import pytest

from cts.backends.emu_subgroup_builtins import SGB_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.subgroup_builtins import builtins_launches, subgroup_builtins_cases
from cts.runs.subgroup_builtins import COLUMNS, expected_builtins, run_subgroup_builtins

CASES = subgroup_builtins_cases()


def test_case_space_is_api_by_size_by_shape():
    assert len(CASES) == 20
    assert len({c.id for c in CASES}) == 20
    assert {"opencl_c-sg8-partial", "spirv-sg64-full"} <= {c.id for c in CASES}
    part = [c for c in CASES if c.id == "opencl_c-sg8-partial"][0]
    assert [(ln.local, ln.tail) for ln in builtins_launches(part)] == [(20, 4), (22, 6)]
    full = [c for c in CASES if c.id == "spirv-sg16-full"][0]
    assert [(ln.local, ln.tail) for ln in builtins_launches(full)] == [(64, 0)]
    assert "BuiltIn SubgroupSize" in full.spec_row and "get_sub_group_size()" in part.spec_row


def _consecutive(L: int, N: int) -> np.ndarray:
    """What a correct device forming subgroups of N consecutive items reports (1, L, 5)."""
    i = np.arange(L)
    size = np.minimum(N, L - (i // N) * N)
    return np.stack([size, i // N, i % N, np.full(L, -(-L // N)), np.full(L, N)], axis=-1)[None]


def _wrong_columns(info, N):
    _, ok = expected_builtins(info, N)
    return {COLUMNS[c] for c in range(ok.shape[-1]) if not ok[..., c].all()}


def test_judge_accepts_a_correct_map_and_any_subgroup_order():
    assert _wrong_columns(_consecutive(20, 8), 8) == set()
    info = _consecutive(20, 8)[:, ::-1].copy()  # the same subgroups, listed backwards
    assert _wrong_columns(info, 8) == set()


def test_judge_names_the_size_built_in_on_rusticls_partial_subgroup():
    """Mesa rusticl 26.1.6 (llvmpipe), work-group of 20: sizes 8, 8, 8 for subgroups of 8, 8, 4."""
    info = _consecutive(20, 8)
    info[0, 16:, 0] = 8
    assert _wrong_columns(info, 8) == {"size"}
    exp, ok = expected_builtins(info, 8)
    assert (~ok[0, :, 0]).nonzero()[0].tolist() == [16, 17, 18, 19] and (exp[0, 16:, 0] == 4).all()


def test_judge_names_the_count_built_in_on_pocls_partial_subgroup():
    """PoCL 6.0, work-group of 20 at required size 8: ids 0, 1, 2, but 2 subgroups and size 8 everywhere."""
    info = _consecutive(20, 8)
    info[0, :, 3] = 2
    info[0, 16:, 0] = 8
    assert _wrong_columns(info, 8) == {"size", "num"}


@pytest.mark.parametrize(
    "edit, wrong",
    [
        (lambda x: x.__setitem__((0, 3, 2), 2), {"local_id"}),  # a local id twice
        (lambda x: x.__setitem__((0, slice(8, 16), 1), 3), {"id"}),  # ids 0, 3, 2
        (lambda x: x.__setitem__((0, slice(None), 4), 16), {"max"}),
    ],
)
def test_judge_names_each_built_in(edit, wrong):
    info = _consecutive(20, 8)
    edit(info)
    assert _wrong_columns(info, 8) == wrong


def test_judge_rejects_subgroups_smaller_than_the_required_size():
    """Subgroups of 4 that say so consistently, at required size 8: only the membership rule sees it."""
    info = _consecutive(16, 4)
    info[..., 4] = 8
    assert _wrong_columns(info, 8) == {"membership"}


def test_clean_emulator_passes_every_case():
    b = EmulatorBackend()
    bad = [c.id for c in CASES if not run_subgroup_builtins(c, b, 1).verdict.passed]
    assert bad == []


# fault -> (shapes it must fail, the built-in the verdict must name)
CAUGHT = {
    "sgb_partial_size_is_max": ({"partial"}, ("get_sub_group_size()", "BuiltIn SubgroupSize")),
    "sgb_num_ignores_partial": ({"partial"}, ("get_num_sub_groups()", "BuiltIn NumSubgroups")),
    "sgb_local_id_from_one": ({"full", "partial"}, ("get_sub_group_local_id()", "SubgroupLocalInvocationId")),
    "sgb_id_from_one": ({"full", "partial"}, ("get_sub_group_id()", "BuiltIn SubgroupId")),
    "sgb_max_is_current": ({"partial"}, ("get_max_sub_group_size()", "BuiltIn SubgroupMaxSize")),
    "sgb_half_size_subgroups": ({"full", "partial"}, ("subgroup membership",)),
}


def test_every_fault_has_an_expectation():
    assert set(CAUGHT) == set(SGB_FAULTS)


@pytest.mark.parametrize("fault", list(SGB_FAULTS))
def test_fault_fails_its_shapes_naming_the_built_in(fault):
    shapes, names = CAUGHT[fault]
    b = EmulatorBackend((fault,))
    for c in CASES:
        v = run_subgroup_builtins(c, b, 1).verdict
        assert v.passed == (c.shape not in shapes), (fault, c.id)
        if not v.passed:
            said = " ".join(v.notes) + " ".join(m.hint for m in v.mismatches)
            assert any(n in said for n in names), (fault, c.id, v.notes)
