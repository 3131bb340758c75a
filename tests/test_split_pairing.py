"""Split MMA with 2, 4 and 8 subgroups per work-group: the
pairing rule (``reference.intel.split_pairings``), the pairing-agnostic
oracle (``cts.runs.split``), the pairing faults and which cases catch them,
and the shipped prelude on Intel's CPU runtime.

``pytest tests/test_split_pairing.py -s`` prints the fault table.
"""

from __future__ import annotations

import numpy as np
import pytest
from tabulate import tabulate

from cts.backends.emulator import EmulatorBackend
from cts.families.intel import intel_split_cases
from cts.kernels.opencl_c import intel_split_kernel
from cts.runs.intel import run_intel_mma
from cts.runs.split import split_subgroups
from reference.data import TIERS
from reference.intel import split_pairings

SEED = 1
SUBGROUPS = 8
PAIRING_FAULTS = ("split_pair_with_itself", "split_pair_across_workgroups")


# ------------------------------------------------------------- the rule
def _tables(S: int, uses: dict[int, tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """top_ok / bot_ok of a device where subgroup u computed with the A halves
    of uses[u] = (first, second)."""
    top, bot = np.zeros((S, S), bool), np.zeros((S, S), bool)
    for u, (x, y) in uses.items():
        top[x, u] = bot[y, u] = True
    return top, bot


def test_rule_accepts_any_mutual_pairing_in_either_order():
    proposed = {0: (0, 1), 1: (0, 1), 2: (2, 3), 3: (2, 3)}
    assert split_pairings(*_tables(4, proposed), 4) == [[(0, 1), (2, 3)]]
    crossed = {0: (2, 0), 2: (2, 0), 1: (3, 1), 3: (3, 1)}  # (0,2) and (1,3), the higher id first
    assert split_pairings(*_tables(4, crossed), 4) == [[(2, 0), (3, 1)]]


@pytest.mark.parametrize(
    "uses, why",
    [
        ({0: (0, 1), 1: (0, 1), 2: (2, 2), 3: (3, 3)}, "with itself"),
        ({0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (3, 0)}, "not mutual"),
        ({0: (0, 1), 1: (0, 1), 2: (2, 3), 3: (2, 3), 4: (4, 5), 5: (4, 5), 6: (2, 6), 7: (7, 6)}, "across"),
        ({0: (0, 1), 1: (1, 0), 2: (2, 3), 3: (2, 3)}, "orders differ"),
    ],
)
def test_rule_refuses_illegal_pairings(uses, why):
    S = max(uses) + 1
    got = split_pairings(*_tables(S, uses), 4)
    assert None in got, why


# ------------------------------------------------------- the fault table
def _failed(backend, cases) -> list:
    return [c for c in cases if not run_intel_mma(c, backend, SEED, subgroups=SUBGROUPS).verdict.passed]


@pytest.fixture(scope="module")
def catches():
    cases = intel_split_cases(TIERS)
    table = {f: _failed(EmulatorBackend((f,)), cases) for f in PAIRING_FAULTS}
    rows = [
        [f, len(v), len([c for c in v if c.wg == 4]), len([c for c in v if c.wg == 8]), len(cases)]
        for f, v in table.items()
    ]
    print("\n" + tabulate(rows, headers=["fault", "failed", "wg4", "wg8", "split cases"], tablefmt="github"))
    return table


def test_the_clean_emulator_passes_every_split_case():
    assert _failed(EmulatorBackend(), intel_split_cases(TIERS)) == []


@pytest.mark.e2e
@pytest.mark.parametrize("fault", PAIRING_FAULTS)
def test_pairing_faults_are_caught_by_exactly_the_new_cases(fault, catches):
    """Every wg4 and wg8 case fails; no case with two subgroups per work-group
    (where the pairing is forced) does, nor any other family's (the faults
    act only in run_intel_split_mma)."""
    want = {c.id for c in intel_split_cases(TIERS) if c.wg > 2}
    assert {c.id for c in catches[fault]} == want


@pytest.mark.parametrize(
    "fault, said",
    [
        ("split_pair_with_itself", "(paired with itself)"),
        ("split_pair_across_workgroups", "paired across work-groups with sg 10 (work-group 1, subgroup 2)"),
    ],
)
def test_the_verdict_names_the_wrong_pairing(fault, said):
    case = next(c for c in intel_split_cases(("random",)) if c.wg == 8 and c.a == "i8" and c.M == 4)
    v = run_intel_mma(case, EmulatorBackend((fault,)), SEED, subgroups=SUBGROUPS).verdict
    assert not v.passed
    assert said in v.mismatches[0].hint and "sg 2 (work-group 0, subgroup 2)" in v.mismatches[0].hint
    assert any(n.startswith("no pairing explains work-group(s) 0, 1") for n in v.notes), v.notes


# -------------------------------------------- other legal / illegal devices
class _Pairing(EmulatorBackend):
    """An emulator pairing its subgroups by a rule given as j -> (first, second)."""

    def __init__(self, rule):
        super().__init__()
        self.rule = rule

    def _split_partners(self, groups, j):
        first, second = self.rule(j)
        return (groups, first), (groups, second)


def _half_apart_high_first(j: int, wg: int):
    """Pairs (j, j + wg/2), the higher subgroup passing rows 0..M/2-1."""
    low = j % (wg // 2)
    return low + wg // 2, low


@pytest.mark.parametrize("wg", [4, 8])
def test_another_legal_pairing_passes_and_is_reported(wg):
    dev = _Pairing(lambda j: _half_apart_high_first(j, wg))
    cases = [c for c in intel_split_cases(TIERS) if c.wg == wg]
    assert _failed(dev, cases) == []
    v = run_intel_mma(cases[0], dev, SEED, subgroups=SUBGROUPS).verdict
    want = " ".join(f"({j + wg // 2},{j})" for j in range(wg // 2))
    assert f"every work-group of {wg} subgroups {want}" in v.notes[-1], v.notes


def test_partners_that_do_not_pair_back_fail():
    dev = _Pairing(lambda j: (j, (j + 1) % 4))  # 0 takes 1's half, 1 takes 2's, ...
    case = next(c for c in intel_split_cases(("exact",)) if c.wg == 4 and c.a == "u8")
    v = run_intel_mma(case, dev, SEED, subgroups=SUBGROUPS).verdict
    assert not v.passed
    assert "which does not pair back (not mutual)" in " ".join(v.notes), v.notes


def test_launch_sizes():
    assert [split_subgroups(s, 2) for s in (2, 8, 32)] == [2, 8, 32]  # the wg2 launches of before
    assert [split_subgroups(s, 4) for s in (2, 8, 12, 32)] == [8, 8, 16, 32]
    assert [split_subgroups(s, 8) for s in (2, 8, 32)] == [16, 16, 32]


def test_kernel_work_groups():
    wg2, wg8 = (next(c for c in intel_split_cases(("exact",)) if c.wg == w) for w in (2, 8))
    k2, k8 = intel_split_kernel(wg2, 32), intel_split_kernel(wg8, 32)
    assert k2.local_size == (16,) and k8.local_size == (64,) and k8.global_size == (256,)
    assert "(get_group_id(0) * 2 + get_sub_group_id()) * 8" in k2.source  # the kernel of before
    assert "(get_group_id(0) * 8 + get_sub_group_id()) * 8" in k8.source


# ------------------------------------------------- Intel's CPU runtime
@pytest.fixture(scope="module")
def intel_prelude(tmp_path_factory):
    pytest.importorskip("pyopencl")
    from cts.backends import BackendError, make_backend

    try:
        be = make_backend(
            "opencl",
            device="Intel",
            opencl_prelude="builtin",
            opencl_cache_dir=str(tmp_path_factory.mktemp("cl")),
        )
    except (BackendError, ValueError) as e:
        pytest.skip(f"no Intel OpenCL device: {e}")
    yield be
    be.close()


@pytest.mark.parametrize("wg", [4, 8])
def test_the_shipped_prelude_pairs_legally_on_the_intel_runtime(intel_prelude, wg):
    """The layered split built-ins pair sub-groups 2p and 2p+1 of any
    even-sized work-group (cts/kernels/intel_mma_prelude.cl)."""
    for case in (
        c for c in intel_split_cases(("random",)) if c.wg == wg and c.M == 8 and c.a in ("i8", "bf16")
    ):
        v = run_intel_mma(case, intel_prelude, SEED, subgroups=SUBGROUPS).verdict
        assert v.passed, v.summary()
        assert f"every work-group of {wg} subgroups (0,1) (2,3)" in v.notes[-1]
