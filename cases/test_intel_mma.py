"""Conformance cases for cl_intel_subgroup_matrix_multiply_accumulate (+ _tf32)
and cl_intel_subgroup_split_matrix_multiply_accumulate.

Every built-in overload of the three extensions (cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C
Functions; its _tf32 companion; cl_intel_subgroup_split_matrix_multiply_accumulate)
crossed with the data tiers; ids carry every axis, e.g.
``test_intel_mma[sg16-bf16_bf16-k16-M4-acc_bf16-exact]``.
"""

import pytest

from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from cts.runs.intel import run_intel_mma, run_tf32_convert


@pytest.mark.cts_cases.with_args(intel_mma_cases)
def test_intel_mma(case, cts):
    """One built-in overload (a, b, K, M, accumulator) on one data tier."""
    cts.check(case, run_intel_mma)


@pytest.mark.cts_cases.with_args(intel_split_cases)
def test_intel_split_mma(case, cts):
    """Two subgroups of a work-group share A (first M/2 rows, then the rest)."""
    cts.check(case, run_intel_mma)


@pytest.mark.cts_cases.with_args(tf32_convert_cases)
def test_intel_tf32_convert(case, cts):
    """intel_convert_tfloat32*_as_float*: round to nearest even to tf32."""
    cts.check(case, run_tf32_convert)
