"""Bulk draws of raw random bits, the same values and the same generator
state as ``Generator.integers`` gives them, at a fraction of its cost.

``rng.integers(0, 2**b, size=n, dtype=np.uint64)`` for b <= 32 takes one
32-bit draw per element (numpy's bounded Lemire method on the generator's
``next_uint32``; for a power-of-two range it never rejects and keeps the top
b bits: ``x >> (32 - b)``).  PCG64's ``next_uint32`` hands out the low half
of a 64-bit output, then its high half (held in ``has_uint32`` /
``uinteger`` of the state).  So the n draws are the 32-bit halves of
``random_raw`` outputs, read in memory order, after a held half if there is
one, and a half left over goes back into the state.  ``integers(0, 2**63)``
takes one 64-bit output per element, x >> 1.

Whether this numpy draws that way is checked once, on a generator of its own,
against ``integers`` itself (every width, both parities, a held half or
none, and the draws after); where it does not (another numpy, another bit
generator), ``integers`` is used.
"""

from __future__ import annotations

import numpy as np

__all__ = ["uint32_draws", "random_uint_bits"]

_U32 = np.uint64(0xFFFFFFFF)


def uint32_draws(rng: np.random.Generator, n: int) -> np.ndarray:
    """The next ``n`` values of ``rng``'s ``next_uint32`` (uint32, maybe a
    read-only view), the generator left as n such draws leave it (PCG64)."""
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


_NARROW = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def _fast_bits(rng: np.random.Generator, bits: int, shape, narrow: bool = False) -> np.ndarray:
    n = int(np.prod(shape))
    if bits == 64:
        hi = rng.bit_generator.random_raw(n) >> np.uint64(1)
        top = uint32_draws(rng, n) >> np.uint32(31)
        return (hi | (top.astype(np.uint64) << np.uint64(63))).reshape(shape)
    x = uint32_draws(rng, n)
    if bits < 32:  # the top bits of each draw: its high byte / half (little-endian memory)
        k = 32 // bits
        x = x.view(_NARROW[bits])[k - 1 :: k]
    return (x.astype(_NARROW[bits]) if narrow else x.astype(np.uint64)).reshape(shape)


def _slow_bits(rng: np.random.Generator, bits: int, shape) -> np.ndarray:
    if bits == 64:
        return rng.integers(0, 2**63, size=shape, dtype=np.uint64) | (
            rng.integers(0, 2, size=shape, dtype=np.uint64) << np.uint64(63)
        )
    return rng.integers(0, 1 << bits, size=shape, dtype=np.uint64)


def _fast_is_numpys() -> bool:
    try:
        for held in (0, 1):
            for n in (0, 1, 2, 7, 64):
                for bits in (8, 16, 32, 64):
                    mine, ref = (np.random.Generator(np.random.PCG64(12345 + n)) for _ in range(2))
                    if held:
                        mine.integers(0, 2, size=1)
                        ref.integers(0, 2, size=1)
                    a = _fast_bits(mine, bits, (n,), narrow=bits < 64 and n % 2 == 1)
                    b = _slow_bits(ref, bits, (n,))
                    if not np.array_equal(a, b):
                        return False
                    if not np.array_equal(mine.integers(0, 1 << 16, 5), ref.integers(0, 1 << 16, 5)):
                        return False
                    if mine.bit_generator.state["state"] != ref.bit_generator.state["state"]:
                        return False
        return True
    except Exception:  # noqa: BLE001  (any surprise: numpy's own draws are used)
        return False


_FAST: list[bool] = []


def random_uint_bits(rng: np.random.Generator, bits: int, shape, narrow: bool = False) -> np.ndarray:
    """Uniform raw bits (uint64, ``shape``): for ``bits`` < 64 the draws of
    ``rng.integers(0, 2**bits, size=shape, dtype=np.uint64)``; for 64 those of
    ``integers(0, 2**63)`` with a sign bit from ``integers(0, 2)`` above them.
    ``narrow``: the same values as uint8 / uint16 / uint32 (bits < 64), a
    new writable array."""
    if not _FAST:
        _FAST.append(_fast_is_numpys())
    if _FAST[0] and type(rng.bit_generator) is np.random.PCG64:
        return _fast_bits(rng, bits, shape, narrow)
    out = _slow_bits(rng, bits, shape)
    return out.astype(_NARROW[bits]) if narrow else out
