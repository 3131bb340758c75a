"""Mutation proof for the NV cooperative matrix 2 family: the clean emulator
passes every case, each named fault of cts/backends/emu_coop2.py is caught,
and only by the cases of the op (and variant) it targets.

``-s`` prints the fault -> catching cases table.
"""

import pytest

from cts.backends.emu_coop2 import COOP2_FAULTS
from cts.families.coop import load_profile
from cts.families.coop2 import ASSUMED, coop2_cases
from cts.runs.coop2 import run_coop2
from tests.mutation import Mutations, assert_kills_only

SEED = 1

# fault -> the id fragment every catching case has (its op and variant)
TARGET = {
    "coop2_reduce_row_col_swapped": "vk2-reduce-",
    "coop2_reduce_2x2_as_1x4": "vk2-reduce-2x2-",
    "coop2_reduce_resize_first_only": "-out",
    "coop2_perelem_row_col_swapped": "vk2-perelem-",
    "coop2_perelem_extra_dropped": "vk2-perelem-",
    "coop2_convert_acc_a_transposed": "vk2-convert-acc_a-",
    "coop2_convert_acc_b_transposed": "vk2-convert-acc_b-",
    "coop2_transpose_missing": "vk2-convert-transpose-",
    "coop2_tensor_span_outer_first": "vk2-tensor-",
    "coop2_tensor_offset_ignored": "vk2-",
    "coop2_tensor_stride_ignored": "vk2-tensor-",
    "coop2_clamp_mirror_as_repeat": "vk2-tensor-ld-mirror-",
    "coop2_clamp_const_zero": "vk2-tensor-ld-const-",
    "coop2_clamp_edge_as_mirror": "vk2-tensor-ld-edge-",
    "coop2_clamp_repeat_as_edge": "vk2-tensor-ld-repeat-",
    "coop2_store_oob_clamped": "vk2-tensor-st-const-",
    "coop2_view_clip_zeroes": "vk2-tensor-ld-clip-",
    "coop2_store_clip_ignored": "vk2-tensor-st-clip-",
    "coop2_view_perm_ignored": "vk2-tensor-ld-perm-",
    "coop2_view_stride_ignored": "vk2-tensor-ld-vstride-",
    "coop2_decode_inblock_reversed": "vk2-decode-",
    "coop2_flex_k_tail_dropped": "vk2-flex-",
    "coop2_wg_scope_first_subgroup": "-wg128",
}
# a fault whose op spans two op tokens lists both
# (block loads address through a tensor layout too)
ALSO = {
    "coop2_tensor_offset_ignored": ("vk2-tensor-", "vk2-decode-"),
    "coop2_tensor_span_outer_first": ("vk2-tensor-", "vk2-decode-"),
}


def cases():
    p = load_profile("h100")
    return coop2_cases(p.entries, ASSUMED, p.subgroup_size)


COOP2 = Mutations("coop2", lambda c, be: run_coop2(c, be, SEED))


def test_clean_emulator_passes():
    COOP2.assert_clean(cases())


@pytest.fixture(scope="module")
def catches():
    return COOP2.kills(COOP2_FAULTS, cases())


def test_every_fault_has_a_target():
    assert set(TARGET) == set(COOP2_FAULTS)


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(COOP2_FAULTS))
def test_fault_caught_only_by_its_cases(fault, catches):
    frags = ALSO.get(fault, (TARGET[fault],))
    assert_kills_only(catches[fault], fault, lambda c: any(f in c for f in frags))
