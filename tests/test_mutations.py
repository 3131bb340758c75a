"""Mutation proof for the Intel families: the clean emulator passes every
case, and each named fault of the Intel emulator makes at least one case fail.

Runs the cases in-process (the same runners the conformance tests use) with
fewer subgroups per case to stay fast; prints the fault -> catching-cases
table (``pytest tests/test_mutations.py -s`` shows it).
"""

import pytest

from cts.backends.emulator import FAULTS, EmulatorBackend
from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from cts.runs.intel import run_intel_mma, run_tf32_convert
from reference.data import TIERS
from reference.tolerance import PROFILES
from tests.mutation import Mutations

SEED = 1
SUBGROUPS = 8
# faults that the specs allow: a truncating final conversion is "correctly
# rounded with implementation-defined direction".  The default profile must
# pass them (never fail a correct device); the strict profile must catch them.
LEGAL_UNDER_DEFAULT = {"bf16_result_truncated"}


def all_cases(tiers=None):
    out = [(c, run_intel_mma) for c in intel_mma_cases(TIERS)]
    out += [(c, run_intel_mma) for c in intel_split_cases(TIERS)]
    out += [(c, run_tf32_convert) for c in tf32_convert_cases(TIERS)]
    return [(c, r) for c, r in out if not tiers or getattr(c, "tier", None) in tiers]


def intel(profile="default"):
    """The Intel families' proof under a tolerance profile; a case is (case, its runner)."""

    def run(case_runner, backend):
        case, runner = case_runner
        kw = {"subgroups": SUBGROUPS, "profile": PROFILES[profile]} if runner is run_intel_mma else {}
        return runner(case, backend, SEED, **kw)

    return Mutations("Intel", run, name=lambda cr: f"{cr[0].family}[{cr[0].id}]")


def test_clean_emulator_passes_everything():
    intel().assert_clean(all_cases())


def test_clean_emulator_passes_the_strict_profile():
    intel("strict").assert_clean(all_cases(("rounding", "random", "special")))


@pytest.mark.parametrize("fault", sorted(LEGAL_UNDER_DEFAULT))
def test_a_legal_deviation_passes_the_default_profile(fault):
    """The default profile must not fail a device the specs allow."""
    intel().assert_clean(all_cases(), EmulatorBackend((fault,)))


@pytest.fixture(scope="module")
def catches():
    strict = [f for f in FAULTS if f in LEGAL_UNDER_DEFAULT]
    table = intel().kills([f for f in FAULTS if f not in LEGAL_UNDER_DEFAULT], all_cases())
    table |= intel("strict").kills(strict, all_cases())
    return table


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_is_caught(fault, catches):
    intel().assert_killed(catches, fault)


@pytest.mark.e2e
def test_faults_are_caught_by_the_tier_that_targets_them(catches):
    """Sanity of the tiers: the rounding tier is what catches truncation of
    bf16 results (strict profile), one-hot data catches column order."""
    assert any("rounding" in c for c in catches["bf16_result_truncated"])
    # the default profile's Rule R (either bracketing value) still catches a
    # 16-bit accumulator that is not "full precision"
    assert any("rounding" in c for c in catches["acc16_rounds_each_step"])
    assert any("onehot" in c for c in catches["a_column_order"])
    assert any("tf32_convert" in c for c in catches["tf32_not_rounded"])
