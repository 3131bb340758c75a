"""Packed register words -> element bits, shared by the emulator's Intel and
SPIR-V MMA views (the emulator's own rule, never the reference's layout)."""

from __future__ import annotations

import numpy as np

__all__ = ["unpack_words"]


def unpack_words(words: np.ndarray, word_bits: int, ebits: int, reverse: bool = False) -> np.ndarray:
    """(..., n) words of ``word_bits`` -> (..., n * word_bits/ebits) element
    bits, lower elements from lower bits (highest first when ``reverse``, a
    fault's wrong bit order)."""
    per = word_bits // ebits
    if ebits in (4, 8, 16) and word_bits in (8, 16, 32, 64) and ebits < word_bits:
        # the little-endian bytes (halfwords) of each word, lowest first; a byte's low nibble first
        w = np.ascontiguousarray(words, dtype=f"<u{word_bits // 8}").view(f"<u{max(ebits, 8) // 8}")
        if ebits == 4:
            nib = np.empty((*w.shape, 2), dtype=np.uint8)
            np.bitwise_and(w, np.uint8(0xF), out=nib[..., 0])
            np.right_shift(w, np.uint8(4), out=nib[..., 1])
            w = nib
        parts = w.reshape(*words.shape, per)
        if reverse:
            parts = parts[..., ::-1]
        return parts.reshape(*words.shape[:-1], words.shape[-1] * per)
    w = words.astype(np.uint64)
    out = np.empty((*w.shape, per), dtype=np.uint64)
    for i in range(per):  # one full-size shift per element slot; each slot masked to ebits
        t = per - 1 - i if reverse else i
        np.right_shift(w, np.uint64(t * ebits), out=out[..., i])
        out[..., i] &= np.uint64((1 << ebits) - 1)
    return out.reshape(*w.shape[:-1], w.shape[-1] * per)
