"""Round-trip proof of the numerics fingerprint: the emulator,
configured with a chosen device model, is fingerprinted through the abstract
``mma`` callable, and every property the experiments can decide is
recovered exactly; the inferred model then reproduces the configured one bit
for bit on random tiles and on every probe the experiments ran."""

from __future__ import annotations

import numpy as np
import pytest

from cts.backends.emu_numerics import NUMERICS_TARGETS, NumericsEmulation
from cts.numerics.model import fingerprint
from cts.numerics.probes import Target
from reference.devmodel import MODELS, DevModel, model_mma

PARAMS = (
    "block order c_position extra_bits align align_ref acc_format acc_rounding out_rounding product_format "
    "subnormal_inputs subnormal_acc subnormal_out overflow"
).split()

# (model, a_type, c_type): RNE with fp32 accumulation, truncation with blocks
# of 4 / 8 / 16, few extra alignment bits, flushed subnormals, reverse order,
# C added last, two's-complement cut, fp16 accumulator, products rounded.
CASES = [
    ("ieee_rne_f32", "f16", "f32"),
    ("ieee_rne_f32", "bf16", "f32"),
    ("ieee_rne_f32", "f16", "f16"),
    ("exact_rne", "f16", "f32"),
    ("exact_rne", "bf16", "bf16"),
    ("trunc_b4", "f16", "f32"),
    ("trunc_b4", "bf16", "f32"),
    ("trunc_b8_e3", "f16", "f32"),
    ("trunc_b8_e3", "f16", "f16"),
    ("trunc_b16_e2", "f16", "f32"),
    ("trunc_b16_e2", "bf16", "bf16"),
    ("trunc_b8_rev", "f16", "f32"),
    ("rne_b4_e1_ftz", "f16", "f32"),
    ("rne_b4_e1_ftz", "bf16", "f32"),
    ("floor_b8_e2", "f16", "f32"),
    ("c_last_b8", "bf16", "f32"),
    ("f16acc_b4", "f16", "f16"),
    ("rz_f32_out_rz_ftz", "f16", "f16"),
    ("rz_f32_out_rz_ftz", "bf16", "bf16"),
    ("prod_p11", "f16", "f32"),
    ("inputs_b16_e2", "f16", "f32"),
    ("inputs_b16_e2", "bf16", "f32"),
    ("wide_w26_f16out", "f16", "f16"),
]


class _Emu(NumericsEmulation):
    """Only the numerics mixin: the float MMA entry of the emulator."""


def _target(model: DevModel, a: str, c: str, M: int = 16, N: int = 16, K: int = 16) -> Target:
    """The emulator configured with ``model``, through its float MMA entry
    (``run_float_mma``, as the CLI and the model tier call it); M = 8 where
    it offers the type pair only in the Intel shape (bf16 -> bf16)."""
    emu = _Emu()
    emu.set_model(model)
    if (a, c, M, N, K) not in NUMERICS_TARGETS:
        M = 8

    def mma(A, B, C):
        return emu.run_float_mma(a, c, M, N, K, A, B, C)

    return Target(f"emulator:{model.name}", M, N, K, a, c, mma)


def _random(a: str, c: str, S: int, M: int, N: int, K: int, seed: int):
    from reference.dtypes import etype

    rng = np.random.default_rng(seed)
    at, ct = etype(a), etype(c)

    def draw(shape, t):
        mag = np.where(rng.random(shape) < 0.5, rng.random(shape), 2.0 ** rng.uniform(-12, 4, shape))
        return t.round(np.where(rng.random(shape) < 0.5, -mag, mag))

    return draw((S, M, K), at), draw((S, K, N), at), draw((S, M, N), ct)


