"""Conformance reports from journal rows (markdown with tabulate)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from tabulate import tabulate

__all__ = ["markdown_report", "write_reports", "summarize"]

SHOWN = ("passed", "failed", "skipped", "xfailed", "xpassed", "crash", "timeout", "error")


def _counts(rows) -> Counter:
    return Counter(r.get("outcome", "?") for r in rows)


def summarize(rows) -> dict:
    c = _counts(rows)
    return {k: c.get(k, 0) for k in SHOWN} | {"total": len(rows)}


def _row_status(outcomes: Counter) -> str:
    if outcomes.get("failed") or outcomes.get("crash") or outcomes.get("timeout") or outcomes.get("error"):
        return "FAIL"
    if outcomes.get("xpassed"):
        return "XPASS"
    if outcomes.get("passed") and not outcomes.get("skipped"):
        return "pass"
    if outcomes.get("passed"):
        return "partial"
    if outcomes.get("xfailed"):
        return "xfail"
    return "skip"


def markdown_report(rows: list[dict], sessions: list[dict] | None = None) -> str:
    rows = sorted(rows, key=lambda r: (r.get("family", ""), r.get("nodeid", "")))
    out = ["# Subgroup-matrix conformance report", ""]
    for s in [s for s in sessions or [] if s.get("kind") == "session"]:
        dev = s.get("device", {})
        out.append(
            f"* backend `{s.get('backend')}`, device `{dev.get('name')}`, driver `{dev.get('driver')}`, "
            f"seed {s.get('seed')}, profile `{s.get('profile')}`"
        )
        out.append(f"* command: `{s.get('command')}`")
        break
    tot = summarize(rows)
    out += ["", "Totals: " + ", ".join(f"{k} {v}" for k, v in tot.items() if v), ""]

    # summary per family, backend, device
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        groups[(r.get("family"), r.get("backend"), r.get("device"))][r.get("outcome")] += 1
    table = [
        [f, b, d, *[c.get(k, 0) for k in SHOWN], sum(c.values())] for (f, b, d), c in sorted(groups.items())
    ]
    out += ["## Summary per family, backend and device", ""]
    out.append(tabulate(table, headers=["family", "backend", "device", *SHOWN, "total"], tablefmt="github"))

    # per family and tier
    tg: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        tg[(r.get("family"), r.get("tier") or "-")][r.get("outcome")] += 1
    table = [[f, t, *[c.get(k, 0) for k in SHOWN], sum(c.values())] for (f, t), c in sorted(tg.items())]
    out += ["", "## Cases per family and tier", ""]
    out.append(tabulate(table, headers=["family", "tier", *SHOWN, "total"], tablefmt="github"))

    # coverage: one row per spec row
    cov: dict[tuple, Counter] = defaultdict(Counter)
    ratio: dict[tuple, float] = defaultdict(float)
    reasons: dict[tuple, set] = defaultdict(set)
    for r in rows:
        key = (r.get("family"), r.get("spec_row") or r.get("case_id"))
        cov[key][r.get("outcome")] += 1
        if r.get("max_ratio"):
            ratio[key] = max(ratio[key], float(r["max_ratio"]))
        if r.get("outcome") == "skipped" and r.get("reason"):
            reasons[key].add(r["reason"])
    table = []
    for (fam, spec_row), c in sorted(cov.items()):
        cell = ", ".join(f"{k} {c[k]}" for k in SHOWN if c.get(k))
        table.append(
            [
                fam,
                spec_row,
                _row_status(c),
                cell,
                f"{ratio[(fam, spec_row)]:.3g}" if ratio.get((fam, spec_row)) else "",
                "; ".join(sorted(reasons[(fam, spec_row)]))[:200],
            ]
        )
    out += ["", "## Coverage: spec row -> cases", ""]
    out.append(
        tabulate(
            table,
            headers=["family", "spec row", "status", "cases", "max err/bound", "skip reason"],
            tablefmt="github",
        )
    )

    bad = [r for r in rows if r.get("outcome") in ("failed", "crash", "timeout", "error", "xpassed")]
    out += ["", f"## Failures ({len(bad)})", ""]
    for r in bad[:200]:
        out.append(f"### {r.get('nodeid')} - {r.get('outcome')}")
        out.append("")
        out.append("```")
        out.append(str(r.get("reason", ""))[:3000])
        out.append("```")
        out.append(f"rerun: `{r.get('rerun', '')}`")
        out.append("")
    if len(bad) > 200:
        out.append(f"... {len(bad) - 200} more failures in the journal")
    return "\n".join(out) + "\n"


def write_reports(rows: list[dict], out_dir: str | Path, sessions: list[dict] | None = None) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "report.md"
    md.write_text(markdown_report(rows, sessions), encoding="utf-8")
    return [md]
