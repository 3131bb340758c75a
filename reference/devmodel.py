"""A parametrized, bit-exact model of a hardware float multiply-accumulate.

No spec fixes the precision or the order of a float subgroup MMA
(SPV_INTEL, SPV_KHR_cooperative_matrix, Vulkan: "implementation-defined"), so a device can only be
simulated bit for bit from a *fingerprint* of how it computes.  The
parameters are the features Fasi, Higham, Mikaitis and Pranesh ("Numerical
behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330, 2021) measure:

* ``product_format``: products are exact (None) or rounded (RNE) to a format.
* ``block``: how many products are summed in one fused step (a multi-operand
  adder) before one rounding; ``order``: blocks over K taken in increasing
  ("forward") or decreasing ("reverse") k.
* ``c_position``: C is one more operand of the first fused step ("first") or
  added in its own step after the products ("last").
* ``extra_bits``: alignment window.  In each step all operands are aligned to
  the largest exponent E and cut at 2^(E - (p - 1) - extra_bits), p the
  precision of the accumulation format (negative values: a window narrower
  than the format, e.g. a 26-bit window feeding an exact wide accumulator):
  bits below are dropped.  ``None`` =
  no cut (the exact sum is rounded once: IEEE-faithful).  ``align`` says how
  the cut rounds: "rz" (sign-magnitude truncation) or "rd" (two's-complement
  floor).  ``align_ref``: the exponent a product is aligned by: its value's
  ("value") or the sum of the input exponents before normalization
  ("inputs": a product with significand in [2, 4) then sits one bit above
  its alignment exponent and keeps one more low bit).
* ``acc_format`` / ``acc_rounding``: format and rounding of every step's
  normalized result (rne, rna, rz, ru, rd).
* ``step_format``: a wider format every step's result is rounded to first
  (RNE), before ``acc_format`` (None: straight to ``acc_format``): an f16
  accumulator computed by f32 hardware, rounded twice.
* ``out_rounding``: conversion of the final accumulator to the result type
  (fp16 / bf16) when it is narrower than the accumulation format.
* subnormal handling of inputs A/B, of C and step results, of the output;
  ``overflow``: "ieee" (directed modes stop at the largest finite number) or
  "inf" (any overflow gives infinity).

Every step is computed exactly with integers (int64 when the window fits,
Python integers otherwise), so the model is bit-exact by construction.
Special values (NaN, infinities in inputs) follow IEEE float64 semantics:
inf*0 and inf-inf give NaN, NaN propagates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from .dtypes import ElemType, etype

__all__ = ["DevModel", "MODELS", "model_mma", "round_to_format", "ROUNDINGS"]

ROUNDINGS = ("rne", "rna", "rz", "ru", "rd")


@dataclass(frozen=True)
class DevModel:
    """One device's float multiply-accumulate (see the module docstring)."""

    name: str = "custom"
    block: int = 0  # products per fused step; 0 = all K in one step
    order: str = "forward"
    c_position: str = "first"
    extra_bits: int | None = None
    align: str = "rz"
    align_ref: str = "value"
    acc_format: str = "f32"
    acc_rounding: str = "rne"
    out_rounding: str = "rne"
    product_format: str | None = None
    step_format: str | None = None
    subnormal_inputs: str = "keep"
    subnormal_acc: str = "keep"
    subnormal_out: str = "keep"
    overflow: str = "ieee"

    def __post_init__(self) -> None:
        for f, ok in (
            ("order", ("forward", "reverse")),
            ("c_position", ("first", "last")),
            ("align", ("rz", "rd")),
            ("align_ref", ("value", "inputs")),
            ("acc_rounding", ROUNDINGS),
            ("out_rounding", ROUNDINGS),
            ("subnormal_inputs", ("keep", "flush")),
            ("subnormal_acc", ("keep", "flush")),
            ("subnormal_out", ("keep", "flush")),
            ("overflow", ("ieee", "inf")),
        ):
            if getattr(self, f) not in ok:
                raise ValueError(f"DevModel.{f} must be one of {ok}, got {getattr(self, f)!r}")
        p = etype(self.acc_format).precision
        if self.block < 0 or (self.extra_bits is not None and self.extra_bits <= -p):
            raise ValueError("DevModel.block must be >= 0 and the window at least one bit")
        if self.product_format is not None:
            etype(self.product_format)
        if self.step_format is not None and etype(self.step_format).precision <= p:
            raise ValueError("DevModel.step_format must be wider than the accumulation format")

    def as_dict(self) -> dict:
        return asdict(self)

    def with_(self, **kw) -> DevModel:
        return replace(self, **kw)

    def summary(self) -> str:
        p = etype(self.acc_format).precision
        win = (
            "exact"
            if self.extra_bits is None
            else f"{p + self.extra_bits} bits = p{self.extra_bits:+d} ({self.align}, by {self.align_ref} exponents)"
        )
        blk = "K" if self.block == 0 else str(self.block)
        return (
            f"block {blk} {self.order}, C {self.c_position}, window {win}, "
            f"acc {self.acc_format}/{self.acc_rounding}, out {self.out_rounding}, "
            f"products {'exact' if self.product_format is None else self.product_format}, "
            + (f"steps via {self.step_format}, " if self.step_format else "")
            + f"subnormals in/acc/out {self.subnormal_inputs}/{self.subnormal_acc}/{self.subnormal_out}, "
            f"overflow {self.overflow}"
        )


