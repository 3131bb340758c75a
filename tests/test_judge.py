"""The one judge (cts/judge): the rule enumeration, the exact comparisons,
the sentinel fills, the undefined-element accounting and the named
parameters of the float MMA verdict, each shown to reject wrong input."""

import numpy as np
import pytest

from cts.judge import (
    MmaRules,
    Rule,
    compare,
    exact_verdict,
    judge_mma_float,
    same_bits_or_nan,
    same_value,
    sentinel,
)
from cts.judge.mma import f64_products_term
from reference.dtypes import etype
from reference.mma import mma_float
from reference.tolerance import PROFILES, flush_subnormals

F32, F16, I8, I32 = etype("f32"), etype("f16"), etype("i8"), etype("i32")


def _nowhere(s, r, c):
    return -1, -1


# ------------------------------------------------------------ the rules
def test_rule_letters_are_strings_in_journals_and_reports():
    assert Rule.F == "F" and str(Rule.B) == "B"
    assert {r.value for r in Rule if r.bounded} == {"F", "R", "C", "D"}
    assert Rule.describe("E").startswith("exactly representable")
    assert Rule.describe("exact") == ""  # an older journal's word: no text, no crash


def test_html_reads_the_enumeration():
    from cts.report import html

    assert set(html._BOUND_RULES) == {r.value for r in Rule if r.bounded}
    legend = html.rules_legend([{"rule": "F"}, {"rule": "exact"}])
    assert "gamma_n" in legend and "older journal" in legend


# ------------------------------------------------------------ exact
def test_value_identity_and_bit_identity():
    e = F32.encode(np.array([0.0, np.nan, 1.0]))
    a = F32.encode(np.array([-0.0, -np.nan, 1.0]))
    assert same_value(e, a, F32).all()
    assert not exact_verdict(e[None, None], a[None, None], F32, bitwise=True).passed
    assert exact_verdict(e[None, None], a[None, None], F32).passed
    assert exact_verdict(e[None, None], a[None, None], F32).rule == Rule.E
    assert same_bits_or_nan(e, a, F32).tolist() == [False, True, True]  # T / X: -0 is not +0


def test_integers_compare_bits():
    v = exact_verdict(np.array([[1, 2, 3]], np.uint8), np.array([[1, 2, 4]], np.uint8), I8)
    assert v.rule == Rule.I and v.failures == 1


# ------------------------------------------------------------ sentinels
@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "tf32", "f64"])
def test_float_sentinels_are_nans_no_operation_returns(name):
    t = etype(name)
    b = sentinel.sentinel_bits(t)
    with np.errstate(invalid="ignore"):
        assert np.isnan(t.decode(np.array([b], np.uint64)))[0]
    default = {
        16: (0x7E00, 0xFE00, 0x7FC0, 0xFFC0),
        32: (0x7FC00000, 0xFFC00000),
        64: (0x7FF8 << 48, 0xFFF8 << 48),
    }
    assert b not in default[t.bits]
    if t.bits >= 32:  # a signalling NaN: the quiet bit is clear
        assert not b & (1 << (t.man_bits - 1))


def test_integer_fill_differs_from_the_expected_value_everywhere():
    exp = np.arange(256, dtype=np.uint64).reshape(1, 256)  # every 8-bit pattern once
    f = sentinel.fill(I8, exp.shape, np.uint8, expected=exp)
    assert (f.astype(np.uint64) != exp).all()


def test_fill_avoiding_takes_a_value_no_input_holds():
    vals = np.array([[0xA5, 0xA6, 1], [2, 3, 4]], np.uint64)
    f = sentinel.fill_avoiding(I8, (2, 5), np.uint8, vals)
    assert f[0, 0] == 0xA7 and f[1, 0] == 0xA5 and (f[0] == f[0, 0]).all()


def test_never_written_is_named_and_fails_whatever_ok_says():
    e = F32.encode(np.array([[[np.nan, 1.0, 2.0]]]))
    fill = np.uint64(sentinel.sentinel_bits(F32))
    a = np.array([[[fill, fill, F32.encode(np.array(2.0))]]], np.uint64)
    ok = np.array([[[True, False, True]]])  # a NaN rule accepts the sentinel NaN for the NaN
    v = compare(e, a, F32, ok, Rule.F, _nowhere, unwritten=a == fill)
    assert (v.failures, v.never_written) == (2, 2)
    assert all("never written" in m.line() for m in v.mismatches)
    assert "2 never written" in v.summary()


def test_a_fill_equal_to_the_expected_bits_is_not_named():
    e = np.array([[[5, 6]]], np.uint64)
    v = compare(e, e.copy(), I32, np.ones(e.shape, bool), Rule.I, _nowhere, unwritten=np.ones(e.shape, bool))
    assert v.passed and v.never_written == 0


