"""Conformance cases for SYCL joint_matrix (sycl_ext_oneapi_matrix, current
and deprecated API; sycl_ext_intel_matrix).

Every combination table of sycl_ext_oneapi_matrix, Supported Combinations Per Hardware and the old API's table
(sycl_ext_oneapi_matrix_no_use),
for the operations fill, load/store (each layout and stride), mad (D type may
differ from C type), copy (type / use / layout change), apply with row/column
coordinates, and the checked load / store / fill out-of-bounds rules; ids
carry arch, API, operation, types, M/N/K, use, layouts, stride and tier, e.g.
``test_joint_matrix[xmx16-cur-mad-bf16_bf16_f32_bf16-m8n16k16-mad-row_packed_row_row-tight-rounding]``.

``test_joint_matrix_nv_layouts`` adds, for the NVIDIA Tensor Core rows,
every (A, B, C, D) layout combination in every shape of the table (what
``--backend cuda`` lowers to one WMMA load / store each; cts.families.joint_nv).

``test_joint_matrix_coop`` realizes the mad combinations through a backend's
cooperative-matrix entry (Vulkan, VK_KHR_cooperative_matrix) where the
device reports a matching property, and skips with the reason elsewhere.
"""

import pytest

from cts.families.joint import joint_cases, joint_coop_cases
from cts.families.joint_nv import joint_nv_layout_cases
from cts.plugin.coop import coop_state
from cts.runs.joint import run_joint
from cts.runs.joint_coop import coop_joint_device


@pytest.mark.cts_cases.with_args(joint_cases)
def test_joint_matrix(case, cts):
    """One joint_matrix operation on one combination, layout and data tier."""
    cts.check(case, run_joint)


@pytest.mark.cts_cases.with_args(joint_nv_layout_cases)
def test_joint_matrix_nv_layouts(case, cts):
    """An NVIDIA-row mad in one shape with one (A, B, C, D) layout combination."""
    cts.check(case, run_joint)


def _session_coop():
    entries, sg, _apis, _source = coop_state()
    return entries, sg


@pytest.mark.cts_cases.with_args(joint_coop_cases)
def test_joint_matrix_coop(case, cts):
    """joint_matrix_mad realized as a cooperative-matrix MulAdd on a device."""
    cts.check(case, run_joint, via=lambda backend: coop_joint_device(case, backend, _session_coop))
