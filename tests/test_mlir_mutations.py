"""Mutation proof for the MLIR family: the clean emulator passes every MLIR
case, and each named MLIR fault makes at least one case fail
(``pytest tests/test_mlir_mutations.py -s`` prints the table)."""

import pytest

from cts.backends.emu_mlir import MLIR_FAULTS
from cts.families.mlir import mlir_cases
from cts.runs.mlir import run_mlir
from tests.mutation import Mutations, assert_kills_only

SEED = 1
# a per-case failure (e.g. a broken thread-local map) is a catch too
MLIR = Mutations("MLIR", lambda c, be: run_mlir(c, be, SEED), errors_kill=True)


def test_clean_emulator_passes_every_mlir_case():
    MLIR.assert_clean(mlir_cases())


@pytest.fixture(scope="module")
def catches():
    return MLIR.kills(MLIR_FAULTS, [c for c in mlir_cases() if c.sg in (8, 16) or c.op == "gpu_rotate"])


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(MLIR_FAULTS))
def test_mlir_fault_is_caught(fault, catches):
    MLIR.assert_killed(catches, fault)


@pytest.mark.e2e
def test_mlir_faults_are_caught_by_their_op(catches):
    """Each fault is caught by the op that targets it (not only by accident)."""
    expect = {
        "mlir_load_transpose_ignored": ("load_store", "compute"),
        "mlir_lead_dimension_ignored": ("load_store", "compute"),
        "mlir_store_transpose_ignored": ("load_store",),
        "mlir_compute_transpose_ignored": ("compute",),
        "mlir_b_signedness_from_a": ("compute-si8_ui8", "compute-ui8_si8"),
        "mlir_subf_operands_swapped": ("elementwise-subf",),
        "mlir_divs_floor": ("elementwise-divs",),
        "mlir_truncf_truncates": ("elementwise-truncf",),
        "mlir_extract_index_shifted": ("thread_local", "mma_rotate"),
        "mlir_insert_index_shifted": ("thread_local", "mma_rotate"),
        "mlir_constant_first_lane_only": ("constant",),
        "mlir_rotate_reversed": ("mma_rotate",),
        "gpu_rotate_width_ignored": ("gpu_rotate",),
        "gpu_rotate_valid_all_lanes": ("gpu_rotate",),
        "gpu_rotate_vector_tail_unrotated": ("gpu_rotate-f32x4", "gpu_rotate-i32x2", "gpu_rotate-f16x3"),
    }
    assert all("x" in c.split("-")[1] for c in catches["gpu_rotate_vector_tail_unrotated"])
    for fault, prefixes in expect.items():
        for p in prefixes:
            assert any(c.startswith(p) for c in catches[fault]), f"{fault} not caught by {p}"


# faults of the newer axes, and the only cases that may catch them (each caught by its new
# cases and by nothing older: the axis is what exposes it)
NEW_AXIS_FAULTS = {
    "gpu_rotate_high_word_lost": lambda c: c.op == "gpu_rotate" and c.elem in ("i64", "f64"),
    "gpu_rotate_wave32_halves": lambda c: c.op == "gpu_rotate" and c.sg == 64,
    "gpu_rotate_narrow_packed_words": lambda c: c.op == "gpu_rotate" and c.elem in ("i8", "i16", "bf16"),
    "mlir_maxf_as_maxnumf": lambda c: c.data == "nan" and c.optype in ("maxf", "minf"),
    "mlir_minmax_zero_sign_ignored": lambda c: c.data != "" and c.optype in ("maxf", "minf"),
    "mlir_negatef_as_zero_minus": lambda c: c.data != "" and c.optype == "negatef",
    "mlir_subnormal_sign_lost": lambda c: c.data == "subnormal",
    "mlir_truncf_overflow_saturates": lambda c: c.data in ("inf", "nan") and c.optype == "truncf",
    "mlir_elementwise_ab_layout": lambda c: c.op == "elementwise" and c.tag in ("AOp", "BOp"),
}
# the tier (or operand kind) each fault must be caught by, not only allowed in
MUST_CATCH = {
    "mlir_maxf_as_maxnumf": ("elementwise-maxf-f32-nan", "elementwise-minf-f16-nan"),
    "mlir_minmax_zero_sign_ignored": ("elementwise-maxf-f32-zero", "elementwise-minf-f64-zero"),
    "mlir_negatef_as_zero_minus": ("elementwise-negatef-f16-zero",),
    "mlir_subnormal_sign_lost": ("elementwise-addf-f32-subnormal", "elementwise-extf-f16-subnormal"),
    "mlir_truncf_overflow_saturates": ("elementwise-truncf-f32-inf",),
    "mlir_elementwise_ab_layout": ("elementwise-addf-f16-AOp", "elementwise-addi-i32-BOp"),
    "gpu_rotate_high_word_lost": ("gpu_rotate-i64-sg8-w8-off1", "gpu_rotate-f64x2-sg8-w4-off1"),
    "gpu_rotate_wave32_halves": ("gpu_rotate-f32-sg64-w64-off1",),
    "gpu_rotate_narrow_packed_words": ("gpu_rotate-i8-sg8-w8-off1", "gpu_rotate-i16-sg8-w8-off1"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(NEW_AXIS_FAULTS))
def test_new_axis_faults_are_caught_only_by_their_new_cases(fault, catches):
    by_id = {c.id: c for c in mlir_cases()}
    assert_kills_only(catches[fault], fault, lambda i: NEW_AXIS_FAULTS[fault](by_id[i]), MUST_CATCH[fault])
