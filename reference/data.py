"""Seeded input tiers for multiply-accumulate cases.

All generators take a ``numpy.random.Generator`` and return logical matrices
of *values* (int64 or float64) that are exactly representable in their
element types: A (S, M, K), B (S, K, N), C (S, M, N).

Tiers
* ``exact``    small integers / half-integers: every partial sum in every order
               is representable in the accumulation format (Rule E).
* ``onehot``   half of the subgroups have one-hot rows of A (a column
               permutation), the other half one-hot columns of B, so each
               result element is one named input element plus C: a wrong
               mapping says *which* element landed where.
* ``random``   full range: integers uniform over the whole type (C over the
               whole int32 range, so the sum wraps); floats mixing uniform
               [-1, 1] and log-uniform magnitudes (Rule F).
* ``special``  NaN, +-inf, +-0, subnormal inputs, integer extremes whose sums
               wrap.
* ``rounding`` (16-bit results) fp32-exact sums that need one RNE rounding to
               the result type, with planted ties (Rule R).
* ``accprec``  (float multiply-accumulate) accumulator precision: every
               partial sum, in any order and in every step of a chain, is
               exact in the accumulator type T and needs all p(T)
               significant bits, so it is *not* representable in any
               narrower float (f64 -> f32, f32 -> f16/bf16/tf32, f16 -> bf16).
               Judged bit for bit (Rule E, see :func:`accprec_operands`).
"""

from __future__ import annotations

import zlib

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from .draws import bounded_ints
from .dtypes import ElemType, etype

__all__ = [
    "TIERS",
    "ONE_STEP_NARROWER",
    "accprec_type",
    "accprec_operands",
    "case_rng",
    "choose",
    "mma_operands",
    "tf32_convert_inputs",
]

TIERS = ("exact", "onehot", "random", "special", "rounding", "accprec")


def case_rng(seed: int, case_id: str) -> np.random.Generator:
    """A generator that depends only on the global seed and the case id, so a
    case gets the same data alone, in a shard, or in any order.

    It is ``np.random.default_rng([seed & 0xFFFFFFFF, crc32(case_id)])``, the
    same stream, made without that call's overheads: the entropy goes in as
    a uint32 array (no per-int coercion) and the PCG64 seed words come from
    the SeedSequence's pool by its own recipe (:class:`_PoolWords`)."""
    words = np.array([seed & 0xFFFFFFFF, zlib.crc32(case_id.encode())], dtype=np.uint32)
    seq = np.random.SeedSequence(words)
    if not _POOL_WORDS_OK:  # once: the recipe must be numpy's own, else numpy's is used
        mine, numpys = _PoolWords(seq).generate_state(4, np.uint64), seq.generate_state(4, np.uint64)
        _POOL_WORDS_OK.append(bool(np.array_equal(mine, numpys)))
    return np.random.Generator(np.random.PCG64(_PoolWords(seq) if _POOL_WORDS_OK[0] else seq))


_POOL_WORDS_OK: list[bool] = []


class _PoolWords(ISeedSequence):
    """``generate_state`` of a SeedSequence, in plain Python for the four
    uint64 words PCG64 asks for (numpy's SeedSequence.generate_state: each
    output word is a pool word hashed with a running constant, INIT_B and
    MULT_B, pairs of uint32 words read little-endian); other requests go to
    the SeedSequence itself."""

    def __init__(self, seq: np.random.SeedSequence):
        self.seq = seq

    def generate_state(self, n_words, dtype=np.uint32):
        if n_words != 4 or np.dtype(dtype) != np.uint64:
            return self.seq.generate_state(n_words, dtype)
        pool = self.seq.pool.tolist()
        h = 0x8B51F9DD
        out = []
        for i in range(8):
            v = pool[i % len(pool)] ^ h
            h = (h * 0x58F38DED) & 0xFFFFFFFF
            v = (v * h) & 0xFFFFFFFF
            out.append(v ^ (v >> 16))
        return np.array([out[2 * i] | (out[2 * i + 1] << 32) for i in range(4)], dtype=np.uint64)


def choose(rng: np.random.Generator, values, size) -> np.ndarray:
    """``rng.choice(values, size=size)`` (uniform, with replacement): the same
    draws from the same stream (an index per element from ``integers``),
    without ``choice``'s per-call argument handling."""
    values = np.asarray(values)
    return values[bounded_ints(rng, 0, values.shape[0], size)]


def _grid(rng, shape, step: float, amax: float) -> np.ndarray:
    n = int(round(amax / step))
    return bounded_ints(rng, -n, n + 1, shape).astype(np.float64) * step


