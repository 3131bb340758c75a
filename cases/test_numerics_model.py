"""The ``model`` tier of the numerics fingerprint.

No spec fixes the precision or order of a float subgroup MMA
(SPV_KHR_cooperative_matrix and the Vulkan specification leave order and internal precision
implementation-dependent), so a device is judged against its *own* inferred fingerprint: the
backend's float multiply-accumulate is characterized by the experiments of
``cts.numerics.probes`` (products, subnormals, block size and order, rounding,
alignment window, ...), and random tiles must then be reproduced bit for bit
by the inferred model (rule M; the sign of a zero result is not compared).
A failure means the device computes in a way no single fingerprint explains
(e.g. it changes its summation order between tiles), or that the model
family misses a feature; the message shows the elements and the model.
"""

import pytest

from cts.plugin.numerics import numerics_cases, run_numerics_model


@pytest.mark.cts_cases.with_args(numerics_cases)
def test_numerics_model(case, cts):
    """Random tiles reproduced bit for bit by the device's inferred model."""
    cts.check(case, run_numerics_model)
