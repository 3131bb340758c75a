"""Bulk raw bits from a PCG64 ``Generator``: the same values, and the
generator left in the same state, as numpy's own ``Generator.integers``
calls below, at a fraction of their cost (the suite's data streams are
defined by those calls; this only makes them cheaper).

How numpy draws them (numpy/random/src/distributions, ``_bounded_integers``):

* ``integers(0, 2**b, dtype=uint64)``, b <= 32: one ``next_uint32`` per
  element, Lemire's method, which for a power-of-two range never rejects
  and keeps the top b bits of the draw, x >> (32 - b).
* ``integers(0, 2**63, dtype=uint64)``: one 64-bit output per element, x >> 1.
* PCG64's ``next_uint32`` hands out the low half of a 64-bit output, then
  its high half (kept in the state as ``has_uint32`` / ``uinteger``).  So
  n such draws are the 32-bit halves of ``random_raw`` outputs in memory
  order (little-endian), after a held half if there is one; a half left
  over goes back into the state.

Whether this numpy draws that way is checked once, on generators of its
own, against ``integers`` itself (every width, both parities, a held half
or none, and the draws after); where it does not (another numpy, another
bit generator, a big-endian host), ``integers`` is used.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["uint32_draws", "random_uint_bits", "random_uint_bits_many", "bounded_ints"]

_NARROW = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def uint32_draws(rng: np.random.Generator, n: int) -> np.ndarray:
    """The next ``n`` values of ``rng``'s ``next_uint32`` (uint32, writable,
    maybe a view into the raw draws), the generator left as n such draws
    leave it (PCG64 only)."""
    bg = rng.bit_generator
    if n == 0:
        return np.empty(0, dtype=np.uint32)
    st = bg.state
    held = bool(st["has_uint32"])
    rest = n - held
    words = bg.random_raw((rest + 1) // 2)
    halves = words.view(np.uint32)[:rest]
    if held:
        out = np.empty(n, dtype=np.uint32)
        out[0] = st["uinteger"]
        out[1:] = halves
    else:
        out = halves
    odd = rest % 2 == 1
    if held or odd:  # the held half: used up, or the unused high half of the last output
        st = bg.state
        st["has_uint32"] = int(odd)
        st["uinteger"] = int(words[-1] >> np.uint64(32)) if odd else 0
        bg.state = st
    return out


def _fast_bits(rng: np.random.Generator, bits: int, shape, narrow: bool = False) -> np.ndarray:
    n = math.prod(shape)
    if bits == 64:
        hi = rng.bit_generator.random_raw(n) >> np.uint64(1)
        top = uint32_draws(rng, n) >> np.uint32(31)
        return (hi | (top.astype(np.uint64) << np.uint64(63))).reshape(shape)
    x = uint32_draws(rng, n)
    if bits < 32:  # the top bits of each draw: its high byte / half (little-endian memory)
        k = 32 // bits
        x = x.view(_NARROW[bits])[k - 1 :: k]
    return (x if narrow else x.astype(np.uint64)).reshape(shape)


def _slow_bits(rng: np.random.Generator, bits: int, shape) -> np.ndarray:
    if bits == 64:
        return rng.integers(0, 2**63, size=shape, dtype=np.uint64) | (
            rng.integers(0, 2, size=shape, dtype=np.uint64) << np.uint64(63)
        )
    return rng.integers(0, 1 << bits, size=shape, dtype=np.uint64)


def _fast_ints(rng: np.random.Generator, lo: int, r: int, n: int) -> np.ndarray:
    """n draws of Lemire's method on ``next_uint32`` for the range r
    (2 <= r <= 2^32), plus lo, as int64."""
    x = uint32_draws(rng, n)
    if r & (r - 1) == 0:  # a power of two: never a rejection, the top log2(r) bits
        v = x >> np.uint32(33 - r.bit_length()) if r < 1 << 32 else x
        return v.astype(np.int64) + lo
    threshold = ((1 << 32) - r) % r
    if (np.multiply(x, np.uint32(r)) < threshold).any():  # m mod 2^32 below the threshold: x dropped
        parts = [x]
        keep = [np.multiply(x, np.uint32(r)) >= threshold]
        missing = n - int(np.count_nonzero(keep[0]))
        while missing:  # draw exactly the missing count again, until none is missing
            y = uint32_draws(rng, missing)
            ok = np.multiply(y, np.uint32(r)) >= threshold
            parts.append(y)
            keep.append(ok)
            missing -= int(np.count_nonzero(ok))
        x = np.concatenate(parts)[np.concatenate(keep)]
    m = np.multiply(x, np.uint64(r), dtype=np.uint64)
    return (m >> np.uint64(32)).view(np.int64) + lo


def _checks() -> bool:
    """This numpy's ``integers`` draws as the module docstring says."""
    try:
        for held in (0, 1):
            for n in (0, 1, 2, 7, 64, 1001):
                for kind in (8, 16, 32, 64, 2, 3, 11, 32 + 1, 256, 255, 2**31 + 1, 2**32, 1):
                    mine, ref = (np.random.Generator(np.random.PCG64(12345 + n)) for _ in range(2))
                    if held:
                        mine.integers(0, 2, size=1)
                        ref.integers(0, 2, size=1)
                    if kind in (8, 16, 32, 64):  # widths
                        a = _fast_bits(mine, kind, (n,), narrow=kind < 64 and n % 2 == 1).astype(np.uint64)
                        b = _slow_bits(ref, kind, (n,))
                    else:  # ranges
                        a = bounded_ints(mine, -7, kind - 7, (n,), _checked=True)
                        b = ref.integers(-7, kind - 7, size=(n,))
                        if a.dtype != b.dtype:
                            return False
                    if not np.array_equal(a, b) or a.dtype != b.dtype:
                        return False
                    if not np.array_equal(mine.integers(0, 1 << 16, 5), ref.integers(0, 1 << 16, 5)):
                        return False
                    if mine.bit_generator.state != ref.bit_generator.state:
                        return False
        return True
    except Exception:  # noqa: BLE001  (any surprise: numpy's own draws are used)
        return False


