"""Conformance reports from journal rows: markdown (tabulate), the
self-contained HTML page (cts/report/html.py) and ``results.csv`` (one sorted line
per case: node id, outcome, ratio) for machines to diff.

``python -m cts report JOURNAL_OR_DIR... --out DIR`` merges the journals of
workers, shards and resumed runs (``cts.report.journal.read_journals``)."""

from __future__ import annotations

import argparse
import csv
import warnings
from collections import Counter, defaultdict
from pathlib import Path

from tabulate import tabulate

from cts.report.journal import BAD_OUTCOMES, DEVICE_BAD, OUTCOMES, read_journals, rerun_of

__all__ = ["markdown_report", "write_reports", "summarize", "main"]

SHOWN = OUTCOMES


def _s(x) -> str:
    """A table key from a journal field that may be missing (a row written
    by an older run or by the xdist controller lacks some fields)."""
    return "" if x is None else str(x)


def _counts(rows) -> Counter:
    return Counter(r.get("outcome", "?") for r in rows)


def summarize(rows) -> dict:
    c = _counts(rows)
    return {k: c.get(k, 0) for k in SHOWN} | {"total": len(rows)}


def _row_status(outcomes: Counter) -> str:
    if any(outcomes.get(k) for k in DEVICE_BAD):
        return "FAIL"
    if outcomes.get("error"):
        return "ERROR (not judged)"
    if outcomes.get("interrupted"):
        return "interrupted"
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
    rows = sorted(rows, key=lambda r: (_s(r.get("family")), _s(r.get("nodeid"))))
    out = ["# Subgroup-matrix conformance report", ""]
    heads = [s for s in sessions or [] if s.get("kind") == "session"]
    for s in heads[:1]:
        dev = s.get("device", {})
        out.append(
            f"* backend `{s.get('backend')}`, device `{dev.get('name')}`, platform `{dev.get('platform')}`, "
            f"driver `{dev.get('driver')}`, version `{dev.get('version')}`"
        )
        out.append(
            f"* seed {s.get('seed')}, profile `{s.get('profile')}`, tiers `{','.join(s.get('tiers') or [])}`"
        )
        out.append(f"* command: `{s.get('command')}`")
        out.append(
            f"* python {s.get('python')}, numpy {s.get('numpy')}, pytest {s.get('pytest')}, {s.get('platform')}"
        )
    if len(heads) > 1:
        out.append(f"* {len(heads)} sessions merged (shards, workers or resumed runs)")
    notes = sorted({str(s.get("text")) for s in sessions or [] if s.get("kind") == "note"})
    if notes:
        out += ["", "Notes:", ""] + [f"* {n}" for n in notes]
    tot = summarize(rows)
    out += ["", "Totals: " + ", ".join(f"{k} {v}" for k, v in tot.items() if v), ""]
    out += [f"* {line}" for line in not_judged_lines(tot)] + ([""] if not_judged_lines(tot) else [])

    # summary per family, backend, device
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        groups[(_s(r.get("family")), _s(r.get("backend")), _s(r.get("device")))][r.get("outcome")] += 1
    table = [
        [f, b, d, *[c.get(k, 0) for k in SHOWN], sum(c.values())] for (f, b, d), c in sorted(groups.items())
    ]
    out += ["## Summary per family, backend and device", ""]
    out.append(tabulate(table, headers=["family", "backend", "device", *SHOWN, "total"], tablefmt="github"))

    # per family and tier
    tg: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        tg[(_s(r.get("family")), _s(r.get("tier")) or "-")][r.get("outcome")] += 1
    table = [[f, t, *[c.get(k, 0) for k in SHOWN], sum(c.values())] for (f, t), c in sorted(tg.items())]
    out += ["", "## Cases per family and tier", ""]
    out.append(tabulate(table, headers=["family", "tier", *SHOWN, "total"], tablefmt="github"))

    # coverage: one row per spec row
    cov: dict[tuple, Counter] = defaultdict(Counter)
    ratio: dict[tuple, float] = defaultdict(float)
    reasons: dict[tuple, set] = defaultdict(set)
    for r in rows:
        key = (_s(r.get("family")), _s(r.get("spec_row") or r.get("case_id")))
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

    bad = [r for r in rows if r.get("outcome") in (*DEVICE_BAD, "xpassed")]
    out += ["", f"## Failures: device verdicts ({len(bad)})", ""]
    out += _case_blocks(bad)
    errs = [r for r in rows if r.get("outcome") == "error"]
    if errs:
        out += ["", f"## Harness errors: not device verdicts ({len(errs)})", ""]
        out += ["The suite could not judge these cases (a host tool missing or failing, a suite defect).", ""]
        out += _case_blocks(errs)
    flaky = [r for r in rows if r.get("flaky_outcome")]
    if flaky:
        out += ["", f"## Flaky: a different outcome when run again ({len(flaky)})", ""]
        out.append(
            tabulate(
                [
                    [r.get("nodeid"), r.get("flaky_outcome"), r.get("outcome"), r.get("flaky_reason")]
                    for r in flaky
                ],
                headers=["case", "first", "then", "first reason"],
                tablefmt="github",
            )
        )
    intr = [r for r in rows if r.get("outcome") == "interrupted"]
    if intr:
        out += ["", f"## Interrupted: not judged ({len(intr)})", ""]
        out += ["In flight when the whole run died; `--resume` runs them again.", ""]
        out += [f"* `{r.get('nodeid')}`" for r in intr[:200]]
    xf = [r for r in rows if r.get("outcome") == "xfailed"]
    if xf:
        out += ["", f"## Expected failures ({len(xf)}, from expectations files)", ""]
        out.append(
            tabulate(
                [[r.get("nodeid"), r.get("reason")] for r in xf], headers=["case", "entry"], tablefmt="github"
            )
        )
    return "\n".join(out) + "\n"


