"""SPIR-V subgroup MMA: the emulator against the seed's own examples, the
clean emulator passing every case, and each SPIR-V fault being caught.

``pytest tests/test_spirv_mutations.py -s`` prints the fault table.
"""

import numpy as np
import pytest

from cts.backends.emu_spirv import SPIRV_FAULTS, SpirvEmulation
from cts.backends.emulator import EmulatorBackend
from cts.families.spirv_intel import spirv_intel_cases
from cts.runs.spirv import crosscheck_cases, run_builtin_crosscheck, run_spirv_intel_mma
from reference.data import TIERS
from tests.mutation import Mutations

SEED = 1
SUBGROUPS = 8


def _emu(*faults):
    return EmulatorBackend(tuple(faults))


def test_mixin_is_registered():
    assert issubclass(EmulatorBackend, SpirvEmulation)
    from cts.backends.emulator import all_faults

    assert set(SPIRV_FAULTS) <= set(all_faults())


# ------------------------------------------------------ examples
def _enc(r, c):  # element (r, c) -> a distinct 8-bit value
    return 16 * r + c


def _info(M, K, a_bits, a_comps, b_bits=32, b_comps=2):
    return {
        "result": ("int", 32, M),
        "K": K,
        "A": ("int", a_bits, a_comps),
        "B": ("int", b_bits, b_comps),
        "C": ("int", 32, M),
        "literal": 0,
        "N": 4,
    }


def _want(M, K):
    return np.array([[[_enc(r, c) for c in range(K)] for r in range(M)]])


def test_seed_example_a_n_eq_k():
    """M=2, K=4, N=4: invocation i passes (0,i) and (1,i)."""
    a = np.array([[[_enc(0, i), _enc(1, i)] for i in range(4)]], dtype=np.uint64)
    got = _emu()._spv_matrix_a(a, _info(2, 4, 8, 2), ("int", 8, False))
    assert (got == _want(2, 4)).all()


def test_seed_example_a_n_lt_k():
    """M=2, K=8, N=4: invocation 0 passes (0,1)|(0,0) and (1,1)|(1,0)."""
    a = np.array(
        [[[_enc(r, 2 * i + 1) << 8 | _enc(r, 2 * i) for r in range(2)] for i in range(4)]], dtype=np.uint64
    )
    got = _emu()._spv_matrix_a(a, _info(2, 8, 16, 2), ("int", 8, False))
    assert (got == _want(2, 8)).all()


def test_seed_example_a_n_gt_k():
    """M=4, K=2, N=4: inv0 {(0,0),(2,0)}, inv1 {(0,1),(2,1)}, inv2 {(1,0),(3,0)},
    inv3 {(1,1),(3,1)}; M=1: the data of invocations 2 and 3 is ignored."""
    regs = [[(0, 0), (2, 0)], [(0, 1), (2, 1)], [(1, 0), (3, 0)], [(1, 1), (3, 1)]]
    a = np.array([[[_enc(*rc) for rc in inv] for inv in regs]], dtype=np.uint64)
    got = _emu()._spv_matrix_a(a, _info(4, 2, 8, 2), ("int", 8, False))
    assert (got == _want(4, 2)).all()
    a1 = np.array([[[_enc(0, 0)], [_enc(0, 1)], [0xAB], [0xCD]]], dtype=np.uint64)
    got = _emu()._spv_matrix_a(a1, _info(1, 2, 8, 1), ("int", 8, False))
    assert (got == _want(1, 2)).all()
    wrong = _emu("spirv_n_gt_k_as_n_lt_k")._spv_matrix_a(a, _info(4, 2, 8, 2), ("int", 8, False))
    assert not (wrong == _want(4, 2)).all()


