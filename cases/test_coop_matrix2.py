"""Conformance cases for NV cooperative matrix 2: VK_NV_cooperative_matrix2,
SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing.

Ids carry the op, its variant, the source matrix type and the scope, e.g.
``test_coop_matrix2[vk2-reduce-2x2-sum-out8x8-C16x16-f16-sg]``,
``test_coop_matrix2[vk2-tensor-ld-mirror-C16x16-f32-sg]``; a device without
the feature an op needs skips it naming that feature.
"""

import pytest

from cts.plugin.coop2 import coop_matrix2_cases
from cts.runs.coop2 import run_coop2


@pytest.mark.cts_cases.with_args(coop_matrix2_cases)
def test_coop_matrix2(case, cts):
    """One NV cooperative matrix 2 operation on one matrix type."""
    cts.check(case, run_coop2)
