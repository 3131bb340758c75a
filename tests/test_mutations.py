"""Mutation proof for the Intel families: the clean emulator passes every
case, and each named fault of the Intel emulator makes at least one case fail.

Runs the cases in-process (the same runners the conformance tests use) with
fewer subgroups per case to stay fast; prints the fault -> catching-cases
table (``pytest tests/test_mutations.py -s`` shows it).
"""

from collections import defaultdict

import pytest
from tabulate import tabulate

from cts.backends.emulator import FAULTS, EmulatorBackend
from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from cts.runs.intel import run_intel_mma, run_tf32_convert
from reference.data import TIERS
from reference.tolerance import PROFILES

SEED = 1
SUBGROUPS = 8
# faults that the specs allow: a truncating final conversion is "correctly
# rounded with implementation-defined direction".  The default profile must
# pass them (never fail a correct device); the strict profile must catch them.
LEGAL_UNDER_DEFAULT = {"bf16_result_truncated"}


def all_cases():
    out = [(c, run_intel_mma) for c in intel_mma_cases(TIERS)]
    out += [(c, run_intel_mma) for c in intel_split_cases(TIERS)]
    out += [(c, run_tf32_convert) for c in tf32_convert_cases(TIERS)]
    return out


def run_all(backend, profile="default", tiers=None):
    failed = []
    for case, runner in all_cases():
        if tiers and getattr(case, "tier", None) not in tiers:
            continue
        kw = {"subgroups": SUBGROUPS, "profile": PROFILES[profile]} if runner is run_intel_mma else {}
        if not runner(case, backend, SEED, **kw).verdict.passed:
            failed.append(f"{case.family}[{case.id}]")
    return failed


def test_clean_emulator_passes_everything():
    assert run_all(EmulatorBackend()) == []


def test_clean_emulator_passes_the_strict_profile():
    assert run_all(EmulatorBackend(), "strict", tiers=("rounding", "random", "special")) == []


@pytest.mark.parametrize("fault", sorted(LEGAL_UNDER_DEFAULT))
def test_a_legal_deviation_passes_the_default_profile(fault):
    """The default profile must not fail a device the specs allow."""
    assert run_all(EmulatorBackend((fault,))) == []


@pytest.fixture(scope="module")
def catches():
    table = defaultdict(list)
    for fault in FAULTS:
        profile = "strict" if fault in LEGAL_UNDER_DEFAULT else "default"
        table[fault] = run_all(EmulatorBackend((fault,)), profile)
    rows = [[f, len(v), ", ".join(v[:2])] for f, v in table.items()]
    print("\n" + tabulate(rows, headers=["fault", "cases failed", "e.g."], tablefmt="github"))
    return table


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_is_caught(fault, catches):
    assert catches[fault], f"fault {fault!r} was not caught by any Intel case"


def test_faults_are_caught_by_the_tier_that_targets_them(catches):
    """Sanity of the tiers: the rounding tier is what catches truncation of
    bf16 results (strict profile), one-hot data catches column order."""
    assert any("rounding" in c for c in catches["bf16_result_truncated"])
    # the default profile's Rule R (either bracketing value) still catches a
    # 16-bit accumulator that is not "full precision"
    assert any("rounding" in c for c in catches["acc16_rounds_each_step"])
    assert any("onehot" in c for c in catches["a_column_order"])
    assert any("tf32_convert" in c for c in catches["tf32_not_rounded"])