@pytest.mark.parametrize("ebits,K", [(8, 8), (16, 4), (32, 2)])
def test_seed_example_b(ebits, K):
    """B, N=4: 8-bit K=8 -> {3,0|2,0|1,0|0,0, 7,0|..}; 16-bit K=4 -> {1,0|0,0,
    3,0|2,0}; 32-bit K=2 -> {0,0, 1,0} for invocation 0."""
    per = 32 // ebits
    words = [
        [sum(_enc(w * per + t, i) << (t * ebits) for t in range(per)) for w in range(K // per)]
        for i in range(4)
    ]
    b = np.array([words], dtype=np.uint64)
    info = _info(1, K, 8, 1, 32, K // per)
    got = _emu()._spv_matrix_b(b, info, ("int", ebits, False))
    assert (got == np.array([[[_enc(r, c) for c in range(4)] for r in range(K)]])).all()


@pytest.mark.parametrize(
    "lit,side,want",
    [
        (0x33, 0, ("int", 8, True)),
        (0x31, 1, ("int", 8, False)),
        (0xC2, 0, ("int", 4, False)),
        (0xC2, 1, ("int", 4, True)),
        (0x300, 0, ("tf32", 32, False)),
        (0xC00, 1, ("f16", 16, False)),
        (0x300C, 0, ("bf16", 16, False)),
    ],
)
def test_literal_bits_decode(lit, side, want):
    """SPV_INTEL_subgroup_matrix_multiply_accumulate: the A-side bit and its B-side partner one bit up."""
    assert _emu()._spv_element(lit, side, ("int", 32, 1)) == want


# ------------------------------------------------------------ mutations
def all_cases():
    return spirv_intel_cases(TIERS)


SPIRV = Mutations("SPIR-V", lambda c, be: run_spirv_intel_mma(c, be, SEED, subgroups=SUBGROUPS))


def test_clean_emulator_passes_everything():
    SPIRV.assert_clean(all_cases())


@pytest.mark.e2e
def test_clean_emulator_passes_the_extended_tier():
    ext = [
        c for c in spirv_intel_cases(("exact", "onehot", "random"), extended=True) if c.level == "extended"
    ]
    SPIRV.assert_clean(ext)


def test_builtin_and_spirv_emulations_agree():
    """The Intel mixin (decodes the built-in name) and the SPIR-V mixin
    (decodes the literal) give identical bits: two independent readings."""
    bad = [
        c.id
        for c in crosscheck_cases(TIERS)
        if not run_builtin_crosscheck(c, _emu(), SEED, subgroups=SUBGROUPS).verdict.passed
    ]
    assert bad == []


@pytest.fixture(scope="module")
def catches():
    return SPIRV.kills(SPIRV_FAULTS, all_cases())


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(SPIRV_FAULTS))
def test_fault_is_caught(fault, catches):
    SPIRV.assert_killed(catches, fault)


@pytest.mark.e2e
def test_faults_are_caught_where_they_apply(catches):
    """Each fault fails exactly the literals it concerns, never others."""
    assert all(
        "lit0x33" in c or "lit0x31" in c or "lit0xc3" in c or "lit0xc1" in c
        for c in catches["spirv_a_signed_ignored"]
    )
    assert all("lit0xc" in c and "lit0xc00" not in c for c in catches["spirv_int4_as_int8"])
    assert all(
        "lit0x300c" in c for c in catches["spirv_c_bf16_ignored"] + catches["spirv_result_bf16_ignored"]
    )
    assert all("lit0x300-" in c for c in catches["spirv_n_gt_k_as_n_lt_k"])


@pytest.mark.e2e
def test_the_spec_constant_fault_is_caught_only_by_the_kspec_cases(catches):
    """spirv_spec_constant_default (the values set at build time ignored):
    every K Dim OpSpecConstant case fails but the M = 1 rounding cases, whose
    half-ulp products stay inside Rule F (SPV_INTEL leaves the precision
    open); no case with K Dim an OpConstant fails."""
    caught = set(catches["spirv_spec_constant_default"])
    kspec = {c.id for c in all_cases() if c.kdim == "spec"}
    assert caught <= kspec
    assert all("-M1-" in c and c.endswith("-rounding") for c in kspec - caught), sorted(kspec - caught)
