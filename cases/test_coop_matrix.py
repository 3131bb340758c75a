"""Conformance cases for cooperative matrix: SPV_KHR_cooperative_matrix /
VK_KHR_cooperative_matrix, the cl_khr_cooperative_matrix draft and the
OpenCL C ``coop_mat`` proposal (SPV_KHR_cooperative_matrix; VK_KHR_cooperative_matrix; the
cl_khr_cooperative_matrix draft; the Clang RFC for OpenCL C cooperative matrix types).

The space comes from the device's VkCooperativeMatrixPropertiesKHR entries
or from ``--coop-profile``; ids carry the api, the operation and every axis
of the entry or matrix type, e.g.
``test_coop_matrix[vk-muladd-m16n16k16-f16_f16_f32_f32-nosat-sg-row-random]``.
"""

import pytest

from cts.plugin.coop import coop_matrix_cases
from cts.runs.coop import run_coop


@pytest.mark.cts_cases.with_args(coop_matrix_cases)
def test_coop_matrix(case, cts):
    """One cooperative-matrix operation on one entry or matrix type."""
    cts.check(case, run_coop)
