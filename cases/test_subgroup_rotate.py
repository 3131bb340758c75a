"""Conformance cases for subgroup rotate: ``cl_khr_subgroup_rotate``
(OpenCL C ``sub_group_rotate`` / ``sub_group_clustered_rotate``) and
``SPV_KHR_subgroup_rotate`` (``OpGroupNonUniformRotateKHR`` with and without
ClusterSize).

Ids carry api, type (with vector width), required subgroup size and the
cluster size (``rotate`` = no cluster), e.g.
``test_subgroup_rotate[spirv-half4-sg16-c2]``.  Every case runs all delta
classes (0, 1, N-1, N, > N, negative) and partial last subgroups in one
launch (SPV_KHR_subgroup_rotate; cl_khr_subgroup_rotate; OpenCL-CTS
``subgroup_functions_rotate`` checks the same classes).
"""

import pytest

from cts.families.rotate import rotate_cases
from cts.runs.rotate import run_rotate


@pytest.mark.cts_cases.with_args(rotate_cases)
def test_subgroup_rotate(case, cts):
    """One gentype, one subgroup size, plain or one cluster size."""
    cts.check(case, run_rotate)
