"""What a report keeps apart from the conformance verdicts (shared by the
markdown, HTML and CLI writers):

* forced cases: run only because of ``--assume-extension`` (the device does
  not list what they need; journal field ``forced``): their own section and
  counts, outside the totals and the exit status;
* validation findings on modules an external tool produced (journal field
  ``findings``): each finding once, with the number of cases whose module has
  it."""

from __future__ import annotations

from collections import Counter

from cts.report.journal import OUTCOMES, forced_of

__all__ = ["split_forced", "forced_line", "forced_reasons", "finding_counts", "FORCED_TITLE"]

FORCED_TITLE = "Forced: run only because of --assume-extension, not conformance verdicts"


def split_forced(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(conformance rows, forced rows); the list itself when none is forced."""
    forced = [r for r in rows if r.get("forced")]
    return ([r for r in rows if not r.get("forced")] if forced else rows), forced


def forced_line(forced: list[dict]) -> str:
    """The counts of the forced cases, in one line ('' for none)."""
    c = Counter(r.get("outcome") for r in forced)
    counts = ", ".join(f"{k} {c[k]}" for k in OUTCOMES if c.get(k))
    return (
        f"Forced (run only because of --assume-extension; not conformance verdicts, not in the totals, "
        f"not in the exit status): {counts}, total {len(forced)}"
        if forced
        else ""
    )


def forced_reasons(forced: list[dict]) -> list[list]:
    """[what the device does not list, cases] rows, sorted."""
    return [[w, n] for w, n in sorted(Counter(forced_of(r) for r in forced).items())]


def finding_counts(rows: list[dict]) -> list[list]:
    """[finding, cases whose module has it] rows, sorted."""
    count: Counter = Counter(str(f) for r in rows for f in r.get("findings") or ())
    return [[f, n] for f, n in sorted(count.items())]
