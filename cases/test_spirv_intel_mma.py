"""Conformance cases for SPV_INTEL_subgroup_matrix_multiply_accumulate
(OpSubgroupMatrixMultiplyAccumulateINTEL, capability 6236).

* ``test_spirv_intel_mma``: the 92 combinations the OpenCL SPIR-V
  environment requires (cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V
  Environment Specification) x data tiers; ``--spirv-extended`` adds the other well-defined ones.  Ids
  carry N, K, the operand literal and
  M, e.g. ``test_spirv_intel_mma[n16-k16-lit0x300c-M8-exact]``.
* ``test_spirv_builtin_crosscheck``: where a backend has both the OpenCL C
  built-in and the SPIR-V instruction, identical bits for identical inputs.
* ``test_spirv_round_tf32``: OpRoundFToTF32INTEL (SPV_INTEL_tensor_float32_
  conversion, capability 6425) on scalars and vectors of 2, 3, 4, 8, 16
  floats, the data of the tf32 conversion built-ins, e.g.
  ``test_spirv_round_tf32[roundtf32-w4-special]``.
"""

import pytest

from cts.families.spirv_tf32 import spirv_tf32_round_cases
from cts.plugin.spirv import spirv_cases
from cts.runs.spirv import (
    crosscheck_cases,
    run_builtin_crosscheck,
    run_spirv_intel_mma,
    run_spirv_tf32_round,
)


@pytest.mark.cts_cases.with_args(spirv_cases)
def test_spirv_intel_mma(case, cts):
    """One operand-literal form (N, K, types, M) on one data tier."""
    cts.check(case, run_spirv_intel_mma)


@pytest.mark.cts_cases.with_args(crosscheck_cases)
def test_spirv_builtin_crosscheck(case, cts):
    """OpenCL C built-in and SPIR-V instruction: identical Result bits."""
    cts.check(case, run_builtin_crosscheck)


@pytest.mark.cts_cases.with_args(spirv_tf32_round_cases)
def test_spirv_round_tf32(case, cts):
    """OpRoundFToTF32INTEL: round to nearest even to tf32, per component."""
    cts.check(case, run_spirv_tf32_round)
