"""Verdicts and failure diagnostics shared by every family.

A verdict compares a logical result (S, rows, cols) with the reference and
keeps the first mismatches with everything an engineer needs: subgroup, row,
column, invocation, vector component, expected and actual values and bits,
error and bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from reference.dtypes import ElemType

__all__ = ["Mismatch", "Verdict", "compare", "MAX_REPORTED"]

MAX_REPORTED = 8


@dataclass
class Mismatch:
    subgroup: int
    row: int
    col: int
    invocation: int
    component: int
    expected: str
    actual: str
    expected_bits: str
    actual_bits: str
    error: float | None = None
    bound: float | None = None
    hint: str = ""

    def line(self) -> str:
        s = (
            f"sg {self.subgroup} D[{self.row},{self.col}] (invocation {self.invocation}, "
            f"component {self.component}): expected {self.expected} ({self.expected_bits}) "
            f"got {self.actual} ({self.actual_bits})"
        )
        if self.error is not None:
            s += f" |err| {self.error:.3g} > bound {self.bound:.3g}"
        if self.hint:
            s += f"  [{self.hint}]"
        return s


@dataclass
class Verdict:
    passed: bool
    elements: int
    failures: int
    rule: str
    mismatches: list[Mismatch] = field(default_factory=list)
    max_error: float = 0.0  # max |err| over finite elements
    max_ratio: float = 0.0  # max |err| / bound (0 where bound is 0 and err is 0)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        head = (
            f"{self.failures} of {self.elements} elements wrong (rule {self.rule})"
            if not self.passed
            else f"{self.elements} elements ok (rule {self.rule})"
        )
        if self.rule == "F":
            head += f", max |err|/bound {self.max_ratio:.3g}"
        return head

    def as_dict(self) -> dict:
        return {
            "passed": self.passed,
            "elements": self.elements,
            "failures": self.failures,
            "rule": self.rule,
            "max_error": self.max_error,
            "max_ratio": self.max_ratio,
            "notes": self.notes,
            "mismatches": [m.__dict__ for m in self.mismatches],
        }


def _fmt_value(t: ElemType, v) -> str:
    if t.is_float:
        return repr(float(v))
    return str(int(v))


def _fmt_bits(t: ElemType, b) -> str:
    digits = max(1, (t.bits + 3) // 4)
    return f"0x{int(b) & t.mask:0{digits}x}"


def compare(
    expected_bits: np.ndarray,
    actual_bits: np.ndarray,
    t: ElemType,
    ok: np.ndarray,
    rule: str,
    where: Callable[[int, int, int], tuple[int, int]],
    error: np.ndarray | None = None,
    bound: np.ndarray | None = None,
    hint: Callable[[int, int, int], str] | None = None,
    checked: np.ndarray | None = None,
) -> Verdict:
    """Build a verdict from an element-wise acceptance mask.

    ``where(s, r, c)`` maps a logical element to (invocation, component) of
    the result registers, so the message names the lane that held it.
    ``checked`` marks the elements the rule actually judges (default: all);
    the others are neither counted nor reported, so ``elements`` is the
    number of checked elements and a verdict over none is visibly empty
    (the plugin fails such a "pass").
    """
    if checked is not None:
        checked = np.broadcast_to(np.asarray(checked, dtype=bool), ok.shape)
        ok = ok | ~checked
    failures = int(ok.size - np.count_nonzero(ok))
    v = Verdict(
        passed=failures == 0,
        elements=int(ok.size if checked is None else np.count_nonzero(checked)),
        failures=failures,
        rule=rule,
    )
    if error is not None:
        fin = np.isfinite(error)
        all_finite = bool(fin.all())
        if all_finite and error.size:
            v.max_error = float(np.max(error))
        elif fin.any():
            v.max_error = float(np.max(error[fin]))
        if bound is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(bound > 0, error / bound, np.where(error > 0, np.inf, 0.0))
            top = float(np.max(ratio)) if all_finite and ratio.size else np.inf
            if np.isfinite(top):  # every ratio finite: the maximum over all of them
                v.max_ratio = top
            else:
                fr = np.isfinite(ratio) & fin
                if fr.any():
                    v.max_ratio = float(np.max(ratio[fr]))
    if not failures:
        return v
    bad = np.argwhere(~ok)[:MAX_REPORTED]
    at = tuple(bad.T)
    exp_b, act_b = np.asarray(expected_bits)[at], np.asarray(actual_bits)[at]
    exp_v, act_v = t.decode(exp_b), t.decode(act_b)  # only the reported elements
    for i, (s, r, c) in enumerate(bad):
        inv, comp = where(int(s), int(r), int(c))
        v.mismatches.append(
            Mismatch(
                subgroup=int(s),
                row=int(r),
                col=int(c),
                invocation=inv,
                component=comp,
                expected=_fmt_value(t, exp_v[i]),
                actual=_fmt_value(t, act_v[i]),
                expected_bits=_fmt_bits(t, exp_b[i]),
                actual_bits=_fmt_bits(t, act_b[i]),
                error=None if error is None else float(error[s, r, c]),
                bound=None if bound is None else float(bound[s, r, c]),
                hint=hint(int(s), int(r), int(c)) if hint else "",
            )
        )
    return v