def _exact_float(rng, a_t, b_t, c_t, acc_t, M, K, N, S):
    # products of multiples of 1/2 are multiples of 1/4; every partial sum is a
    # multiple of 1/4 bounded by K*amax^2 + cmax, exact if < 2^p / 4.
    p = acc_t.precision
    for amax in (4.0, 2.0, 1.0, 0.5):
        cmax = 4 * amax * amax
        if K * amax * amax + cmax < 2.0 ** (p - 2) and amax <= 2.0 ** min(a_t.precision, b_t.precision):
            break
    A = _grid(rng, (S, M, K), 0.5, amax)
    B = _grid(rng, (S, K, N), 0.5, amax)
    C = _grid(rng, (S, M, N), 0.25, cmax)
    return A, B, C


def _int_uniform(rng, t: ElemType, shape, lo=None, hi=None) -> np.ndarray:
    lo = t.min if lo is None else max(lo, t.min)
    hi = t.max if hi is None else min(hi, t.max)
    return bounded_ints(rng, lo, hi + 1, shape)


def _onehot(rng, a_t, b_t, c_t, M, K, N, S, values):
    A = values(a_t, (S, M, K))
    B = values(b_t, (S, K, N))
    C = values(c_t, (S, M, N))
    one = 1.0 if a_t.is_float else 1
    half = min(S // 2 if S > 1 else 1, S)
    # one permutation per subgroup, drawn in subgroup order (rows of ``permuted``
    # are shuffled one after the other, as ``permutation`` would one by one)
    if half > 0:  # one-hot rows of A
        perm = rng.permuted(np.broadcast_to(np.arange(K), (half, K)), axis=1)
        A[:half] = 0
        m = np.arange(M)
        A[np.arange(half)[:, None], m[None, :], perm[:, m % K]] = one
    if S > half:  # one-hot columns of B
        cols = rng.permuted(np.broadcast_to(np.arange(max(N, K)), (S - half, max(N, K))), axis=1)[:, :N] % K
        B[half:] = 0
        B[np.arange(half, S)[:, None], cols, np.arange(N)[None, :]] = one
    return A, B, C


def _log_uniform(rng, shape, e_lo, e_hi):
    mag = np.exp2(rng.uniform(e_lo, e_hi, size=shape))  # 2**u (exp2: a faster libm routine than pow)
    return mag * choose(rng, [-1.0, 1.0], size=shape)


def _random_float(rng, t: ElemType, shape, e_lo, e_hi):
    u = rng.uniform(-1.0, 1.0, size=shape)
    lg = _log_uniform(rng, shape, e_lo, e_hi)
    pick = rng.random(shape) < 0.5
    return t.round(np.where(pick, u, lg))


def _special_float(rng, t: ElemType, shape, e_hi):
    base = _random_float(rng, t, shape, -4, e_hi)
    specials = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            t.denorm_min,
            -t.denorm_min,
            3 * t.denorm_min,
            t.tiny - t.denorm_min,
            t.tiny,
            -t.tiny,
        ]
    )
    mask = rng.random(shape) < 0.08
    picks = choose(rng, specials, size=shape)
    return t.round(np.where(mask, picks, base))


