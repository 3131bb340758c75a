"""The Intel case space covers exactly the built-ins the specs list.

The expected overloads are transcribed by hand from the tables of
cl_intel_subgroup_matrix_multiply_accumulate (v1.1.0: 40
functions for subgroup size 8, 48 for 16), 1.5 (the _tf32 companion: 4
matrix built-ins, 6 conversions) and 2 (the split extension: 18), not derived
from ``cts/families/intel.py``; a row dropped from or added to the generator's
tables fails here.  Each overload must be crossed with every tier that applies
to it, and every axis must be in the pytest id.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from reference.data import TIERS


def _sfx(scalar: str, m: int) -> str:
    return scalar if m == 1 else f"{scalar}{m}"


# (function name, a scalar, b vector, acc scalar) per table row; a/acc take the M suffix.
SG8 = [
    ("intel_sub_group_i8_i8_matrix_mad_k32", "int", "int8", "int"),
    ("intel_sub_group_i8_u8_matrix_mad_k32", "int", "uint8", "int"),
    ("intel_sub_group_u8_i8_matrix_mad_k32", "uint", "int8", "int"),
    ("intel_sub_group_u8_u8_matrix_mad_k32", "uint", "uint8", "int"),
    ("intel_sub_group_i4_i4_matrix_mad_k64", "int", "int8", "int"),
    ("intel_sub_group_i4_u4_matrix_mad_k64", "int", "uint8", "int"),
    ("intel_sub_group_u4_i4_matrix_mad_k64", "uint", "int8", "int"),
    ("intel_sub_group_u4_u4_matrix_mad_k64", "uint", "uint8", "int"),
    ("intel_sub_group_bf16_bf16_matrix_mad_k16", "int", "int8", "float"),
    ("intel_sub_group_f16_f16_matrix_mad_k16", "int", "int8", "float"),
]
SG16 = [
    ("intel_sub_group_i8_i8_matrix_mad_k32", "short", "int8", "int"),
    ("intel_sub_group_i8_u8_matrix_mad_k32", "short", "uint8", "int"),
    ("intel_sub_group_u8_i8_matrix_mad_k32", "ushort", "int8", "int"),
    ("intel_sub_group_u8_u8_matrix_mad_k32", "ushort", "uint8", "int"),
    ("intel_sub_group_i4_i4_matrix_mad_k64", "short", "int8", "int"),
    ("intel_sub_group_i4_u4_matrix_mad_k64", "short", "uint8", "int"),
    ("intel_sub_group_u4_i4_matrix_mad_k64", "ushort", "int8", "int"),
    ("intel_sub_group_u4_u4_matrix_mad_k64", "ushort", "uint8", "int"),
    ("intel_sub_group_bf16_bf16_matrix_mad_k16", "short", "int8", "float"),
    ("intel_sub_group_f16_f16_matrix_mad_k16", "short", "int8", "float"),
    ("intel_sub_group_bf16_bf16_matrix_mad_k16", "short", "int8", "short"),  # bf16 accumulator
    ("intel_sub_group_f16_f16_matrix_mad_k16", "short", "int8", "half"),  # fp16 accumulator
]
# cl_intel_subgroup_matrix_multiply_accumulate_tf32: a is ceil(M/2) floats
TF32 = [
    "intel_sub_group_tf32_tf32_matrix_mad_k8(float, float8, float) sg16",
    "intel_sub_group_tf32_tf32_matrix_mad_k8(float, float8, float2) sg16",
    "intel_sub_group_tf32_tf32_matrix_mad_k8(float2, float8, float4) sg16",
    "intel_sub_group_tf32_tf32_matrix_mad_k8(float4, float8, float8) sg16",
]
# cl_intel_subgroup_split_matrix_multiply_accumulate: (name, a for M = 2 / 4 / 8, b, acc scalar)
SPLIT = [
    ("intel_sub_group_i8_i8_split_matrix_mad_k32", "int", "int8", "int"),
    ("intel_sub_group_i8_u8_split_matrix_mad_k32", "int", "uint8", "int"),
    ("intel_sub_group_u8_i8_split_matrix_mad_k32", "uint", "int8", "int"),
    ("intel_sub_group_u8_u8_split_matrix_mad_k32", "uint", "uint8", "int"),
    ("intel_sub_group_bf16_bf16_split_matrix_mad_k16", "int", "int8", "float"),
    ("intel_sub_group_f16_f16_split_matrix_mad_k16", "int", "int8", "float"),
]
CONVERT = [
    "intel_convert_tfloat32_as_float",
    "intel_convert_tfloat322_as_float2",
    "intel_convert_tfloat323_as_float3",
    "intel_convert_tfloat324_as_float4",
    "intel_convert_tfloat328_as_float8",
    "intel_convert_tfloat3216_as_float16",
]


def _expected_base(table, sg):
    return {
        f"{name}({_sfx(a, m)}, {b}, {_sfx(acc, m)}) sg{sg}" for name, a, b, acc in table for m in (1, 2, 4, 8)
    }


def _expected_split():
    return {
        f"{name}({_sfx(a, m // 2)}, {b}, {_sfx(acc, m)}) sg8" for name, a, b, acc in SPLIT for m in (2, 4, 8)
    }


def _rows(cases):
    return {c.spec_row for c in cases}


def test_table_sizes_as_the_specs_count_them():
    assert len(_expected_base(SG8, 8)) == 40
    assert len(_expected_base(SG16, 16)) == 48
    assert len(_expected_split()) == 18 and len(TF32) == 4 and len(CONVERT) == 6


def test_base_and_tf32_builtins_are_exactly_the_spec_tables():
    cases = intel_mma_cases(TIERS)
    got = _rows(cases)
    assert _rows(c for c in cases if c.sg == 8) == _expected_base(SG8, 8)
    assert _rows(c for c in cases if c.sg == 16 and c.a != "tf32") == _expected_base(SG16, 16)
    assert _rows(c for c in cases if c.a == "tf32") == set(TF32)
    assert len(got) == 40 + 48 + 4


def test_split_builtins_are_exactly_the_spec_table():
    assert _rows(intel_split_cases(TIERS)) == _expected_split()


def test_tf32_conversions_are_the_six_builtins():
    assert {c.spec_row for c in tf32_convert_cases(TIERS)} == set(CONVERT)


def _applicable(acc: str, a: str) -> set[str]:
    """Tiers of a matrix built-in: all of them, the rounding tier (Rule R) only
    for 16-bit results, the accprec tier only for float built-ins whose
    accumulator (f32) is wider than the inputs (f16, bf16, tf32)."""
    out = {"exact", "onehot", "random", "special"} | ({"rounding"} if acc in ("f16", "bf16") else set())
    return out | ({"accprec"} if acc == "f32" and a in ("f16", "bf16", "tf32") else set())


@pytest.mark.parametrize("make", [intel_mma_cases, intel_split_cases], ids=["mma", "split"])
def test_every_builtin_is_crossed_with_every_applicable_tier(make):
    cases = make(TIERS)
    per_row: dict[str, set[str]] = {}
    for c in cases:
        per_row.setdefault(c.spec_row, set()).add(c.tier)
    for row, tiers in per_row.items():
        acc, a = next((c.acc, c.a) for c in cases if c.spec_row == row)
        assert tiers == _applicable(acc, a), row
    # --tiers narrows the enumeration and never drops a built-in
    only = make(("random",))
    assert {c.spec_row for c in only} == set(per_row) and {c.tier for c in only} == {"random"}


def test_tf32_conversions_run_the_value_tiers():
    cases = tf32_convert_cases(TIERS)
    assert Counter(c.tier for c in cases) == {"exact": 6, "random": 6, "special": 6}


ID = re.compile(
    r"^sg(8|16)-([iu][48]|bf16|f16|tf32)_([iu][48]|bf16|f16|tf32)-k(\d+)-M([1248])-acc_(i32|f32|f16|bf16)"
    r"(?:-wg(4|8))?-(\w+)$"
)
K_BY_TYPE = {"i8": 32, "u8": 32, "i4": 64, "u4": 64, "bf16": 16, "f16": 16, "tf32": 8}


def test_ids_carry_every_axis_and_are_unique():
    cases = intel_mma_cases(TIERS) + intel_split_cases(TIERS)
    for c in cases:
        m = ID.match(c.id)
        assert m, c.id
        sg, a, b, k, M, acc, wg, tier = m.groups()
        assert (int(sg), a, b, int(M), acc, tier) == (c.sg, c.a, c.b, c.M, c.acc, c.tier)
        assert int(wg or 2) == c.wg and (wg is None or c.split)  # wg2 split ids keep the form without it
        assert (
            int(k) == K_BY_TYPE[a] == c.k
        )  # cl_intel_subgroup_matrix_multiply_accumulate: K from the element width
        assert f"_k{k}" in c.builtin and f"_{a}_{b}_" in c.builtin
    for make in (intel_mma_cases, intel_split_cases):
        ids = [c.id for c in make(TIERS)]
        assert len(ids) == len(set(ids))
    assert "sg16-bf16_bf16-k16-M4-acc_bf16-exact" in {c.id for c in intel_mma_cases(TIERS)}


def test_split_cases_run_every_builtin_with_2_4_and_8_subgroups_per_work_group():
    """cl_intel_subgroup_split_matrix_multiply_accumulate, open issue 1: the pairing is the implementation's; with 2
    subgroups per work-group it is forced, with 4 and 8 it is not."""
    cases = intel_split_cases(TIERS)
    per_wg = Counter(c.wg for c in cases)
    assert per_wg == {2: 78, 4: 78, 8: 78}  # 18 x 4 tiers + 6 accprec (bf16, f16 x M 2, 4, 8)
    for wg in (2, 4, 8):
        assert _rows(c for c in cases if c.wg == wg) == _expected_split()
    ids = {c.id for c in cases}
    assert "sg8-i8_i8-k32-M4-acc_i32-exact" in ids  # wg2: the id from before the axis
    assert {"sg8-i8_i8-k32-M4-acc_i32-wg4-exact", "sg8-i8_i8-k32-M4-acc_i32-wg8-exact"} <= ids
