"""Golden examples of the subgroup-rotate reference (SPV_KHR_subgroup_rotate; cl_khr_subgroup_rotate;
local-runtimes 2.2 / 2.4 observed results)."""

import numpy as np
import pytest

from reference.rotate import delta_values, expected_rotation, rotate_source, rotation_sources, rules_agree


def test_spv_overview_example():
    """SPV_KHR_subgroup_rotate overview: subgroup 16, delta 2: invocation 0
    reads 2, invocation 14 reads 0."""
    src = rotate_source(np.arange(16), 2, 16, "spirv")
    assert src[0] == 2 and src[14] == 0


@pytest.mark.parametrize("rule", ["opencl_c", "spirv"])
def test_observed_intel_results(rule):
    """Values seen on Intel's CPU runtime (local-runtimes 2.4): sg 8, delta 3
    -> [3,4,5,6,7,0,1,2]; delta 1 cluster 4 -> [1,2,3,0,5,6,7,4]."""
    lid = np.arange(8)
    assert rotate_source(lid, 3, 8, rule).tolist() == [3, 4, 5, 6, 7, 0, 1, 2]
    assert rotate_source(lid, 1, 4, rule).tolist() == [1, 2, 3, 0, 5, 6, 7, 4]


def test_negative_delta_reads_the_lane_below():
    """OpenCL C int -1 and SPIR-V unsigned 0xFFFFFFFF agree for power-of-two
    groups: both read the lane below (rotate "up")."""
    lid = np.arange(8)
    exp = [7, 0, 1, 2, 3, 4, 5, 6]
    assert rotate_source(lid, -1, 8, "opencl_c").tolist() == exp
    assert rotate_source(lid, -1, 8, "spirv").tolist() == exp
    assert rotate_source(lid, 2**31 - 1, 8, "spirv").tolist() == exp


def test_wordings_differ_for_non_power_of_two():
    """Spec-digest 6.5: "mod maximum subgroup size" vs "& (RGS - 1)"."""
    assert rules_agree(16, np.array([d for _, d in delta_values(16)]))
    assert not rules_agree(12, np.array([1]))
    assert rotate_source(np.arange(12), 1, 12, "opencl_c")[11] == 0


def test_partial_subgroup_reads_of_inactive_lanes_are_unchecked():
    """Subgroup of max size 8 with 5 active lanes, delta 1: lane 4 reads lane
    5 (inactive) -> not checked; the others are."""
    vals = np.arange(5)[:, None] + 100
    exp, checked, src = expected_rotation(
        vals, np.zeros(5), np.arange(5), np.full(5, 5), np.full(5, 8), np.ones(5), None, "opencl_c"
    )
    assert checked.tolist() == [True, True, True, True, False]
    assert exp[:4, 0].tolist() == [101, 102, 103, 104]


def test_delta_classes_cover_the_checklist():
    classes = {c for c, _ in delta_values(16, 4)}
    assert classes == {"zero", "one", "n_minus_1", "n", "gt_n", "negative"}


def test_subgroup_keys_only_name_subgroups():
    """Any numbering of the subgroups (sparse, not from 0) gives the same
    expected values: two work-groups of 12, subgroups of 8 (the last of 4
    active), delta 3."""
    lid = np.tile(np.arange(12) % 8, 2)
    size = np.tile(np.where(np.arange(12) < 8, 8, 4), 2)
    dense = np.repeat(np.arange(4), [8, 4, 8, 4])
    vals = np.arange(24)[:, None] + 100
    args = (lid, size, np.full(24, 8), np.full(24, 3), None, "opencl_c")
    want = expected_rotation(vals, dense, *args)
    for keys in (dense * 1000 + 7, 3 - dense, np.array([5, 9, 70, 71])[dense]):
        got = expected_rotation(vals, keys, *args)
        assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert want[1][:8].tolist() == [True] * 8 and want[0][0, 0] == 103 and want[0][5, 0] == 100


def test_delta_of_every_width_is_its_unsigned_pattern():
    """SPV_KHR_subgroup_rotate: Delta is any unsigned integer type; 0xFF (8
    bits), 0xFFFF (16) and 2**64 - 1 (64, given as the int64 -1) all move
    values up one lane, as -1 does at 32 bits; a 64-bit Delta of 2**32 + 1
    moves them down one (its low word), not by its high word."""
    lid = np.arange(16)
    up = rotate_source(lid, np.full(16, -1), 16, "spirv")
    assert np.array_equal(up, (lid - 1) % 16)
    assert np.array_equal(rotate_source(lid, np.full(16, 0xFF), 16, "spirv", 8), up)
    assert np.array_equal(rotate_source(lid, np.full(16, 0xFFFF), 16, "spirv", 16), up)
    assert np.array_equal(rotate_source(lid, np.full(16, -1), 16, "spirv", 64), up)
    assert np.array_equal(rotate_source(lid, np.full(16, 2**32 + 1), 16, "spirv", 64), (lid + 1) % 16)
    for bits in (8, 16, 64):
        values = [d for _, d in delta_values(16, 4, bits)]
        assert len(values) == len(set(values)) and 0 in values and 1 in values
        if bits < 64:
            assert all(0 <= d < 1 << bits for d in values)


def test_non_executing_sources_are_not_checked():
    """Non-uniform control flow: a lane reading a lane that does not execute
    the rotate is not checked; executing lanes reading executing ones are."""
    n = 8
    lid = np.arange(n)
    active = lid % 3 != 2
    idx, checked, src = rotation_sources(
        np.zeros(n, int), lid, np.full(n, n), np.full(n, n), np.ones(n, int), None, "spirv", 32, active
    )
    assert np.array_equal(src, (lid + 1) % n)
    assert np.array_equal(checked, active & active[(lid + 1) % n])
    assert (idx[~checked] == -1).all() and np.array_equal(idx[checked], src[checked])