def mma_operands(
    tier: str,
    a_type: str,
    b_type: str,
    c_type: str,
    M: int,
    K: int,
    N: int,
    S: int,
    rng: np.random.Generator,
    acc_type: str | None = None,
):
    """Logical operands for ``tier``; see the module docstring."""
    a_t, b_t, c_t = etype(a_type), etype(b_type), etype(c_type)
    acc_t = etype(acc_type or c_type)
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}; known: {', '.join(TIERS)}")

    if not a_t.is_float:  # integer multiply-accumulate

        def ivals(t, shape):
            return _int_uniform(rng, t, shape)

        if tier == "exact":
            A = _int_uniform(rng, a_t, (S, M, K), -3, 3)
            B = _int_uniform(rng, b_t, (S, K, N), -3, 3)
            C = _int_uniform(rng, c_t, (S, M, N), -100, 100)
        elif tier == "onehot":
            A, B, C = _onehot(rng, a_t, b_t, c_t, M, K, N, S, ivals)
            C = _int_uniform(rng, c_t, (S, M, N), -1000, 1000)
        elif tier == "random":
            A = ivals(a_t, (S, M, K))
            B = ivals(b_t, (S, K, N))
            C = ivals(c_t, (S, M, N))
        elif tier == "special":
            ext_a = np.array([a_t.min, a_t.max, a_t.min + 1, a_t.max - 1, 0, 1, -1 if a_t.signed else 2])
            ext_b = np.array([b_t.min, b_t.max, b_t.min + 1, b_t.max - 1, 0, 1, -1 if b_t.signed else 2])
            A = choose(rng, ext_a, size=(S, M, K)).astype(np.int64)
            B = choose(rng, ext_b, size=(S, K, N)).astype(np.int64)
            ext_c = np.array([c_t.max, c_t.min, c_t.max - 1000, c_t.min + 1000, 0, -1])
            C = choose(rng, ext_c, size=(S, M, N)).astype(np.int64)
            # plant an all-extreme row/column pair in every tile (max |sum|)
            A[:, 0, :] = a_t.min if a_t.signed else a_t.max
            B[:, :, 0] = b_t.min if b_t.signed else b_t.max
        else:
            raise ValueError(f"tier {tier!r} does not apply to integer types")
        return A, B, C

    # floating point
    if tier == "exact":
        return _exact_float(rng, a_t, b_t, c_t, acc_t, M, K, N, S)
    if tier == "onehot":

        def fvals(t, shape):
            return _grid(rng, shape, 0.5, 8.0)

        return _onehot(rng, a_t, b_t, c_t, M, K, N, S, fvals)
    res_max = min(acc_t.max_finite, 2.0**60)
    e_hi = max(0.0, min(np.log2(res_max) / 2 - np.log2(K) / 2 - 2, 20.0))
    if tier == "random":
        A = _random_float(rng, a_t, (S, M, K), -e_hi, e_hi)
        B = _random_float(rng, b_t, (S, K, N), -e_hi, e_hi)
        C = _random_float(rng, c_t, (S, M, N), -e_hi, e_hi)
        return A, B, C
    if tier == "special":
        A = _special_float(rng, a_t, (S, M, K), e_hi)
        B = _special_float(rng, b_t, (S, K, N), e_hi)
        C = _special_float(rng, c_t, (S, M, N), e_hi)
        return A, B, C
    if tier == "accprec":
        return accprec_operands(a_type, b_type, c_type, acc_type or c_type, M, K, N, S, rng)
    if tier == "rounding":
        # multiples of 2^-6 in [-1, 1] (exact in bf16, fp16, tf32): products
        # are multiples of 2^-12 with |p| <= 1 and C multiples of 2^-6 in
        # [-2, 2]; every partial sum is a multiple of 2^-12 below 2^12 in
        # magnitude, exact in fp32 in any order.
        A = _grid(rng, (S, M, K), 2.0**-6, 1.0)
        B = _grid(rng, (S, K, N), 2.0**-6, 1.0)
        C = _grid(rng, (S, M, N), 2.0**-6, 2.0)
        # plant exact ties of the result format in row 0: c + a0*b0 with the
        # rest zero, c = 1, a0*b0 = half an ulp of the result format at 1.
        res = acc_t
        half_ulp = 2.0**-(res.precision)
        if half_ulp >= 2.0**-12:
            A[:, 0, :] = 0
            A[:, 0, 0] = 2.0**-6
            B[:, 0, :] = (half_ulp / 2.0**-6) * choose(rng, [1.0, 3.0], size=(S, N))
            C[:, 0, :] = choose(rng, [1.0, -1.0, 1.0 + 2 * half_ulp], size=(S, N))
        return A, B, C
    raise ValueError(tier)


# ------------------------------------------------------------ accprec tier
# The float accumulator one precision step below each accumulator type (the
# next smaller significand of the suite's float types; bf16 and tf32 both
# count as narrower than f32 -- the data fails every narrower format at once).
ONE_STEP_NARROWER = {"f64": "f32", "f32": "f16", "f16": "bf16"}


def accprec_type(a_type: str, c_type: str, r_type: str | None = None) -> str | None:
    """The accumulator type the ``accprec`` tier targets for a float MulAdd
    with inputs ``a_type``, C ``c_type`` and Result ``r_type``: the one of C
    and Result with the smaller significand (every partial sum and the
    result must be exact in both), or None where the tier does not apply
    (integer entries; an accumulator with no narrower float in the table)."""
    a_t, c_t = etype(a_type), etype(c_type)
    r_t = etype(r_type or c_type)
    if not (a_t.is_float and c_t.is_float and r_t.is_float):
        return None
    acc = c_t if c_t.precision <= r_t.precision else r_t
    return acc.name if acc.name in ONE_STEP_NARROWER else None