@pytest.mark.parametrize("name,a,c", CASES, ids=[f"{n}-{a}-{c}" for n, a, c in CASES])
def test_fingerprint_recovers_model(name, a, c):
    truth = MODELS[name]
    t = _target(truth, a, c)
    fp = fingerprint(t)
    got = fp.model
    want = truth.with_(block=0 if truth.block >= t.K else truth.block)
    wrong = {
        p: (getattr(want, p), getattr(got, p))
        for p in PARAMS
        if p not in fp.assumed and getattr(want, p) != getattr(got, p)
    }
    assert not wrong, f"{name} {a}->{c}: decided wrongly (configured, inferred): {wrong}"
    assert fp.replay["consistent"] == fp.replay["probes"], fp.replay["mismatches"]
    # the inferred model is the configured device, bit for bit, on random tiles
    A, B, C = _random(a, c, 64, t.M, t.N, t.K, seed=7)
    d_true = t.mma(A, B, C)
    d_inf = model_mma(got, A, B, C, a, c)
    same = (d_true == d_inf) | (np.isnan(d_true) & np.isnan(d_inf))
    assert same.all(), f"{int((~same).sum())} of {same.size} elements differ"


def test_fingerprint_evidence_names_the_deciding_input():
    fp = fingerprint(_target(MODELS["trunc_b8_e3"], "f16", "f32"))
    bs = fp.findings["block_structure"]
    assert bs.value["block"] == 8
    # the decisive probe: C=2^30, p0=-2^30 and a tiny product at k=8 survives
    ev = [e for e in bs.evidence if e.label == "fwd l=8"]
    assert ev and ev[0].result == 2.0**-28 and "p8=2^-28" in ev[0].input
    w = fp.findings["window"]
    assert w.value == {"bits": 27, "extra_bits": 3, "align": "rz", "align_ref": "value"}
    r = fp.findings["acc_rounding"]
    assert r.value == "rz" and len(r.evidence) == 4


def test_distinct_models_get_distinct_fingerprints():
    """A wrong inference would show up here: every pair of configured models
    that computes differently on random data is told apart."""
    seen = {}
    for name in ("ieee_rne_f32", "trunc_b4", "trunc_b8_e3", "trunc_b16_e2", "floor_b8_e2"):
        fp = fingerprint(_target(MODELS[name], "f16", "f32"))
        key = tuple(sorted((k, str(v)) for k, v in fp.model.as_dict().items() if k != "name"))
        assert key not in seen, f"{name} and {seen.get(key)} got the same fingerprint"
        seen[key] = name


def test_every_named_model_has_a_round_trip():
    assert {n for n, _, _ in CASES} == set(MODELS)


@pytest.mark.parametrize("fmt,np_type", [("f16", np.float16), ("f32", np.float32)])
def test_round_to_format_agrees_with_numpy_far_below_the_subnormals(fmt, np_type):
    """numpy's own conversion is the independent oracle for RNE.  Values far
    below half the smallest subnormal once rounded up to it (a shift of 64 or
    more bits wrapped); found by the lavapipe f16 fingerprint."""
    from reference.devmodel import round_to_format

    rng = np.random.default_rng(5)
    x = rng.uniform(1, 2, 4000) * np.exp2(rng.integers(-160, 20, 4000)) * rng.choice([-1, 1], 4000)
    x = np.concatenate(
        [x, [7.1e-14, -4.26e-13, 2.0**-25, 1.5 * 2.0**-25, 2.0**-150, 1.5 * 2.0**-150, 1e-300]]
    )
    got = round_to_format(x, fmt)
    with np.errstate(over="ignore"):
        want = x.astype(np_type).astype(np.float64)
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def test_step_format_rounds_twice():
    """An f16 accumulator computed in f32 hardware: each step rounds to f32,
    then to f16 (double rounding) — a case that tells it from one rounding."""
    m1 = DevModel(block=1, acc_format="f16", c_position="first")
    m2 = m1.with_(step_format="f32")
    # C = 1, products 2^-11 (a tie in f16) and 2^-40 (just above it, lost in f32)
    A = np.array([[[2.0**-11, 2.0**-20]]])
    B = np.array([[[1.0], [2.0**-20]]])
    C = np.array([[[1.0]]])
    one = model_mma(m1.with_(block=0), A, B, C, "f16", "f16")[0, 0, 0]
    assert one == 1.0 + 2.0**-10  # one rounding: above the tie goes up
    assert model_mma(m2.with_(block=0), A, B, C, "f16", "f16")[0, 0, 0] == 1.0  # via f32: a tie, to even
    with pytest.raises(ValueError):
        DevModel(acc_format="f32", step_format="f16")
