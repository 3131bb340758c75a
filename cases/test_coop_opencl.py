"""Conformance cases for the OpenCL forms of cooperative matrix
(SPV_KHR_cooperative_matrix; the cl_khr_cooperative_matrix draft, OpenCL-Docs pull request 1533; the
Clang RFC's OpenCL C ``coop_mat`` syntax).

Same operations, buffers, reference and runner as ``test_coop_matrix``
(``cts.runs.coop.run_coop``, through ``cts.runs.coop.opencl.run_coop_opencl``); ids start with the form:
``cl-spirv-...`` (SPIR-V Kernel module, cl_khr_cooperative_matrix) or
``cl-c-...`` (OpenCL C coop_mat proposal), e.g.
``test_coop_opencl[cl-spirv-muladd-m8n8k32-i8_u8_i32_i32-nosat-sg-row-exact]``.
On an OpenCL device without the extension / feature macro every case skips
naming it; ``--assume-extension`` runs them in a child process each.

The OpenCL axes (``cts.families.coop_ocl_axes``) select with
``-k``: ``ptr-u32`` (pointee type), ``rtstride``, ``rowblk`` / ``colblk`` (ARM
blocked layouts, skip naming CooperativeMatrixLayoutsARM where absent),
``qalign`` / ``qstride`` (the draft queries 0x107A / 0x107B at their minimum)
and ``sg16`` (a further reported subgroup size).
"""

import pytest

from cts.families.coop_ocl import FORMS, ocl_coop_cases
from cts.plugin.coop import coop_ocl_table, coop_state
from cts.runs.coop.opencl import run_coop_opencl


def coop_opencl_cases(tiers: tuple[str, ...]):
    entries, sg, apis, _ = coop_state()
    forms = tuple(f for a, f in FORMS.items() if a in apis)  # none on Vulkan / --coop-api vk
    return ocl_coop_cases(entries, tiers, sg, forms, coop_ocl_table(entries, sg)) if forms else []


@pytest.mark.cts_cases.with_args(coop_opencl_cases)
def test_coop_opencl(case, cts):
    """One cooperative-matrix operation in one OpenCL form."""
    cts.check(case, run_coop_opencl)