def accprec_operands(a_type, b_type, c_type, acc_type, M, K, N, S, rng):
    """Operands of the ``accprec`` tier (Rule E with a precision witness).

    Let p be the significand of the accumulator type T (``accprec_type``) and
    write every value in units of 2^L, L = 1 - p (so C has magnitude in
    [1, 2)).  Then:

    * C is an *odd* number of units with |C| in [2^(p-1) + X, 2^p - X]:
      it needs all p significant bits;
    * every product a*b is an *even* number of units, |a*b| <= P, with
      X = K * P <= 2^(p-3) (K: all products of the element, over every
      step of a chain or every K tile of a GEMM);
    * so C plus any subset of products -- every partial sum in any order,
      and every intermediate Result of a chain -- is an odd integer number
      of units in [2^(p-1), 2^p) in magnitude: exact in T (p bits; the
      oracle stays exact, Rule E) and not representable in any format with
      fewer than p significand bits (that would need an even number of
      units at this magnitude).  A device whose accumulator, or whose C as
      loaded, or whose result of any chain step, is held in a narrower
      format returns a value of that format, which is not the exact sum:
      every element of every case of the tier shows it.

    a = ia * 2^La, b = ib * 2^Lb with La + Lb = L + 1 and small integers
    |ia| <= 2^ea, |ib| <= 2^eb (exact in the input types, normal numbers).
    The products' own sum is in addition usually (not always) wider than a
    16-bit format when T is f32 or f64, so an accumulator that sums the
    products narrow and adds C wide is seen too.

    Basis: the Intel extensions call the accumulator and result "full
    precision" (cl_intel_subgroup_matrix_multiply_accumulate); SPV_KHR_cooperative_matrix leaves the
    internal precision to the client API and Vulkan / SPV_INTEL / SYCL joint_matrix / MLIR leave it
    implementation-defined (SPV_KHR_cooperative_matrix, OpCooperativeMatrixMulAddKHR;
    SPV_INTEL_subgroup_matrix_multiply_accumulate; sycl_ext_oneapi_matrix).  For those the tier holds
    the suite's stated assumption (reference/tolerance.py,
    Rule F (2): "the accumulator type itself, the weakest format" an
    accumulator may have), which Rule F already applies to random data;
    this tier makes it visible bit for bit on every element.
    """
    a_t, b_t, c_t, t = etype(a_type), etype(b_type), etype(c_type), etype(acc_type)
    p = min(t.precision, c_t.precision)
    budget = 2.0 ** (p - 4) / max(K, 1)  # ia*ib bound: 2 * K * ia*ib <= 2^(p-3)
    q = int(np.floor(np.log2(budget))) if budget >= 1 else -1
    if q < 0:
        raise ValueError(f"accprec: K = {K} too large for a {t.name} accumulator")
    ea = min(a_t.precision, (q + 1) // 2)
    eb = min(b_t.precision, q - ea)
    L = 1 - p
    La = (L + 1) // 2
    Lb = L + 1 - La
    ia = bounded_ints(rng, -(1 << ea), (1 << ea) + 1, (S, M, K))
    ib = bounded_ints(rng, -(1 << eb), (1 << eb) + 1, (S, K, N))
    X = 2 * K * (1 << ea) * (1 << eb)
    lo, hi = (1 << (p - 1)) + X, (1 << p) - X  # odd units in [lo, hi)
    half = bounded_ints(rng, (lo + 1) // 2, hi // 2, (S, M, N))
    units = 2 * half + 1
    sign = choose(rng, [-1, 1], size=(S, M, N))
    A = np.ldexp(ia.astype(np.float64), La)
    B = np.ldexp(ib.astype(np.float64), Lb)
    C = np.ldexp((sign * units).astype(np.float64), L)
    return A, B, C


def tf32_convert_inputs(tier: str, shape, rng: np.random.Generator) -> np.ndarray:
    """float32 inputs for the tf32 conversion built-ins (Rule T)."""
    if tier == "exact":  # already tf32: must come back unchanged
        x = rng.standard_normal(shape).astype(np.float32)
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    if tier in ("random", "onehot"):
        bits = rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        return np.where(np.isfinite(x), x, np.float32(1.5)).astype(np.float32)
    if tier in ("special", "rounding"):
        base = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
        # ties (low 13 bits == 0x1000) with even and odd kept LSB, near-ties,
        # carries into the exponent, largest finite, inf, NaN, zeros, denormals
        choices = np.array(
            [
                0x3F801000,
                0x3F803000,
                0x3F800FFF,
                0x3F801001,
                0x3FFFF000,
                0x7F7FFFFF,
                0x7F7FF000,
                0x7F800000,
                0xFF800000,
                0x7FC00000,
                0x00000000,
                0x80000000,
                0x00000001,
                0x00001000,
                0x00003000,
                0x807FFFFF,
            ],
            dtype=np.uint32,
        )
        pick = rng.random(shape) < 0.6
        out = np.where(pick, choose(rng, choices, size=shape), base)
        return out.astype(np.uint32).view(np.float32)
    raise ValueError(f"unknown tier {tier!r}")
