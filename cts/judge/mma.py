"""The one float multiply-accumulate verdict (rules E / R / F of
reference/tolerance.py) of every MMA family: the Intel built-ins, the split
and SPIR-V forms, cooperative matrix MulAdd / chains / gemm and joint_matrix
mad.

What really differs between the families is a named parameter, nothing else:

* ``full_precision``: the spec promises a full-precision accumulator (only
  the Intel OpenCL extensions say so, cl_intel_subgroup_matrix_multiply_accumulate), which lets the
  ``rounding`` tier be judged by Rule R in the default profile
  (``reference.tolerance.rounding_mode``);
* ``acc``: the weakest accumulation format a correct device may use (the
  Result type, or for joint_matrix the narrower of C and D, SYCL 2020
  joint_matrix extension: internal precision open);
* ``terms``: the K of the gamma bound (a chain of L MulAdds has L (K + 1)
  roundings: ``terms = L (K + 1) - 1``);
* ``variants``: other operand values a correct device may multiply (tf32
  containers truncated or rounded to nearest even, cl_intel_subgroup_matrix_multiply_accumulate_tf32);
* ``extra_bound``: a term the reference itself adds (f64 products rounded
  once more in float64: gamma_K(2^-53) * sum|t|);
* ``flush_inputs``: the special tier also accepts the result of subnormal
  inputs flushed to zero (no MMA spec rules on subnormals), and notes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reference.dtypes import ElemType, etype
from reference.mma import mma_float
from reference.tolerance import (
    Profile,
    exact_or_rounding_check,
    float_close,
    flush_subnormals,
    mma_float_bound,
    rounding_mode,
)

from .verdict import Rule, Verdict, compare

__all__ = ["MmaRules", "judge_mma_float", "EXACT_TIERS"]

EXACT_TIERS = ("exact", "onehot", "accprec")


@dataclass(frozen=True)
class MmaRules:
    """The family's parameters of the float MMA verdict (module docstring)."""

    full_precision: bool = False
    flush_inputs: bool = True
    extra_bound: Callable[[np.ndarray, int], np.ndarray] | None = None  # (abs_sum, K) -> bound term


def f64_products_term(abs_sum: np.ndarray, K: int) -> np.ndarray:
    """The float64 reference's own rounding of f64 products (K of them)."""
    from reference.tolerance import gamma

    return gamma(K, 2.0**-53) * abs_sum


def _nowhere(s: int, r: int, c: int) -> tuple[int, int]:
    return -1, -1


def judge_mma_float(
    A: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    D_bits: np.ndarray,
    result: ElemType | str,
    *,
    tier: str,
    profile: Profile,
    rules: MmaRules,
    terms: int,
    acc: ElemType | str | None = None,
    types: tuple[str, str, str] | None = None,
    variants: tuple[tuple[np.ndarray, np.ndarray], ...] = (),
    where: Callable[[int, int, int], tuple[int, int]] = _nowhere,
    hint=None,
    unwritten: np.ndarray | None = None,
) -> tuple[Verdict, np.ndarray, np.ndarray]:
    """The verdict on result bits ``D_bits`` (S, M, N) of D = A B + C for the
    logical operands A (S, M, K), B (S, K, N), C (S, M, N) as values.
    ``types``: the (A, B, C) element types, for flushing subnormal inputs.
    Returns (verdict, expected bits, acceptance mask)."""
    rt = etype(result) if isinstance(result, str) else result
    acc = rt if acc is None else acc
    D_bits = np.asarray(D_bits).astype(np.uint64, copy=False)
    ref = mma_float(A, B, C)
    exp_bits = rt.encode(ref.value)
    rmode = rounding_mode(profile, full_precision=rules.full_precision)
    if tier in EXACT_TIERS or (tier == "rounding" and rmode != "bound"):
        rule = Rule.R if tier == "rounding" else Rule.E
        if unwritten is None and np.array_equal(exp_bits, D_bits):  # the nearest-even bits: accepted
            v = Verdict(passed=True, elements=int(exp_bits.size), failures=0, rule=rule)
            return v, exp_bits, np.ones(exp_bits.shape, dtype=bool)
        actual = rt.decode(D_bits)
        ok, rbound, _, err = exact_or_rounding_check(rt, ref.value, actual, tier, rmode)
        v = compare(
            exp_bits, D_bits, rt, ok, rule, where, error=err, bound=rbound, hint=hint, unwritten=unwritten
        )
        return v, exp_bits, ok

    actual = rt.decode(D_bits)

    def bound_of(r):
        b = mma_float_bound(r.abs_sum, r.value, terms, acc, rt, profile)
        return b if rules.extra_bound is None else b + rules.extra_bound(r.abs_sum, terms)

    bound = bound_of(ref)
    ok = float_close(ref.value, actual, bound)
    notes = []
    if variants:
        notes.append("tf32 operands carry random bits below tf32 precision: truncation or RNE accepted")
    for Aa, Bb in variants:
        r = mma_float(Aa, Bb, C)
        ok = ok | float_close(r.value, actual, bound_of(r))
    if tier == "special" and rules.flush_inputs and not ok.all():
        ta, tb, tc = (etype(x) for x in (types or (rt.name, rt.name, rt.name)))
        ok_f = np.zeros_like(ok)
        for Aa, Bb in ((A, B), *variants):
            r = mma_float(flush_subnormals(Aa, ta), flush_subnormals(Bb, tb), flush_subnormals(C, tc))
            ok_f = ok_f | float_close(r.value, actual, bound_of(r))
        only = int((ok_f & ~ok).sum())
        if only:
            notes.append(f"{only} elements match only with subnormal inputs flushed")
        ok = ok | ok_f
    with np.errstate(invalid="ignore"):
        err = np.where(np.isfinite(ref.value) & np.isfinite(actual), np.abs(actual - ref.value), 0.0)
    v = compare(
        exp_bits, D_bits, rt, ok, Rule.F, where, error=err, bound=bound, hint=hint, unwritten=unwritten
    )
    v.notes.extend(notes)
    return v, exp_bits, ok