_FAST: list[bool] = []


def _fast(rng: np.random.Generator) -> bool:
    if not _FAST:
        _FAST.append(_checks())
    return _FAST[0] and type(rng.bit_generator) is np.random.PCG64


def random_uint_bits(rng: np.random.Generator, bits: int, shape, narrow: bool = False) -> np.ndarray:
    """Uniform raw bits (uint64, ``shape``): for ``bits`` < 64 the draws of
    ``rng.integers(0, 2**bits, size=shape, dtype=np.uint64)``; for 64 those of
    ``integers(0, 2**63)`` with a sign bit from ``integers(0, 2)`` above them.
    ``narrow``: the same values as uint8 / uint16 / uint32 (bits < 64), in
    an array of the caller's own (writable; narrower than 32 bits it may be
    a strided view into the draws)."""
    if _fast(rng):
        return _fast_bits(rng, bits, shape, narrow)
    out = _slow_bits(rng, bits, shape)
    return out.astype(_NARROW[bits]) if narrow else out


def random_uint_bits_many(rng: np.random.Generator, specs) -> list[np.ndarray] | None:
    """``[random_uint_bits(rng, bits, shape, narrow=True) for bits, shape in
    specs]`` from one bulk draw, where every width is below 64 bits and the
    fast draws apply; None otherwise (then draw them one by one)."""
    if not _fast(rng) or any(bits >= 64 for bits, _ in specs):
        return None
    sizes = [math.prod(shape) for _, shape in specs]
    x = uint32_draws(rng, sum(sizes))
    out, at = [], 0
    for (bits, shape), n in zip(specs, sizes):
        seg = x[at : at + n]
        at += n
        if bits < 32:  # the top bits of each draw, as in _fast_bits
            k = 32 // bits
            seg = seg.view(_NARROW[bits])[k - 1 :: k]
        out.append(seg.reshape(shape))
    return out


def bounded_ints(rng: np.random.Generator, lo: int, hi: int, size, _checked: bool = False) -> np.ndarray:
    """``rng.integers(lo, hi, size=size)`` (int64, hi exclusive): the same
    values, the generator left in the same state."""
    lo, hi = int(lo), int(hi)
    shape = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
    r, n = hi - lo, math.prod(shape)
    if (
        2 <= r <= 1 << 32
        and -(2**62) <= lo
        and hi <= 2**62
        and (_checked or (_worth_it(r, n) and _fast(rng)))
    ):
        return _fast_ints(rng, lo, r, n).reshape(shape)
    return rng.integers(lo, hi, size=size)


def _worth_it(r: int, n: int) -> bool:
    """Whether the bulk draw beats ``integers`` itself (measured, numpy 2.4):
    a power-of-two range from about 1024 draws on, another range up to 2^16
    (a rejection rare enough to redraw in bulk) from about 8192; below that
    numpy's own call is the cheaper one (the bulk draw cost up to 2-3x)."""
    if r & (r - 1) == 0:
        return n >= 1024
    return n >= 8192 and r <= 1 << 16