def not_judged_lines(tot: dict) -> list[str]:
    """The report's and the CLI's words for outcomes that are not verdicts."""
    out = []
    if tot.get("error"):
        out.append(f"{tot['error']} harness errors (not device verdicts): the suite could not judge them")
    if tot.get("interrupted"):
        out.append(
            f"interrupted: {tot['interrupted']} cases were in flight when the run died (not verdicts); "
            "--resume runs them again"
        )
    return out


def _case_blocks(bad: list[dict]) -> list[str]:
    out = []
    for r in bad[:200]:
        out.append(f"### {r.get('nodeid')} - {r.get('outcome')}")
        out.append("")
        if r.get("outcome") == "xpassed":
            out += ["Listed in an expectations file but passes now: remove the entry.", ""]
        out.append("```")
        out.append(str(r.get("reason", ""))[:3000])
        out.append("```")
        out.append(f"rerun: `{rerun_of(r)}`")
        out.append("")
    if len(bad) > 200:
        out.append(f"... {len(bad) - 200} more in the journal")
    return out


def write_csv(rows: list[dict], path: Path) -> None:
    """One line per case, sorted by node id: the diffable verdict of a run."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["nodeid", "family", "case_id", "outcome", "max_ratio", "seed"])
        for r in sorted(rows, key=lambda r: r["nodeid"]):
            w.writerow(
                [
                    r["nodeid"],
                    r.get("family"),
                    r.get("case_id"),
                    r.get("outcome"),
                    r.get("max_ratio"),
                    r.get("seed"),
                ]
            )


def write_reports(rows: list[dict], out_dir: str | Path, sessions: list[dict] | None = None) -> list[Path]:
    """report.md, report.html and results.csv in ``out_dir``."""
    from cts.report.html import html_report

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    from cts.numerics.report import report_section

    num_md, num_html = report_section(out_dir)  # python -m cts numerics output beside it, if any
    md = out_dir / "report.md"
    md.write_text(markdown_report(rows, sessions) + num_md, encoding="utf-8")
    page = out_dir / "report.html"
    page.write_text(html_report(rows, sessions).replace("</body>", num_html + "</body>", 1), encoding="utf-8")
    res = out_dir / "results.csv"
    write_csv(rows, res)
    return [md, page, res]


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (`cts <cmd>: message`, exit 2)."""

    def error(self, message: str):
        raise ValueError(f"{message} (see --help)")


def main(argv: list[str]) -> int:
    """``python -m cts report JOURNAL_OR_DIR... --out DIR``."""
    ap = OneLineParser(
        prog="python -m cts report",
        description="merge journals (files or folders of *.jsonl: xdist workers, shards, resumed runs) "
        "into report.md, report.html and results.csv",
    )
    ap.add_argument("journals", nargs="+", metavar="JOURNAL_OR_DIR")
    ap.add_argument("--out", required=True, metavar="DIR", help="folder for the reports")
    a = ap.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = read_journals(a.journals, header=True)
    for w in caught:
        print(f"cts report: warning: {w.message}")
    sessions = [r for r in rows if r.get("kind")]
    cases = [r for r in rows if not r.get("kind")]
    if not cases:
        raise ValueError(f"no case rows in {' '.join(a.journals)}")
    for p in write_reports(cases, a.out, sessions):
        print(p)
    tot = summarize(cases)
    print(", ".join(f"{k} {v}" for k, v in tot.items() if v))
    for line in not_judged_lines(tot):
        print(line)
    # non-zero when anything is not a pass: device verdicts (failed, crash, timeout, unexpected
    # pass) and cases the suite could not judge (harness errors)
    return 1 if any(tot.get(k) for k in (*BAD_OUTCOMES, "xpassed", "interrupted")) else 0
