"""The ``model`` tier catches a device that no single fingerprint explains,
and passes the clean emulator under every configured model.
Also: the parametrized device model agrees with independent computations
(numpy float32 sequential FMA, exact rational sums, the H100 observations
of reports/numerics/), so the round trip is not a model checking itself."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from cts.backends.base import Backend, Unsupported
from cts.backends.emulator import EmulatorBackend
from cts.families.coop import load_profile
from cts.plugin.numerics import NumericsCase, run_numerics_model
from reference.devmodel import MODELS, DevModel, model_mma
from reference.dtypes import etype

CASE = NumericsCase("f16", "f32", 8, 16, 16)


@pytest.mark.parametrize("model", [None, "trunc_b8_e3", "inputs_b16_e2"])
def test_clean_emulator_passes_the_model_tier(model):
    emu = EmulatorBackend()
    emu.set_model(model)
    res = run_numerics_model(CASE, emu, seed=1)
    assert res.verdict.passed, res.verdict.summary()


@pytest.mark.parametrize("fault", ["numerics_order_drift", "numerics_rne_ties_away"])
def test_model_tier_catches_inconsistent_device(fault):
    emu = EmulatorBackend(faults=(fault,))
    emu.set_model("trunc_b8_e3")
    res = run_numerics_model(CASE, emu, seed=1)
    v = res.verdict
    assert not v.passed
    m = v.mismatches[0]
    assert m.expected_bits != m.actual_bits and m.row >= 0 and m.col >= 0


class _CoopOnly(Backend):
    """A Vulkan-like backend: it reports the h100 profile's entries
    (``coop_entries``) and runs cooperative-matrix buffers
    (``run_coop_matrix``) on the emulator's cooperative-matrix device under
    a device model; it has no ``run_float_mma``, so the tier goes through
    ``cts.runs.coop.device_muladd`` as on cts.backends.vulkan."""

    name = "coop-only"

    def __init__(self, model: str):
        self.model = model  # part of the model tier's fingerprint cache key
        self.emu = EmulatorBackend()
        self.emu.set_model(model)
        self.entries = list(load_profile("h100").entries)

    def coop_entries(self):
        return self.entries, 32

    def unsupported(self, case):
        if case.entry not in self.entries:
            return f"no VkCooperativeMatrixPropertiesKHR entry {case.entry.tag}"
        return None

    def run_coop_matrix(self, case, bufs):
        return self.emu.run_coop_matrix(case, bufs)


@pytest.mark.parametrize("model", ["trunc_b8_e3", "inputs_b16_e2"])
def test_model_tier_runs_through_device_muladd(model):
    """The tier on a Vulkan backend goes through device_muladd (it used to
    skip every case there: it only knew run_float_mma), and a device
    computing as ``model`` is reproduced bit for bit by its inferred model."""
    dev = _CoopOnly(model)
    block = "K" if MODELS[model].block >= 16 else MODELS[model].block  # K = 16: one fused step
    for a, c in (("f16", "f32"), ("f16", "f16"), ("bf16", "f32")):
        res = run_numerics_model(NumericsCase(a, c, 16, 16, 16, family="coop_muladd"), dev, seed=1)
        assert res.verdict.passed, (a, c, res.verdict.summary())
        assert f"block {block} " in res.verdict.notes[0], res.verdict.notes[0]
    with pytest.raises(Unsupported, match="no VkCooperativeMatrixPropertiesKHR entry"):
        run_numerics_model(NumericsCase("bf16", "bf16", 8, 16, 16, family="coop_muladd"), dev, seed=1)


@pytest.mark.e2e
def test_pytest_run_of_the_tier_names_model_and_rerun(tmp_path):
    """End to end: the failing case names the element, the model, the rerun."""
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_numerics_model.py::test_numerics_model[f16_f32-8x16x16]",
        "-q", "--no-report", "-p", "no:cacheprovider", "--emulator-model", "trunc_b8_e3",
        "--emulator-fault", "numerics_order_drift", "--tiers", "model",
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    assert "1 failed" in out
    assert "rule M" in out and "inferred model:" in out
    assert "--emulator-model trunc_b8_e3" in out and "--emulator-fault numerics_order_drift" in out
    assert "--tiers model" in out  # the rerun collects the opt-in tier


@pytest.mark.e2e
def test_the_model_tier_is_opt_in():
    """It judges a device against its own fingerprint (no spec requires
    consistency between tiles): not part of a default sweep."""
    base = [
        sys.executable,
        "-m",
        "pytest",
        "cases/test_numerics_model.py",
        "-q",
        "--no-report",
        "-p",
        "no:cacheprovider",
    ]
    out = subprocess.run(base, capture_output=True, text=True, timeout=300).stdout
    last = out.splitlines()[-1]  # one placeholder item, deselected; nothing ran or skipped
    assert last.startswith("1 deselected") and "passed" not in last and "skipped" not in last, out[-500:]
    out = subprocess.run(base + ["--tiers", "model"], capture_output=True, text=True, timeout=300).stdout
    assert out.splitlines()[-1].startswith("7 passed"), out[-500:]


def _f16_tiles(S, seed=3):
    rng = np.random.default_rng(seed)
    t = etype("f16")
    A = t.round(rng.uniform(-2, 2, (S, 4, 16)))
    B = t.round(rng.uniform(-2, 2, (S, 16, 4)))
    C = etype("f32").round(rng.uniform(-4, 4, (S, 4, 4)))
    return A, B, C


def test_ieee_model_is_numpy_float32_fma_chain():
    A, B, C = _f16_tiles(40)
    acc = C.astype(np.float32)
    for k in range(16):  # fp16 products are exact in float64; one float32 rounding per step
        acc = (acc.astype(np.float64) + A[:, :, k, None] * B[:, None, k, :]).astype(np.float32)
    D = model_mma(MODELS["ieee_rne_f32"], A, B, C, "f16", "f32")
    assert np.array_equal(D, acc.astype(np.float64))


def test_exact_model_is_the_rounded_rational_sum():
    A, B, C = _f16_tiles(6)
    D = model_mma(MODELS["exact_rne"], A, B, C, "f16", "f32")
    for s, r, c in np.ndindex(D.shape):
        exact = sum((Fraction(a) * Fraction(b) for a, b in zip(A[s, r], B[s, :, c])), Fraction(C[s, r, c]))
        assert D[s, r, c] == float(
            np.float32(float(exact))
        )  # one RNE rounding (float() of a dyadic is exact)


def _one(model: DevModel, c: float, prods: list[float]) -> float:
    """C plus products (each a power-of-two-friendly value split as v * 1)."""
    K = 16
    A, B = np.zeros((1, 1, K)), np.zeros((1, K, 1))
    for k, v in enumerate(prods):
        A[0, 0, k], B[0, k, 0] = v, 1.0
    return float(model_mma(model, A, B, np.array([[[c]]]), "f32", "f32")[0, 0, 0])


def test_truncating_model_reproduces_device_md_observations():
    """The numerics seen on the H100 (reports/numerics/), by hand."""
    h100 = DevModel(block=16, extra_bits=2, acc_rounding="rz", align="rz")
    ulp = 2.0**-23
    assert _one(h100, 1.0, [0.75 * ulp]) == 1.0  # truncated, not rounded
    assert _one(h100, -1.0, [-0.75 * ulp]) == -1.0
    assert _one(h100, 1.0, [0.25 * ulp] * 4) == 1.0 + ulp  # summed before meeting C
    assert _one(h100, 0.0, [2.0**15, -(2.0**15), 2.0**-20]) == 0.0  # window
    rne = DevModel(block=16, extra_bits=None, acc_rounding="rne")
    assert _one(rne, 1.0, [0.75 * ulp]) == 1.0 + ulp


def test_window_and_alignment_reference_by_hand():
    w26 = DevModel(block=16, extra_bits=2, acc_rounding="rz")
    assert _one(w26, 2.0**5, [2.0**30, -(2.0**30)]) == 2.0**5  # 2^30 .. 2^5: 26 bits
    assert _one(w26, 2.0**4, [2.0**30, -(2.0**30)]) == 0.0
    floor = w26.with_(align="rd")
    assert _one(floor, -(2.0**4), [2.0**30, -(2.0**30)]) == -(2.0**5)
    # products 1.5 x 1.5: aligned by the input exponents they keep one more bit
    A = np.zeros((1, 1, 16))
    B = np.zeros((1, 16, 1))
    A[0, 0, :2], B[0, :2, 0] = [1.5 * 2**15, -1.5 * 2**15], [1.5 * 2**14, 1.5 * 2**14]
    C = np.array([[[2.0**4]]])
    assert model_mma(w26, A, B, C, "f32", "f32")[0, 0, 0] == 0.0
    inputs = w26.with_(align_ref="inputs")
    assert model_mma(inputs, A, B, C, "f32", "f32")[0, 0, 0] == 2.0**4
    assert math.isnan(_one(w26, 1.0, [math.inf, -math.inf]))


@pytest.mark.e2e
def test_a_modelled_emulator_is_one_device_across_builtins_and_spirv():
    """--emulator-model makes the emulator one modelled device: the SPIR-V
    instruction computes like the OpenCL C built-ins, so the cross-check
    (identical bits required) passes; before, the SPIR-V path ignored the
    model and 40 float cross-checks failed."""
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_spirv_intel_mma.py", "-q", "--no-report",
        "-p", "no:cacheprovider", "--emulator-model", "inputs_b16_e2", "-k", "crosscheck and (random or special)",
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    assert out.splitlines()[-1].startswith("184 passed"), out[-1500:]
