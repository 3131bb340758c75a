"""Verdicts and failure diagnostics shared by every family.

A verdict compares a logical result (S, rows, cols) with the reference and
keeps the first mismatches with everything an engineer needs: subgroup, row,
column, invocation, vector component, expected and actual values and bits,
error and bound.  Two kinds of element are set apart from the judged ones:
those the execution environment leaves undefined (counted and named, never
judged: ``cts.judge.env``) and those the device never wrote (still holding
the sentinel fill: ``cts.judge.sentinel``), which fail and say so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from reference.dtypes import ElemType

__all__ = ["Mismatch", "Verdict", "CaseResult", "Rule", "compare", "MAX_REPORTED", "NEVER_WRITTEN"]

MAX_REPORTED = 8
NEVER_WRITTEN = "never written"


class Rule(str, Enum):
    """The acceptance rules, one letter each (journals and reports carry the
    letter; ``reference/tolerance.py`` derives the float bounds).  ``bounded``:
    the rule judges against a non-zero bound, so error / bound means something."""

    I = "I"  # noqa: E741 - the rule's letter
    E = "E"
    B = "B"
    F = "F"
    R = "R"
    T = "T"
    C = "C"
    D = "D"
    X = "X"
    S = "S"

    @property
    def text(self) -> str:
        return _RULE_TEXT[self.value][0]

    @property
    def bounded(self) -> bool:
        return _RULE_TEXT[self.value][1]

    def __str__(self) -> str:
        return self.value

    @classmethod
    def describe(cls, letter: str) -> str:
        """The text of a rule letter as journals carry it ('' when unknown:
        rows written before the enumeration said 'exact' for B)."""
        return _RULE_TEXT.get(str(letter), ("", False))[0]


_RULE_TEXT = {
    "I": ("integers exact (wrap, or clamp where the operation saturates)", False),
    "E": ("exactly representable result: the same value (+0 == -0, any NaN for a NaN)", False),
    "B": ("data movement: bit for bit (sign of zero and NaN payload included)", False),
    "F": ("float multiply-accumulate: gamma_n(u') * sum|a*b|+|c| + n*tiny + result rounding", True),
    "R": ("exact fp32 sum converted once: either neighbour (default) or RNE (strict)", True),
    "T": ("tf32 conversion: round to nearest even, bit for bit (any NaN for a NaN)", False),
    "C": ("conversion or element-wise op: the exact value or one of its two neighbours", True),
    "D": ("float division: within the client API's ulp bound of the exact quotient", True),
    "X": ("cross-check: the same bits as the other form on the same inputs (any NaN for a NaN)", False),
    "S": ("special values (NaN, inf, signed zero, subnormal) by the operation's IEEE 754 rule", False),
}


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
    never_written: bool = False

    def line(self) -> str:
        s = (
            f"sg {self.subgroup} D[{self.row},{self.col}] (invocation {self.invocation}, "
            f"component {self.component}): expected {self.expected} ({self.expected_bits}) "
            f"got {self.actual} ({self.actual_bits})"
        )
        if self.error is not None:
            s += f" |err| {self.error:.3g} > bound {self.bound:.3g}"
        if self.never_written:
            s += f" -- {NEVER_WRITTEN} (still the sentinel fill)"
        if self.hint:
            s += f"  [{self.hint}]"
        return s


@dataclass
class Verdict:
    passed: bool
    elements: int
    failures: int
    rule: Rule | str
    mismatches: list[Mismatch] = field(default_factory=list)
    max_error: float = 0.0  # max |err| over finite elements
    max_ratio: float = 0.0  # max |err| / bound (0 where bound is 0 and err is 0)
    notes: list[str] = field(default_factory=list)
    never_written: int = 0  # failures that still hold the sentinel fill
    undefined: dict[str, int] = field(default_factory=dict)  # reason -> elements not judged

    def summary(self) -> str:
        rule = str(self.rule)
        head = (
            f"{self.failures} of {self.elements} elements wrong (rule {rule})"
            if not self.passed
            else f"{self.elements} elements ok (rule {rule})"
        )
        if self.never_written:
            head += f", {self.never_written} {NEVER_WRITTEN}"
        if rule == "F":
            head += f", max |err|/bound {self.max_ratio:.3g}"
        if self.undefined:
            head += "; " + self.undefined_text()
        return head

    def undefined_text(self) -> str:
        """'undefined by the environment: N elements: reason; ...' ('' if none)."""
        if not self.undefined:
            return ""
        n = sum(self.undefined.values())
        why = "; ".join(f"{k} ({v})" if len(self.undefined) > 1 else k for k, v in self.undefined.items())
        return f"undefined by the environment: {n} elements: {why}"

    def as_dict(self) -> dict:
        return {
            "passed": self.passed,
            "elements": self.elements,
            "failures": self.failures,
            "rule": str(self.rule),
            "max_error": self.max_error,
            "max_ratio": self.max_ratio,
            "notes": self.notes,
            "never_written": self.never_written,
            "undefined": dict(self.undefined),
            "mismatches": [m.__dict__ for m in self.mismatches],
        }


@dataclass
class CaseResult:
    """What every family's run flow returns: the verdict, the inputs (logical
    operands and buffers, for repro bundles), the expected and actual results."""

    verdict: Verdict
    inputs: dict
    expected: np.ndarray
    actual: np.ndarray


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
    unwritten: np.ndarray | None = None,
    undefined: dict[str, np.ndarray] | None = None,
) -> Verdict:
    """Build a verdict from an element-wise acceptance mask.

    ``where(s, r, c)`` maps a logical element to (invocation, component) of
    the result registers, so the message names the lane that held it.
    ``checked`` marks the elements the rule actually judges (default: all);
    the others are neither counted nor reported, so ``elements`` is the
    number of checked elements and a verdict over none is visibly empty
    (the plugin fails such a "pass").

    ``unwritten`` marks elements that still hold the output buffer's sentinel
    fill (``cts.judge.sentinel``): they fail whatever ``ok`` says and are
    named "never written" (unless the fill is the expected bits themselves).  ``undefined`` maps a reason to the elements whose
    result the execution environment leaves undefined (``cts.judge.env``):
    they are not judged, but counted per reason in the verdict.
    """
    ok = np.asarray(ok, dtype=bool)
    undef_counts: dict[str, int] = {}
    if undefined:
        base = None if checked is None else np.broadcast_to(np.asarray(checked, dtype=bool), ok.shape)
        skip = np.zeros(ok.shape, dtype=bool)
        for why, m in undefined.items():
            m = np.broadcast_to(np.asarray(m, dtype=bool), ok.shape) & ~skip
            if base is not None:
                m = m & base
            if m.any():
                undef_counts[why] = int(np.count_nonzero(m))
                skip |= m
        if skip.any():
            checked = ~skip if base is None else base & ~skip
    if unwritten is not None:
        unwritten = np.broadcast_to(np.asarray(unwritten, dtype=bool), ok.shape)
        if unwritten.any():  # a fill equal to the expected bits proves nothing: not named
            unwritten = unwritten & (np.asarray(expected_bits) != np.asarray(actual_bits))
        if unwritten.any():
            ok = ok & ~unwritten
        else:
            unwritten = None
    if checked is not None:
        checked = np.broadcast_to(np.asarray(checked, dtype=bool), ok.shape)
        ok = ok | ~checked
    failures = int(ok.size - np.count_nonzero(ok))
    v = Verdict(
        passed=failures == 0,
        elements=int(ok.size if checked is None else np.count_nonzero(checked)),
        failures=failures,
        rule=rule,
        undefined=undef_counts,
    )
    if unwritten is not None:
        v.never_written = int(np.count_nonzero(unwritten & ~ok))
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
                never_written=bool(unwritten is not None and unwritten[s, r, c]),
            )
        )
    return v
