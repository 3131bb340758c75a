"""Acceptance rules, each with its derivation.

No spec gives a floating-point accuracy bound or an order for subgroup MMA
(SPV_INTEL_subgroup_matrix_multiply_accumulate, SPV_KHR_cooperative_matrix, Vulkan): precision and order
are implementation-defined.  A CTS must never fail a correct implementation and must still catch wrong
ones, so every
rule below is derived from what the specs do fix, plus one documented
assumption per profile.

Rule I (integers) -- exact.  The spec defines the low-order bits of the exact
result (wrap) or a clamp (saturating cooperative matrix).  Bound 0.

Rule F (float multiply-accumulate, tiers ``random`` / ``special``).
  The device computes s = c + sum_{k<K} a_k b_k over n = K + 1 terms.
  (1) Products of fp16/bf16/tf32 inputs have <= 22 significant bits, so they
      are exact in any accumulator of >= 24 bits; where the accumulator is
      narrower the product's rounding is one more rounded operation, counted
      in (2) by using n instead of n - 1 operations.
  (2) Any evaluation order (sequential, pairwise, blocked / fused multi-term
      adders that round once per block, wider internal registers) performs at
      most n roundings on the path to each term, each with relative error at
      most u' where u' = u (round to nearest) or 2u (directed rounding, e.g.
      truncation, which the H100 is seen to use: reports/numerics/).
      Hence |s_hat - s| <= gamma_n(u') * sum|t_i|, gamma_n(u) = n u / (1 - n u)
      (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2).
      u is the unit roundoff of the accumulation format; the profile says
      which format is assumed at worst (default: the accumulator type itself,
      the weakest format a "full precision" accumulator can have).
  (3) Underflow: each rounding may in addition lose an absolute amount up to
      the smallest normal of the accumulation format (this also admits
      flushing denormal intermediates to zero): + n * tiny_acc.
  (4) The final conversion to a narrower result type adds one ulp of the
      result format at |s| + e (directed) or half an ulp (nearest).
  (5) The float64 reference itself errs by at most gamma_n(2^-53) sum|t_i|.
  The per-element bound is the sum of (2)-(5).  It scales with sum|t_i|, not
  |s|, because cancellation makes any relative-to-result rule either flaky
  (fails correct devices) or blind (an absolute epsilon hides wrong bits).

Rule E (tiers ``exact`` and ``onehot``): inputs are chosen so every partial
  sum in every order is representable in the accumulation format (small
  half-integer data, one-hot rows).  Then no rounding happens and the result
  is unique: bound 0, compared bit for bit (+0 and -0 compare equal: the
  sign of an exact zero sum depends on the order and rounding direction).

Rule E also judges tier ``accprec`` (every float multiply-accumulate entry):
  every partial sum of C and any subset of the products, and every
  intermediate Result of a chain, is an odd number of last-place units of
  the accumulator type T (of C and Result, the one with fewer significand
  bits) at a magnitude that needs all p(T) bits (reference.data.
  accprec_operands).  A device that accumulates in T or wider rounds
  nothing and must return the exact sum bit for bit; one whose accumulator
  (or C as loaded, or any chain step) is one precision step narrower
  (f64 -> f32, f32 -> f16 / bf16 / tf32, f16 -> bf16) cannot represent a
  single result element.  Spec basis: the Intel extensions' "full
  precision" accumulator (cl_intel_subgroup_matrix_multiply_accumulate); for SPV_KHR_cooperative_
  matrix (internal precision "defined by the client API", OpCooperativeMatrixMulAddKHR),
  Vulkan, SPV_INTEL (OpSubgroupMatrixMultiplyAccumulateINTEL), SYCL joint_matrix and MLIR, whose texts leave
  the internal precision open, it is the assumption Rule F (2) already
  makes in every profile: the accumulation format is at worst the
  accumulator type itself (``Profile.acc_format`` may only widen it).

Rule R (tier ``rounding``, 16-bit results only).  Inputs make the fp32 sum
  s exact in any order and not representable in the 16-bit result type.  The
  Intel and split extensions call the accumulator "full precision"; no spec
  names the direction of the final conversion (Vulkan's spirvenv: "correctly
  rounded with implementation-defined direction"; the Intel and SPIR-V texts:
  precision implementation-defined).  So the rule is per profile:
  * ``default`` -- faithful: the result is one of the two result-type values
    that bracket s (round down or round up of the exact sum).  A device that
    accumulates at full precision and converts once passes in any direction
    (truncation included); a device that loses bits of s before the
    conversion, or returns anything else, fails.
  * ``strict`` -- the nearest-even value RNE(s), bit for bit (an
    IEEE-faithful device; the only mode the Intel conversion built-ins name).
  * ``relaxed`` -- no "full precision" assumption: the tier is judged with
    Rule F like ``random``.
  Only the Intel OpenCL extensions say "full precision".  For specs that
  leave internal precision open (SPV_INTEL: "precision implementation-
  defined"; SYCL joint_matrix; Vulkan cooperative matrix) ``default`` judges
  the tier with Rule F; ``strict`` still requires RNE (``rounding_mode``).

Rule T (tf32 conversion built-ins): round to nearest even, bit for bit; NaN
  may change payload but must stay NaN; +-inf preserved.

Special values: a NaN reference accepts any NaN; an infinite reference
  requires the same infinity; subnormal inputs may be honoured or flushed to
  zero (no spec says), both are accepted and the report says which was seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dtypes import ElemType, etype

__all__ = [
    "Profile",
    "PROFILES",
    "gamma",
    "mma_float_bound",
    "float_close",
    "flush_subnormals",
    "rounding_mode",
    "rounding_bracket",
    "rounding_tier_check",
    "exact_or_rounding_check",
    "RULES",
]

RULES = {
    "I": "integers exact (wrap or saturate)",
    "E": "exactly representable data: bit-exact",
    "F": "gamma_n(u') * sum|a*b|+|c| + n*tiny + result rounding",
    "R": "fp32-exact sum, one conversion to the 16-bit result: either neighbour (default) or RNE (strict)",
    "T": "tf32 conversion: RNE bit-exact",
}


@dataclass(frozen=True)
class Profile:
    """Per-device accuracy assumptions (overridable with --tolerance-profile)."""

    name: str
    # per-step rounding: "nearest" (u) or "directed" (2u; truncation allowed)
    step_rounding: str = "directed"
    # accumulation format assumed at worst, per accumulator type; None = itself
    acc_format: dict = field(default_factory=dict)
    # final conversion to a narrower result: "nearest" or "directed"
    final_rounding: str = "directed"
    # the rounding tier (Rule R): "faithful" (either neighbour of the exact
    # sum), "nearest" (RNE bit for bit) or "bound" (judged by Rule F)
    rounding_tier: str = "faithful"
    description: str = ""


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "default",
            description="any order, truncation allowed, 16-bit accumulators may round "
            "each step; rounding tier: where the spec says full precision (Intel built-ins) the "
            "exact sum converted once in either direction, elsewhere Rule F",
        ),
        Profile(
            "strict",
            step_rounding="nearest",
            acc_format={"f16": "f32", "bf16": "f32"},
            final_rounding="nearest",
            rounding_tier="nearest",
            description="round-to-nearest everywhere, fp32 accumulation for 16-bit "
            "accumulators, rounding tier RNE bit for bit (an IEEE-faithful device)",
        ),
        Profile(
            "relaxed",
            rounding_tier="bound",
            description="as default, and the rounding tier is judged by Rule F "
            "(no full-precision assumption)",
        ),
    )
}


def gamma(n: np.ndarray | int, u: float) -> np.ndarray:
    n = np.asarray(n, dtype=np.float64)
    nu = n * u
    return np.where(nu < 1, nu / np.maximum(1 - nu, 1e-300), np.inf)


def mma_float_bound(
    abs_sum: np.ndarray,
    value: np.ndarray,
    K: int,
    acc: ElemType | str,
    result: ElemType | str,
    profile: Profile = PROFILES["default"],
) -> np.ndarray:
    """Per-element bound of Rule F (see module docstring) as float64."""
    acc = etype(acc) if isinstance(acc, str) else acc
    result = etype(result) if isinstance(result, str) else result
    fmt = etype(profile.acc_format.get(acc.name, acc.name))
    n = K + 1
    u_step = fmt.unit_roundoff * (2.0 if profile.step_rounding == "directed" else 1.0)
    e_acc = gamma(n, u_step) * abs_sum + n * fmt.tiny
    e_ref = gamma(n, 2.0**-53) * abs_sum
    bound = e_acc + e_ref
    if result.precision < fmt.precision or result.name != fmt.name:
        ulps = 1.0 if profile.final_rounding == "directed" else 0.5
        bound = bound + ulps * result.ulp(np.abs(value) + bound)
    return bound


def float_close(expected: np.ndarray, actual: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Element-wise acceptance: within bound, NaN matches NaN, inf must match."""
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(bound, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        # common case first: every expected value finite and every element within
        # its bound (then each element is "close" or, past the format, "big")
        fast = np.abs(a - e) <= b
        if fast.all() and np.isfinite(e).all():
            return fast
        both_nan = np.isnan(e) & np.isnan(a)
        inf_ok = np.isinf(e) & (a == e)
        finite = np.isfinite(e) & np.isfinite(a)
        close = finite & (np.abs(a - e) <= b)
        # a finite reference whose bound reaches past the format may overflow
        big = np.isfinite(e) & np.isinf(a) & np.isinf(b)
    return both_nan | inf_ok | close | big


def flush_subnormals(x: np.ndarray, t: ElemType) -> np.ndarray:
    """``x`` with the values below ``t``'s smallest normal replaced by a zero of
    the same sign: the inputs as a flushing device sees them (the acceptance
    alternative of the special tier; no spec here rules on subnormals)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(np.abs(x) < t.tiny, np.copysign(0.0, x), x)


def rounding_mode(profile: Profile, full_precision: bool) -> str:
    """The Rule R mode for a spec: ``full_precision`` says whether the spec
    promises a full-precision accumulator (the Intel OpenCL extensions).
    Without that promise only ``strict`` (which assumes fp32 accumulation
    outright) judges the tier exactly; otherwise it is Rule F ("bound")."""
    if profile.rounding_tier == "faithful" and not full_precision:
        return "bound"
    return profile.rounding_tier


def rounding_bracket(t: ElemType, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nearest-even, other) values of ``t`` that bracket ``exact``; equal
    where ``exact`` is representable."""
    s = np.asarray(exact, dtype=np.float64)
    bits = t.encode(s)  # nearest even
    near = t.decode(bits)
    with np.errstate(invalid="ignore"):
        # the other bracketing value: one step in magnitude away from or toward zero
        # (sign-magnitude formats: +-1 on the raw bits moves the magnitude)
        up = np.abs(near) < np.abs(s)
        down = np.abs(near) > np.abs(s)
    step = np.where(up, 1, np.where(down, -1, 0)).astype(np.int64)
    return near, t.decode((bits.astype(np.int64) + step).astype(np.uint64))


def rounding_tier_check(t: ElemType, exact: np.ndarray, actual: np.ndarray, mode: str):
    """Rule R for the 16-bit result type ``t``: ``exact`` is the exact sum
    (float64), ``actual`` the decoded device result.  Returns (ok, bound):
    ``bound`` is the distance from RNE(exact) that the rule admits (0 for
    ``nearest``; the gap to the other bracketing value for ``faithful``), for
    the report's error plot."""
    if mode not in ("nearest", "faithful"):
        raise ValueError(f"rounding tier mode {mode!r}")
    near, other = rounding_bracket(t, exact)
    zero = np.zeros_like(near)
    if mode == "nearest":
        return float_close(near, actual, zero), zero
    ok = float_close(near, actual, zero) | float_close(other, actual, zero)
    with np.errstate(invalid="ignore"):
        bound = np.where(np.isfinite(other) & np.isfinite(near), np.abs(other - near), 0.0)
    return ok, bound


def exact_or_rounding_check(t: ElemType, exact: np.ndarray, actual: np.ndarray, tier: str, mode: str):
    """The bit-level rules of the float tiers: Rule E (tiers ``exact`` /
    ``onehot``: the exact sum is representable, compared bit for bit) or
    Rule R in ``mode`` (tier ``rounding``).  Returns (ok, bound, rule, err)
    where ``err`` is the distance from the nearest-even value of the sum."""
    expected = t.round(exact)
    if tier == "rounding":
        ok, bound = rounding_tier_check(t, exact, actual, mode)
        rule = "R"
    else:
        ok, bound = float_close(expected, actual, np.zeros_like(expected)), np.zeros_like(expected)
        rule = "E"
    with np.errstate(invalid="ignore"):
        diff = actual - expected
        err = np.abs(diff if np.isfinite(diff).all() else np.nan_to_num(diff))
    return ok, bound, rule, err