# ------------------------------------------------------------ undefined elements
def test_undefined_elements_are_counted_not_judged():
    e = np.array([[[1, 2, 3, 4]]], np.uint64)
    a = np.array([[[1, 9, 9, 4]]], np.uint64)
    ok = e == a
    und = {"divisor outside [2^-126, 2^126]": np.array([[[False, True, True, False]]])}
    v = compare(e, a, I32, ok, Rule.E, _nowhere, undefined=und)
    assert v.passed and v.elements == 2 and v.undefined == {"divisor outside [2^-126, 2^126]": 2}
    assert "undefined by the environment: 2 elements: divisor outside [2^-126, 2^126]" in v.summary()
    assert not compare(e, a, I32, ok, Rule.E, _nowhere).passed  # without the latitude: judged, wrong


# ------------------------------------------------------------ the MMA verdict's parameters
def _mma(rng, S=4, M=4, K=16, N=8, scale=1.0):
    A = rng.uniform(-1, 1, (S, M, K)) * scale
    B = rng.uniform(-1, 1, (S, K, N))
    C = rng.uniform(-1, 1, (S, M, N))
    return F16.round(A), F16.round(B), F32.round(C)


def test_rounding_tier_rule_follows_full_precision():
    rng = np.random.default_rng(1)
    A, B, C = (np.round(x * 8) / 8 for x in _mma(rng))
    D = F16.encode(mma_float(A, B, C).value)
    args = dict(tier="rounding", profile=PROFILES["default"], terms=16)
    v_full, _, _ = judge_mma_float(A, B, C, D, F16, rules=MmaRules(full_precision=True), **args)
    v_open, _, _ = judge_mma_float(A, B, C, D, F16, rules=MmaRules(full_precision=False), **args)
    assert (v_full.rule, v_open.rule) == (Rule.R, Rule.F)


def test_operand_variants_accept_only_what_they_name():
    """A device that rounds tf32 operands to nearest even: accepted with the
    variant, rejected without it (the injected fault: a judge that forgets the
    variants)."""
    rng = np.random.default_rng(2)
    A = rng.uniform(1, 2, (2, 4, 64))
    B = rng.uniform(1, 2, (2, 64, 8))
    C = np.zeros((2, 4, 8))
    A_rne = np.float32(A).view(np.uint32)
    A_rne = (
        ((A_rne.astype(np.uint64) + 0x1000) & 0xFFFFE000)
        .astype(np.uint32)
        .view(np.float32)
        .astype(np.float64)
    )
    A_tr = (np.float32(A).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    D = F32.encode(mma_float(A_rne, B, C).value)
    args = dict(tier="random", profile=PROFILES["strict"], rules=MmaRules(), terms=64)
    with_v, _, _ = judge_mma_float(A_tr, B, C, D, F32, variants=((A_rne, B),), **args)
    without, _, _ = judge_mma_float(A_tr, B, C, D, F32, **args)
    assert with_v.passed and not without.passed


def test_extra_bound_term_widens_the_bound_by_its_amount():
    """joint_matrix's f64 term: a result just past the plain bound and inside
    the widened one passes only with the term (the injected fault: a judge
    that drops it)."""
    from reference.tolerance import mma_float_bound

    rng = np.random.default_rng(3)
    A, B, C = (rng.uniform(1, 2, s) for s in ((1, 2, 8), (1, 8, 2), (1, 2, 2)))
    ref = mma_float(A, B, C)
    f64 = etype("f64")
    b0 = mma_float_bound(ref.abs_sum, ref.value, 8, f64, f64, PROFILES["default"])
    extra = f64_products_term(ref.abs_sum, 8)
    D = f64.encode(ref.value + b0 + extra / 2)
    args = dict(tier="random", profile=PROFILES["default"], terms=8)
    assert judge_mma_float(A, B, C, D, f64, rules=MmaRules(extra_bound=f64_products_term), **args)[0].passed
    assert not judge_mma_float(A, B, C, D, f64, rules=MmaRules(), **args)[0].passed


def test_input_flushing_is_accepted_only_on_the_special_tier_and_noted():
    A = np.full((1, 1, 2), 2.0**-20)  # subnormal in f16
    B = np.full((1, 2, 1), 2.0**10)
    C = np.full((1, 1, 1), 1.0)
    flushed = mma_float(flush_subnormals(A, F16), B, C).value  # = 1.0
    D = F32.encode(flushed)
    args = dict(profile=PROFILES["strict"], terms=2, types=("f16", "f16", "f32"))
    v, _, _ = judge_mma_float(A, B, C, D, F32, tier="special", rules=MmaRules(), **args)
    assert v.passed and any("flushed" in n for n in v.notes)
    assert not judge_mma_float(A, B, C, D, F32, tier="special", rules=MmaRules(flush_inputs=False), **args)[
        0
    ].passed
    assert not judge_mma_float(A, B, C, D, F32, tier="random", rules=MmaRules(), **args)[0].passed
