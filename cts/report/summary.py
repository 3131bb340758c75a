"""What every form of a report says alike (markdown, HTML, terminal, the
merge command): the totals of a set of case rows, the short names of the
configurations of a merged record, what a run exercised, and the status
lines under the totals."""

from __future__ import annotations

from collections import Counter, defaultdict

from cts.report.journal import OUTCOMES
from cts.report.mdtext import plain as _s
from cts.report.record import Record
from cts.report.status import judged_line, missing_line, no_device, not_judged_lines, unfinished_lines

__all__ = ["SHOWN", "summarize", "config_names", "exercised", "status_lines"]


SHOWN = OUTCOMES


def _counts(rows) -> Counter:
    return Counter(r.get("outcome", "?") for r in rows)


def summarize(rows) -> dict:
    c = _counts(rows)
    return {k: c.get(k, 0) for k in SHOWN} | {"total": len(rows)}


def config_names(rec: Record | None, rows: list[dict]) -> dict[str, str]:
    """Short names (A, B, ...) of the configurations of a merged record, in
    the order their first run started; empty when there is only one."""
    cfgs = list(rec.configs) if rec is not None else []
    for r in rows:
        if r.get("cfg") and r["cfg"] not in cfgs:
            cfgs.append(r["cfg"])
    used = {r.get("cfg") for r in rows}
    cfgs = [c for c in cfgs if c in used]
    if len(cfgs) <= 1:
        return {}
    return {c: (chr(ord("A") + i) if i < 26 else f"C{i}") for i, c in enumerate(cfgs)}


def exercised(rows: list[dict]) -> str:
    """What the run exercised: per family, the cases judged and skipped."""
    per: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        per[_s(r.get("family"))]["skipped" if r.get("outcome") == "skipped" else "judged"] += 1
    return "; ".join(
        f"{fam or '?'} {c['judged']} judged" + (f", {c['skipped']} skipped" if c["skipped"] else "")
        for fam, c in sorted(per.items())
    )


def status_lines(rows: list[dict], record: Record | None) -> list[str]:
    """The lines under the totals: what was not judged, changed verdicts
    and journal problems, runs that ended early (with the command that
    continues them), selected cases without a verdict, and a run that
    judged nothing (no device, or a device that claims no selected case)."""
    lines = not_judged_lines(summarize(rows)) + _record_lines(record)
    lines += unfinished_lines(record)
    for extra in (missing_line(record), no_device(record), judged_line(record)):
        if extra:
            lines.append(extra)
    return lines


def _record_lines(rec: Record | None) -> list[str]:
    if rec is None:
        return []
    out = []
    changed = len(rec.changed())
    if changed:
        out.append(
            f"changed: {changed} cases got different verdicts in the runs merged (see Changed between runs)"
        )
    if rec.problems:
        out.append(f"journal problems: {len(rec.problems)} lines rejected (see Journal problems)")
    return out
