"""Conformance cases for the subgroup built-ins (OpenCL C
``get_sub_group_size`` / ``get_sub_group_id`` / ``get_sub_group_local_id`` /
``get_num_sub_groups`` / ``get_max_sub_group_size`` and their SPIR-V
BuiltIns) in full and in partial last subgroups, e.g.
``test_subgroup_builtins[opencl_c-sg8-partial]``.  The rotate family's
oracle relies on them; a defect here is judged once, here.
"""

import pytest

from cts.families.subgroup_builtins import subgroup_builtins_cases
from cts.runs.subgroup_builtins import run_subgroup_builtins


@pytest.mark.cts_cases.with_args(subgroup_builtins_cases)
def test_subgroup_builtins(case, cts):
    """One API, one subgroup size, full or partial subgroups."""
    cts.check(case, run_subgroup_builtins)