# ---------------------------------------------------------------- integers
def _bitlen(a: np.ndarray) -> np.ndarray:
    """Bit length of non-negative integers (int64 or Python ints)."""
    if a.dtype == object:
        return np.array([int(x).bit_length() for x in a.ravel()], dtype=np.int64).reshape(a.shape)
    f = a.astype(np.float64)
    n = np.where(a > 0, np.frexp(f)[1], 0).astype(np.int64)
    # float64 may round a up to the next power of two: correct by one
    too_big = (n > 0) & (a < (np.int64(1) << np.clip(n - 1, 0, 62)))
    return n - too_big


def _shr(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """a >> s for non-negative a and s >= 0 (s may exceed the width)."""
    if a.dtype == object:
        return np.array([int(x) >> int(k) for x, k in zip(a.ravel(), s.ravel())], dtype=object).reshape(
            a.shape
        )
    return np.where(s >= 63, 0, a >> np.clip(s, 0, 62))


def _shl(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    if a.dtype == object:
        return np.array([int(x) << int(k) for x, k in zip(a.ravel(), s.ravel())], dtype=object).reshape(
            a.shape
        )
    return a << s


def _round_int(neg: np.ndarray, a: np.ndarray, q: np.ndarray, mode: str) -> np.ndarray:
    """Round the magnitude ``a`` (sign ``neg``) to a multiple of 2^q (q >= 0),
    returning the multiplier (a rounded) >> q as a non-negative integer."""
    hi = _shr(a, q)
    rem = a - _shl(hi, q)
    nz = rem != 0
    if mode == "rz":
        return hi
    if mode == "ru":
        return hi + (nz & ~neg)
    if mode == "rd":
        return hi + (nz & neg)
    if a.dtype == object:
        half = np.where(q > 0, _shl(np.ones_like(a), np.maximum(q - 1, 0)), 0).astype(object)
        live = q > 0
    else:  # int64: a < 2^63, so from q = 64 on, a is below half a unit (the shift must not wrap)
        half = np.where(q > 0, np.int64(1) << np.clip(q - 1, 0, 62), 0)
        live = (q > 0) & (q < 64)
    gt = (rem > half) & live
    eq = (rem == half) & live
    if mode == "rna":
        return hi + (gt | eq)
    odd = (hi % 2) == 1
    return hi + (gt | (eq & odd))


def _round_scaled(
    neg: np.ndarray, a: np.ndarray, L: np.ndarray, fmt: ElemType, mode: str, overflow: str, flush: bool
) -> np.ndarray:
    """Round the exact value (-1)^neg * a * 2^L to ``fmt``; float64 result."""
    p = fmt.precision
    n = _bitlen(a)
    q = np.maximum(n - p, (fmt.emin - (p - 1)) - L)
    q = np.where(a == 0, 0, q)
    up = q <= 0
    qq = np.maximum(q, 0)
    hi = _round_int(neg, a, qq, mode)
    mant = np.where(up, a, hi)
    expo = np.where(up, L, L + qq)
    if mant.dtype == object:
        mag = np.array([float(int(m)) for m in mant.ravel()]).reshape(mant.shape)
    else:
        mag = mant.astype(np.float64)
    with np.errstate(over="ignore"):
        val = np.ldexp(mag, np.clip(expo, -1100, 1100).astype(np.int64))
    big = val > fmt.max_finite
    if big.any():
        if overflow == "inf" or mode in ("rne", "rna"):
            sat = np.full(val.shape, np.inf)
        else:
            to_inf = (mode == "ru") & ~neg | (mode == "rd") & neg
            sat = np.where(to_inf, np.inf, fmt.max_finite)
        val = np.where(big, sat, val)
    if flush:
        val = np.where(val < fmt.tiny, 0.0, val)
    return np.where(neg, -val, val)


def _decompose(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact finite float64 -> (neg, |mantissa| int64 < 2^53, exponent of its lsb)."""
    f, e = np.frexp(np.abs(t))
    m = np.ldexp(f, 53).astype(np.int64)
    return np.signbit(t), m, (e - 53).astype(np.int64)


def round_to_format(
    x: np.ndarray, fmt: ElemType | str, mode: str = "rne", overflow: str = "ieee", flush: bool = False
) -> np.ndarray:
    """Round float64 values to ``fmt`` with one of ROUNDINGS (NaN and inf kept)."""
    fmt = etype(fmt) if isinstance(fmt, str) else fmt
    x = np.asarray(x, dtype=np.float64)
    fin = np.isfinite(x)
    xs = np.where(fin, x, 0.0)
    if not fin.all():
        x = np.where(np.isnan(x), np.nan, x)
    neg, m, L = _decompose(xs)
    r = _round_scaled(neg, m, L, fmt, mode, overflow, flush)
    r = np.where(xs == 0, xs, r)
    return np.where(fin, r, x)


# ------------------------------------------------------------- one step
def _fused_step(
    terms: np.ndarray, model: DevModel, fmt: ElemType, aexp: np.ndarray | None = None
) -> np.ndarray:
    """Sum terms (..., n) (exact finite float64) in one fused step: align to
    the largest exponent (``aexp``: per-term alignment exponents, default
    floor(log2|t|)), cut the window, add exactly, round to ``fmt``."""
    p = fmt.precision
    bad = ~np.isfinite(terms)
    if bad.any():  # an earlier step overflowed: infinities propagate
        with np.errstate(invalid="ignore"):
            inf_sum = np.where(bad, terms, 0.0).sum(axis=-1)
        terms = np.where(bad, 0.0, terms)
        return np.where(bad.any(axis=-1), inf_sum, _fused_step(terms, model, fmt, aexp))
    neg, m, L = _decompose(terms)
    nz = m != 0
    top = L + _bitlen(m) - 1  # floor(log2|t|)
    if aexp is not None:  # products aligned by their input exponents; C / acc by value
        top = np.where(aexp < np.iinfo(np.int64).max // 8, aexp, top)
    top = np.where(nz, top, np.iinfo(np.int64).min // 4)
    E = top.max(axis=-1, keepdims=True)
    logn = int(np.ceil(np.log2(terms.shape[-1] + 1)))
    if model.extra_bits is None:  # no cut: the lsb of the smallest operand
        lsb = np.where(nz, L, np.iinfo(np.int64).max // 4).min(axis=-1, keepdims=True)
        wide = (E - lsb)[..., 0] + 2 + logn > 61
    else:
        lsb = E - (p - 1) - model.extra_bits
        wide = np.full(E.shape[:-1], p + model.extra_bits + 2 + logn > 61)
    lsb = np.where(nz.any(axis=-1, keepdims=True), lsb, 0)
    lsb = np.where(wide[..., None], E, lsb)  # int64 pass: placeholder for wide rows
    acc_mode, flush = model.acc_rounding, model.subnormal_acc == "flush"
    S = _aligned_sum(neg, m, L, lsb, model.align)
    lsb0 = lsb[..., 0]
    sneg = S < 0
    mag = np.where(sneg, -S, S)
    out = _round_scaled(sneg, mag, lsb0, fmt, acc_mode, model.overflow, flush)
    if wide.any():  # rows whose window exceeds int64: Python integers
        idx = np.nonzero(wide)
        lw = np.where(nz, L, np.iinfo(np.int64).max // 4).min(axis=-1, keepdims=True)[idx]
        if model.extra_bits is not None:
            lw = (E - (p - 1) - model.extra_bits)[idx]
        Sw = _aligned_sum(neg[idx], m[idx].astype(object), L[idx], lw, model.align)
        swn = np.array([x < 0 for x in Sw], dtype=bool)
        mw = np.array([abs(x) for x in Sw], dtype=object)
        out[idx] = _round_scaled(swn, mw, lw[..., 0], fmt, acc_mode, model.overflow, flush)
        mag = mag.astype(object)
        mag[idx] = mw
    # an exact zero sum is +0 (-0 when rounding down), or -0 when every term is -0
    allneg0 = np.all(terms == 0, axis=-1) & np.all(np.signbit(terms), axis=-1)
    zero = -0.0 if model.acc_rounding == "rd" else 0.0
    return np.where(mag == 0, np.where(allneg0, -0.0, zero), out)


def _aligned_sum(neg, m, L, lsb, align: str):
    """Exact sum of the operands cut at 2^lsb (per row, last axis)."""
    sh = L - lsb  # >= 0: shift left into the window; < 0: cut
    left = _shl(m, np.maximum(sh, 0))
    kept = _shr(m, np.maximum(-sh, 0))
    cut = np.where(sh >= 0, left, kept)
    if align == "rd":  # two's-complement floor: negative operands lose toward -inf
        lost = (sh < 0) & (_shl(kept, np.maximum(-sh, 0)) != m)
        cut = np.where(neg & lost, cut + 1, cut)
    return np.where(neg, -cut, cut).sum(axis=-1)


def _expo(x: np.ndarray, t: ElemType) -> np.ndarray:
    """Exponent field value of a format: floor(log2|x|), emin for subnormals."""
    ax = np.abs(x)
    ax = np.where((ax > 0) & np.isfinite(ax), ax, 1.0)  # inf / NaN rows are replaced later
    e = np.floor(np.log2(ax)).astype(np.int64)
    return np.maximum(e, t.emin)


def _flush(x: np.ndarray, t: ElemType) -> np.ndarray:
    return np.where(np.abs(x) < t.tiny, np.copysign(0.0, x), x)


def _step(terms, model: DevModel, acc: ElemType, ae=None) -> np.ndarray:
    """One fused step to the accumulator, through ``step_format`` first when set."""
    if model.step_format is None:
        return _fused_step(terms, model, acc, ae)
    wide = _fused_step(terms, replace(model, acc_rounding="rne"), etype(model.step_format), ae)
    flush = model.subnormal_acc == "flush"
    return round_to_format(wide, acc, model.acc_rounding, model.overflow, flush)


# --------------------------------------------------------------- the MMA
def model_mma(
    model: DevModel,
    A: np.ndarray,
    B: np.ndarray,
    C: np.ndarray,
    in_type: str,
    c_type: str,
    out_type: str | None = None,
) -> np.ndarray:
    """D = A (S,M,K) x B (S,K,N) + C (S,M,N) as the modelled device computes
    it; inputs are exact values of ``in_type`` / ``c_type`` (float64), the
    result is float64 holding values of ``out_type`` (default ``c_type``)."""
    it, ct = etype(in_type), etype(c_type)
    ot = etype(out_type or c_type)
    acc = etype(model.acc_format)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if model.subnormal_inputs == "flush":
        A, B = _flush(A, it), _flush(B, it)
    if model.subnormal_acc == "flush":
        C = _flush(C, ct)
    K = A.shape[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        P = A[:, :, None, :] * np.swapaxes(B, 1, 2)[:, None, :, :]  # (S, M, N, K)
        if model.product_format is not None:  # a product that overflows its format is infinite
            P = round_to_format(P, model.product_format)
        special = P.sum(axis=-1) + C
    fin = np.isfinite(special) & np.all(np.isfinite(P), axis=-1)
    P = np.where(fin[..., None], P, 0.0)
    Cf = np.where(fin, C, 0.0)
    PE = CE = None
    if model.align_ref == "inputs":  # exponent fields of a and b (subnormals: emin)
        PE = _expo(A, it)[:, :, None, :] + _expo(np.swapaxes(B, 1, 2), it)[:, None, :, :]
        CE = np.full(Cf.shape + (1,), np.iinfo(np.int64).max // 4)
    b = K if model.block in (0, None) or model.block > K else model.block
    starts = list(range(0, K, b))
    if model.order == "reverse":
        starts = starts[::-1]
    acc_v = None
    for i, s in enumerate(starts):
        blk = P[..., s : s + b]
        ae = None if PE is None else PE[..., s : s + b]
        if i == 0 and model.c_position == "last":
            terms = blk
        else:
            terms = np.concatenate([(Cf if i == 0 else acc_v)[..., None], blk], axis=-1)
            ae = None if ae is None else np.concatenate([CE, ae], axis=-1)
        acc_v = _step(terms, model, acc, ae)
    if model.c_position == "last":
        acc_v = _step(np.stack([acc_v, Cf], axis=-1), model, acc)
    D = acc_v
    if ot.name != acc.name:
        D = round_to_format(D, ot, model.out_rounding, model.overflow, model.subnormal_out == "flush")
    elif model.subnormal_out == "flush":
        D = _flush(D, ot)
    with np.errstate(invalid="ignore"):
        sp = np.where(np.isnan(special), np.nan, special)
    return np.where(fin, D, sp)


# ---------------------------------------------------------- named models
MODELS: dict[str, DevModel] = {
    m.name: m
    for m in (
        DevModel("ieee_rne_f32", block=1, extra_bits=None, acc_rounding="rne"),
        DevModel("exact_rne", block=0, extra_bits=None, acc_rounding="rne"),
        DevModel("trunc_b4", block=4, extra_bits=0, acc_rounding="rz", align="rz"),
        DevModel("trunc_b8_e3", block=8, extra_bits=3, acc_rounding="rz", align="rz"),
        DevModel("trunc_b16_e2", block=16, extra_bits=2, acc_rounding="rz", align="rz"),
        DevModel("trunc_b8_rev", block=8, order="reverse", extra_bits=3, acc_rounding="rz"),
        DevModel("rne_b4_e1_ftz", block=4, extra_bits=1, acc_rounding="rne", subnormal_inputs="flush"),
        DevModel("floor_b8_e2", block=8, extra_bits=2, align="rd", acc_rounding="rd"),
        DevModel("c_last_b8", block=8, c_position="last", extra_bits=3, acc_rounding="rz"),
        DevModel("f16acc_b4", block=4, extra_bits=3, acc_format="f16", acc_rounding="rz", out_rounding="rz"),
        DevModel(
            "rz_f32_out_rz_ftz",
            block=8,
            extra_bits=3,
            acc_rounding="rz",
            out_rounding="rz",
            subnormal_out="flush",
            subnormal_acc="flush",
            overflow="inf",
        ),
        DevModel("prod_p11", block=1, extra_bits=None, product_format="tf32", acc_rounding="rne"),
        DevModel("inputs_b16_e2", block=16, extra_bits=2, align_ref="inputs", acc_rounding="rz"),
        DevModel(
            "wide_w26_f16out",
            block=16,
            extra_bits=26 - 53,
            align_ref="inputs",
            acc_format="f64",
            acc_rounding="rz",
            out_rounding="rne",
        ),
    )
}
