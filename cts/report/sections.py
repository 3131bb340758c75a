"""The sections of a report that list the cases that did not pass, in the
order a reader needs them: device verdicts first, then what the suite or a
tool could not judge, then what was cut short.  markdown and HTML render
the same list, right after the totals; a new kind of non-pass is one more
``Section`` here (its place in the list is its place in both reports).

Each row goes into the first section that takes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cts.report.journal import DEVICE_BAD

__all__ = ["Section", "NOT_PASSED", "by_section", "first_line", "section_of_outcome"]


@dataclass(frozen=True)
class Section:
    key: str  # the anchor of the section in both reports (HTML id, markdown heading id)
    title: str
    blurb: str  # one sentence under the heading ('' for none)
    takes: Callable[[dict], bool]
    outcomes: tuple[str, ...]  # the outcomes this section may hold (the HTML badges link here)


def _outcome(r: dict) -> str:
    return str(r.get("outcome") or "")


NOT_PASSED: list[Section] = [
    Section(
        "device-verdicts",
        "Failures: device verdicts",
        "The device (its driver or compiler) got these wrong: failed, crash, timeout; an unexpected "
        "pass is an expectations entry to remove.",
        lambda r: _outcome(r) in (*DEVICE_BAD, "xpassed"),
        (*DEVICE_BAD, "xpassed"),
    ),
    Section(
        "toolchain-verdicts",
        "Toolchain verdicts: the compiler erred, not device verdicts",
        "The compiler between the suite and the device (named in each) refused a case the spec allows, "
        "or produced a module shown invalid whose result was wrong or refused.",
        lambda r: _outcome(r) == "error" and bool(r.get("toolchain")),
        ("error",),
    ),
    Section(
        "harness-errors",
        "Harness errors: not device verdicts",
        "The suite could not judge these cases (a host tool missing or failing, a suite defect).",
        lambda r: _outcome(r) == "error",
        ("error",),
    ),
    Section(
        "interrupted",
        "Interrupted: not judged",
        "In flight when the whole run died; `--resume` runs them again.",
        lambda r: _outcome(r) == "interrupted",
        ("interrupted",),
    ),
]


def by_section(rows: list[dict], sections: list[Section] | None = None) -> list[tuple[Section, list[dict]]]:
    """Each section with its rows (in ``rows``' order), empty ones included."""
    secs = NOT_PASSED if sections is None else sections
    got: list[list[dict]] = [[] for _ in secs]
    for r in rows:
        for i, s in enumerate(secs):
            if s.takes(r):
                got[i].append(r)
                break
    return list(zip(secs, got))


def section_of_outcome(outcome: str, filled: list[tuple[Section, list[dict]]]) -> str:
    """The anchor of the first non-empty section holding ``outcome`` ('' if none)."""
    for s, rows in filled:
        if rows and any(_outcome(r) == outcome for r in rows):
            return s.key
    return ""


def first_line(r: dict, cap: int = 300) -> str:
    """The one-line reason of a row (an unexpected pass says what to do)."""
    reason = str(r.get("reason") or "").strip()
    line = reason.splitlines()[0] if reason else ""
    if _outcome(r) == "xpassed":
        line = "listed in an expectations file but passes: remove the entry. " + line
    return line if len(line) <= cap else line[: cap - 3] + "..."
