"""The one exact comparison of every family.

Two readings of "exact", both stated once here:

* value identity (rules E / I / X / T): the same value of the result type;
  floats compare +0 equal to -0 (the sign of an exact zero sum depends on
  the order and rounding direction, reference/tolerance.py Rule E) and any
  NaN equal to any NaN (IEEE 754-2019 6.2 fixes no payload for an
  operation's NaN result);
* bit identity (rule B): data movement (loads, stores, rotates, element
  extraction) must deliver every bit, the sign of zero and NaN payloads
  included.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference.dtypes import ElemType

from .verdict import Rule, Verdict, compare

__all__ = ["same_value", "same_bits_or_nan", "exact_verdict", "as_bits"]


def as_bits(x: np.ndarray, t: ElemType) -> np.ndarray:
    """Raw bits of type ``t``: kept as they are when already in an unsigned
    dtype of the type's width, else masked to the width in uint64."""
    x = np.asarray(x)
    if x.dtype.kind == "u" and x.dtype.itemsize * 8 == t.bits:
        return x
    return x.astype(np.uint64) & np.uint64(t.mask)


def same_value(exp_bits: np.ndarray, act_bits: np.ndarray, t: ElemType) -> np.ndarray:
    """Element-wise value identity of two bit arrays of type ``t`` (+0 == -0
    and NaN == NaN for floats; integers bit for bit)."""
    e, a = np.asarray(exp_bits), np.asarray(act_bits)
    if e.dtype != a.dtype:
        e, a = e.astype(np.uint64), a.astype(np.uint64)
    ok = e == a
    if t.is_float and not ok.all():  # other bits, same value: +0 == -0, NaN == NaN
        differ = ~ok
        ev, av = t.decode(e[differ].astype(np.uint64)), t.decode(a[differ].astype(np.uint64))
        with np.errstate(invalid="ignore"):
            ok[differ] = (ev == av) | (np.isnan(ev) & np.isnan(av))
    return ok


def same_bits_or_nan(exp_bits: np.ndarray, act_bits: np.ndarray, t: ElemType) -> np.ndarray:
    """Bit identity, except that any NaN matches any NaN (rules T and X: a
    conversion's or a cross-check's result, where +0 and -0 differ)."""
    e, a = np.asarray(exp_bits).astype(np.uint64), np.asarray(act_bits).astype(np.uint64)
    ok = e == a
    if t.is_float and not ok.all():
        differ = ~ok
        ok[differ] = np.isnan(t.decode(e[differ])) & np.isnan(t.decode(a[differ]))
    return ok


def _nowhere(s: int, r: int, c: int) -> tuple[int, int]:
    return -1, -1


def exact_verdict(
    exp_bits: np.ndarray,
    act_bits: np.ndarray,
    t: ElemType,
    where: Callable[[int, int, int], tuple[int, int]] = _nowhere,
    *,
    bitwise: bool = False,
    rule: Rule | None = None,
    ok: np.ndarray | None = None,
    hint=None,
    checked=None,
    unwritten=None,
    undefined=None,
) -> Verdict:
    """The verdict of an exact rule over (S, rows, cols) bit arrays (2-D
    arrays are taken as one row per subgroup).  ``bitwise``: bit identity
    (rule B) instead of value identity (E for floats, I for integers).
    ``ok``: an acceptance mask the caller already has (combined with
    nothing: it replaces the comparison)."""
    e, a = as_bits(exp_bits, t), as_bits(act_bits, t)
    if e.ndim == 2:
        e, a = e[:, None, :], a[:, None, :]
        ok = None if ok is None else np.asarray(ok)[:, None, :]
        unwritten = None if unwritten is None else np.asarray(unwritten)[:, None, :]
        if checked is not None and np.ndim(checked) == 2:
            checked = np.asarray(checked)[:, None, :]
        if undefined:
            undefined = {k: np.asarray(m)[:, None, :] for k, m in undefined.items()}
    if ok is None:
        ok = (e.astype(np.uint64) == a.astype(np.uint64)) if bitwise else same_value(e, a, t)
    if rule is None:
        rule = Rule.B if bitwise else (Rule.E if t.is_float else Rule.I)
    return compare(
        e, a, t, ok, rule, where, hint=hint, checked=checked, unwritten=unwritten, undefined=undefined
    )
