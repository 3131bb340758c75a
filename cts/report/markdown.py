"""Conformance reports from journal rows: markdown (tabulate), the
self-contained HTML page (cts/report/html.py) and ``results.csv`` (one sorted line
per case: node id, outcome, ratio) for machines to diff.

``python -m cts report JOURNAL_OR_DIR... --out DIR`` merges the journals of
workers, shards, resumed runs and other machines (``cts.report.journal.read_record``:
one verdict per configuration and case, changed verdicts and journal problems
shown).  All three files are written at once or not at all (``cts.report.atomic``)."""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

from cts.report.apart import FORCED_TITLE, finding_counts, forced_line, forced_reasons, split_forced
from cts.report.atomic import write_set
from cts.report.journal import BAD_OUTCOMES, DEVICE_BAD, OUTCOMES, forced_of, ident_label, layer_of, rerun_of
from cts.report.record import Record, read_record

__all__ = ["markdown_report", "write_reports", "write_record", "record_status", "summarize", "main"]

SHOWN = OUTCOMES


def _s(x) -> str:
    """A table key from a journal field that may be missing (a row written
    by an older run or by the xdist controller lacks some fields)."""
    return "" if x is None else str(x)


# ------------------------------------------------------------- escaping
# Device names, driver strings, case ids and failure reasons come from
# drivers and from other machines' journals: nothing of them may change the
# page's structure (a table cell, a heading, raw HTML).
_MD_SPECIAL = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "`": "\\`", "\n": " ", "\r": " "}
)


def md_text(x) -> str:
    """Plain text in markdown: no HTML, no table split, no code span, no
    link or image (``](`` and ``![`` are broken, so a journal cannot make the
    page fetch anything); one line."""
    return _s(x).replace("\\", "\\\\").translate(_MD_SPECIAL).replace("](", "]\\(").replace("![", "!\\[")


def md_code(x) -> str:
    """An inline code span of any text (one line): a fence longer than any
    run of backticks in it; pipes escaped (GFM splits table cells on them
    even inside code)."""
    t = _s(x).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # never raw HTML, even for a
    # renderer that does not keep code spans literal
    run = max((len(m) for m in re.findall(r"`+", t)), default=0)
    fence = "`" * (run + 1)
    pad = " " if t.startswith("`") or t.endswith("`") or run else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def md_block(x) -> list[str]:
    """A fenced code block of any text: the fence is longer than any run of
    backticks inside, so the text cannot close it."""
    t = _s(x)
    run = max((len(m) for m in re.findall(r"`{3,}", t)), default=2)
    fence = "`" * (run + 1)
    return [fence, t, fence]


def _table(rows: list[list], headers: list[str]) -> str:
    rows = [[md_text(c) if isinstance(c, str) else c for c in r] for r in rows]
    headers = [md_text(h) for h in headers]
    fast = github_table(rows, headers)
    if fast is not None:
        return fast
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def github_table(rows: list[list], headers: list[str]) -> str | None:
    """What ``tabulate(rows, headers, tablefmt="github", disable_numparse=True)``
    prints, for the tables of a report: cells that are printable ASCII
    strings (stripped, as tabulate does), ints, bools or None (empty), every
    row as long as the headers.  Ten times faster than tabulate on the
    coverage table of a full sweep (two thousand rows), which is on the
    merge's critical path.  None for anything else (floats, other text):
    the caller then asks tabulate itself."""
    n = len(headers)
    cols: list[list[str]] = [[] for _ in range(n)]
    for r in rows:
        if len(r) != n:
            return None
        for col, c in zip(cols, r):
            t = type(c)
            if t is str:
                col.append(c.strip())
            elif c is None:
                col.append("")
            elif t is int or t is bool:
                col.append(str(c))
            else:
                return None
    text = "".join(headers) + "".join("".join(col) for col in cols)
    if not (text.isascii() and text.isprintable()):  # tabulate measures other text its own way
        return None
    widths = [max(len(h) + 2, max(map(len, col), default=0)) for h, col in zip(headers, cols)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"]
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for cells in zip(*cols):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |")
    return "\n".join(out)


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


# ---------------------------------------------------------------- status
def record_status(rec: Record, cfg: str | None = None) -> tuple[bool, str]:
    """(bad, why) of a merged record: bad when any final verdict is a
    failure, crash, timeout, unexpected pass or not judged (error,
    interrupted), when runs disagree on a verdict (changed), when a run
    ended early and no later run completed it, or when journal lines were
    rejected.  ``cfg`` limits the verdicts to one configuration."""
    rows = [r for r in rec.rows if (cfg is None or r.get("cfg") == cfg) and not r.get("forced")]
    tot = summarize(rows)  # forced cases (--assume-extension) are no conformance verdicts
    why = [f"{k} {tot[k]}" for k in (*BAD_OUTCOMES, "xpassed", "interrupted") if tot.get(k)]
    changed = sum(1 for r in rows if r.get("changed"))
    if changed:
        why.append(f"{changed} cases changed verdict between runs")
    unfinished = [r for r in rec.unfinished() if cfg is None or r.cfg == cfg]
    if unfinished:
        why.append(f"{len(unfinished)} runs ended early")
    if rec.problems:
        why.append(f"{len(rec.problems)} journal lines rejected")
    return bool(why), ", ".join(why)


def _cfg_names(rec: Record | None, rows: list[dict]) -> dict[str, str]:
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


def unfinished_lines(rec: Record | None) -> list[str]:
    """The report's words for runs that ended early (Ctrl-C, killed, stopped)."""
    out = []
    for run in rec.unfinished() if rec is not None else []:
        sel = run.selected
        judged = f"{run.results} of {sel}" if sel is not None else f"{run.results}"
        cmd = run.command or "pytest ..."
        where = str(Path(run.files[0]).parent) if run.files else "the journal"
        if run.missing_shards:
            out.append(
                f"incomplete: run {run.run} has no journal of shard(s) {', '.join(run.missing_shards)} "
                f"(judged {judged} cases): run each with --shard K/N --run-id {run.run}, then merge again"
            )
            continue
        out.append(
            f"interrupted: run {run.run} ({run.status}) judged {judged} cases; "
            f"resume with: {cmd} --resume {where}"
        )
    return out


def markdown_report(
    rows: list[dict], sessions: list[dict] | None = None, record: Record | None = None
) -> str:
    if record is None or rows is not record.rows or any("family" in r and r["family"] is None for r in rows):
        # (a record's rows are in this order already, unless a family is null: "None" there)
        rows = sorted(rows, key=lambda r: (_s(r.get("family")), _s(r.get("nodeid")), _s(r.get("cfg"))))
    names = _cfg_names(record, rows)
    out = ["# Subgroup-matrix conformance report", ""]
    heads = [s for s in sessions or [] if s.get("kind") == "session"]
    for s in heads[:1]:
        dev = s.get("device") or {}
        out.append(
            f"* backend {md_code(s.get('backend'))}, device {md_code(dev.get('name'))}, "
            f"platform {md_code(dev.get('platform'))}, driver {md_code(dev.get('driver'))}, "
            f"version {md_code(dev.get('version'))}"
        )
        out.append(
            f"* seed {md_text(s.get('seed'))}, profile {md_code(s.get('profile'))}, "
            f"tiers {md_code(','.join(map(str, s.get('tiers') or [])))}"
        )
        out.append(f"* command: {md_code(s.get('command'))}")
        mt = dev.get("mlir_toolchain") or {}
        if mt:
            out.append(f"* MLIR toolchain: {md_code(mt.get('tool'))}, pipeline {md_code(mt.get('pipeline'))}")
        out.append(
            f"* python {md_text(s.get('python'))}, numpy {md_text(s.get('numpy'))}, "
            f"pytest {md_text(s.get('pytest'))}, {md_text(s.get('platform'))}"
        )
    if len(heads) > 1:
        out.append(
            f"* {len(heads)} sessions merged (shards, workers or resumed runs); the lines above are the "
            "first one's, every run is listed under Runs merged"
        )
    for line in unfinished_lines(record):
        out.append(f"* **{md_text(line)}**")
    if record is not None and len(record.runs) > 1 or names:
        out += ["", "## Runs merged", ""]
        out.append(_runs_table(record, names))
        if names:
            out += ["", "Configurations (device identity and verdict-changing options): ", ""]
            out += [f"* **{n}**: {md_text(ident_label(record.configs.get(c, {})))}" for c, n in names.items()]
    notes = sorted({str(s.get("text")) for s in sessions or [] if s.get("kind") == "note"})
    if notes:
        out += ["", "Notes:", ""] + [f"* {md_text(n)}" for n in notes]
    rows, forced = split_forced(rows)  # --assume-extension: their own section, outside every total
    tot = summarize(rows)
    out += [
        "",
        "Totals: " + (", ".join(f"{k} {v}" for k, v in tot.items() if v) or "no conformance case"),
        "",
    ]
    out += [forced_line(forced), ""] if forced else []
    lines = not_judged_lines(tot) + _record_lines(record)
    bad, tool, errs, flaky, intr, xf = [], [], [], [], [], []  # the rows of each section below
    sections = {k: bad for k in (*DEVICE_BAD, "xpassed")} | {"interrupted": intr, "xfailed": xf}
    for r in rows:
        get = r.get
        outcome = get("outcome")
        if outcome == "error":
            (tool if get("toolchain") else errs).append(r)
        elif outcome in sections:
            sections[outcome].append(r)
        if get("changed") or get("flaky_outcome"):
            flaky.append(r)
    n_tool = len(tool)
    if n_tool:
        lines.insert(1, f"of these, {n_tool} toolchain verdicts: the compiler erred (layer toolchain)")
    out += [f"* {md_text(line)}" for line in lines] + ([""] if lines else [])

    # one pass over the rows for the three tables below: per family, backend and device (and
    # configuration when several are merged); per family and tier; per spec row (coverage)
    groups: dict[tuple, Counter] = defaultdict(Counter)
    tg: dict[tuple, Counter] = defaultdict(Counter)
    cov: dict[tuple, Counter] = defaultdict(Counter)
    ratio: dict[tuple, float] = defaultdict(float)
    reasons: dict[tuple, set] = defaultdict(set)
    for r in rows:
        get = r.get
        fam, outcome = _s(get("family")), get("outcome")
        groups[(fam, _s(get("backend")), _s(get("device")), names.get(get("cfg"), ""))][outcome] += 1
        tg[(fam, _s(get("tier")) or "-")][outcome] += 1
        key = (fam, _s(get("spec_row") or get("case_id")))
        cov[key][outcome] += 1
        mr = get("max_ratio")
        if isinstance(mr, (int, float)) and mr:
            ratio[key] = max(ratio[key], float(mr))
        if outcome == "skipped" and get("reason"):
            reasons[key].add(str(r["reason"]))
    cfg_col = ["config"] if names else []
    table = [
        [f, b, d, *([n] if names else []), *[c.get(k, 0) for k in SHOWN], sum(c.values())]
        for (f, b, d, n), c in sorted(groups.items())
    ]
    out += ["## Summary per family, backend and device", ""]
    out.append(_table(table, ["family", "backend", "device", *cfg_col, *SHOWN, "total"]))

    table = [[f, t, *[c.get(k, 0) for k in SHOWN], sum(c.values())] for (f, t), c in sorted(tg.items())]
    out += ["", "## Cases per family and tier", ""]
    out.append(_table(table, ["family", "tier", *SHOWN, "total"]))

    # coverage: one row per spec row
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
    out.append(_table(table, ["family", "spec row", "status", "cases", "max err/bound", "skip reason"]))

    out += ["", f"## Failures: device verdicts ({len(bad)})", ""]
    out += _case_blocks(bad, names)
    if tool:
        out += ["", f"## Toolchain verdicts: the compiler erred, not device verdicts ({len(tool)})", ""]
        out += [
            "The compiler between the suite and the device (named in each) refused a case the spec allows, "
            "or produced a module shown invalid whose result was wrong or refused.",
            "",
        ]
        out += _case_blocks(tool, names)
    if errs:
        out += ["", f"## Harness errors: not device verdicts ({len(errs)})", ""]
        out += ["The suite could not judge these cases (a host tool missing or failing, a suite defect).", ""]
        out += _case_blocks(errs, names)
    if flaky:
        out += ["", f"## Changed between runs (flaky): a different verdict when run again ({len(flaky)})", ""]
        out.append(
            _table(
                [
                    [
                        r.get("nodeid"),
                        *([names.get(r.get("cfg"), "")] if names else []),
                        _s(r.get("flaky_outcome")),
                        _s(r.get("outcome")),
                        ", ".join(f"{k} {v}" for k, v in (r.get("changed") or {}).items()),
                        _s(r.get("flaky_reason")),
                    ]
                    for r in flaky
                ],
                ["case", *cfg_col, "before", "last", "verdicts (count)", "reason before"],
            )
        )
    if intr:
        out += ["", f"## Interrupted: not judged ({len(intr)})", ""]
        out += ["In flight when the whole run died; `--resume` runs them again.", ""]
        out += [f"* {md_code(r.get('nodeid'))}" for r in intr[:200]]
    if xf:
        out += ["", f"## Expected failures ({len(xf)}, from expectations files)", ""]
        out.append(_table([[r.get("nodeid"), _s(r.get("reason"))] for r in xf], ["case", "entry"]))
    out += _apart_sections(forced, rows, names)
    if record is not None and record.problems:
        out += ["", f"## Journal problems: lines not used ({len(record.problems)})", ""]
        out += ["Lines of the journals that could not be read as a valid record (file:line: why).", ""]
        out += [f"* {md_text(p)}" for p in record.problems[:200]]
        if len(record.problems) > 200:
            out.append(f"* ... {len(record.problems) - 200} more")
    return "\n".join(out) + "\n"


def _apart_sections(forced: list[dict], rows: list[dict], names: dict[str, str]) -> list[str]:
    """The forced cases (counts per reason, blocks of those not passing) and
    the findings on toolchain-made modules (``cts.report.apart``)."""
    out = []
    if forced:
        out += ["", f"## {FORCED_TITLE} ({len(forced)})", ""]
        out.append(_table(forced_reasons(forced), ["what the device does not list", "cases"]))
        bad = [r for r in forced if r.get("outcome") in (*BAD_OUTCOMES, "xpassed")]
        out += ([""] if bad else []) + _case_blocks(bad, names)
    table = finding_counts(rows)
    if table:
        out += ["", f"## Invalid modules from the toolchain ({len(table)} findings)", ""]
        out += ["Each finding once, with the number of cases whose module has it.", ""]
        out.append(_table(table, ["finding", "cases"]))
    return out


def _runs_table(rec: Record | None, names: dict[str, str]) -> str:
    if rec is None:
        return ""
    table = []
    for run in sorted(rec.runs.values(), key=lambda r: (r.start_time, r.run)):
        sel = run.selected
        table.append(
            [
                run.run,
                names.get(run.cfg, ""),
                run.status + (f" (resumed by {run.covered_by})" if run.covered_by else ""),
                f"{run.results}" + (f" of {sel}" if sel is not None else ""),
                ", ".join((run.session or {}).get("resumes") or []),
                run.command,
            ]
        )
    return _table(table, ["run", "config", "status", "judged", "resumes", "command"])


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


def _case_blocks(bad: list[dict], names: dict[str, str] | None = None) -> list[str]:
    out = []
    for r in bad[:200]:
        cfg = (names or {}).get(r.get("cfg"), "")
        layer = layer_of(r)
        out.append(
            f"### {md_text(r.get('nodeid'))} - {md_text(r.get('outcome'))}"
            + (f" (layer: {md_text(layer)})" if layer else "")
            + (f" (config {cfg})" if cfg else "")
        )
        out.append("")
        if r.get("outcome") == "xpassed":
            out += ["Listed in an expectations file but passes now: remove the entry.", ""]
        out += md_block(str(r.get("reason", ""))[:3000])
        out.append(f"rerun: {md_code(rerun_of(r))}")
        out.append("")
    if len(bad) > 200:
        out.append(f"... {len(bad) - 200} more in the journal")
    return out


CSV_FIELDS = ["nodeid", "family", "case_id", "outcome", "max_ratio", "seed", "config", "layer", "forced"]


def csv_text(rows: list[dict]) -> str:
    """One line per case and configuration, sorted: the diffable verdict of a run."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in sorted(rows, key=lambda r: (str(r["nodeid"]), str(r.get("cfg") or ""))):
        w.writerow([r["nodeid"], r.get("family"), r.get("case_id"), r.get("outcome"), r.get("max_ratio"),
                    r.get("seed"), r.get("cfg") or "", layer_of(r), forced_of(r)])  # fmt: skip
    return buf.getvalue()


def write_reports(
    rows: list[dict],
    out_dir: str | Path,
    sessions: list[dict] | None = None,
    record: Record | None = None,
    aside: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> list[Path]:
    """report.md, report.html and results.csv in ``out_dir``, all or none.
    ``aside``: where this process is single-threaded (``cts.report.aside``),
    forked children build the markdown and the HTML page (on 4 or more
    cores its family matrices, the page's costliest part, in a child of
    their own) while this process writes the CSV and calls ``meanwhile``
    (the caller's own work on the same record, e.g. the sweep's durations
    table; an exception of it is raised after the reports are written);
    without children it is called after the CSV too, before the rest is
    built in line."""
    from cts.numerics.report import report_section
    from cts.report.aside import aside as aside_of
    from cts.report.html import MATRICES_SLOT, family_matrices, html_report

    out_dir = Path(out_dir)
    if not str(out_dir).strip():
        raise ValueError("--out: empty path (name a folder)")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(f"cannot write the report to {out_dir}: {e.strerror or e}") from None
    num_md, num_html = report_section(out_dir)  # python -m cts numerics output beside it, if any
    md, page, res = out_dir / "report.md", out_dir / "report.html", out_dir / "results.csv"
    html = mats = mark = None
    if aside:  # the matrices apart only where a core is free for them (on 2 cores: measured no gain)
        apart = bool(rows) and _cores() >= 4  # (no rows: no matrix, and no empty line where they go)
        html = aside_of(html_report, rows, sessions, record, MATRICES_SLOT if apart else None)
        mats = aside_of(family_matrices, rows) if apart else None
        mark = aside_of(markdown_report, rows, sessions, record)
    failed: Exception | None = None
    try:
        csv = csv_text(rows)
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception as e:  # noqa: BLE001  (the caller's own work: the reports are written first)
                failed = e
        text = (mark() if mark is not None else markdown_report(rows, sessions, record)) + num_md
        if html is None:
            page_text = html_report(rows, sessions, record)
        else:
            page_text = html() if mats is None else html().replace(MATRICES_SLOT, mats(), 1)
    finally:  # a failure (or Ctrl-C) before a child's value was taken: end and reap that child
        for child in (html, mats, mark):
            if child is not None:
                child.discard()
    write_set({md: text, page: page_text.replace("</body>", num_html + "</body>", 1), res: csv})
    if failed is not None:
        raise failed
    return [md, page, res]


def _cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def write_record(
    rec: Record,
    out_dir: str | Path,
    extra_notes: list[dict] | None = None,
    aside: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> list[Path]:
    """The three reports of a merged record (``aside``, ``meanwhile``: see ``write_reports``)."""
    notes = [*rec.sessions, *rec.notes, *(extra_notes or [])]
    return write_reports(rec.rows, out_dir, notes, rec, aside, meanwhile)


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
    if not a.out.strip():
        raise ValueError("--out: empty path (name a folder)")
    rec = read_record(a.journals)
    if not rec.rows:
        raise ValueError(
            f"no case rows in {' '.join(a.journals)}"
            + (
                f" ({len(rec.problems)} journal lines rejected, first: {rec.problems[0]})"
                if rec.problems
                else ""
            )
        )
    for p in rec.problems[:20]:
        print(f"cts report: journal problem: {p}")
    if len(rec.problems) > 20:
        print(f"cts report: ... {len(rec.problems) - 20} more journal problems (listed in the report)")
    for p in write_record(rec, a.out, aside=True):
        print(p)
    from cts.report.terminal import failure_lines  # (it imports this module: here, not at the top)

    for line in failure_lines(rec.rows, record=rec):
        print(line)
    rows, forced = split_forced(rec.rows)
    tot = summarize(rows)
    print(", ".join(f"{k} {v}" for k, v in tot.items() if v))
    if forced:
        print(forced_line(forced))
    for line in not_judged_lines(tot) + _record_lines(rec) + unfinished_lines(rec):
        print(line)
    if len(rec.configs) > 1:
        print(f"{len(rec.configs)} configurations kept apart (see Runs merged)")
    bad, why = record_status(rec)
    if bad:
        print(f"not clean: {why}")
    # non-zero when anything is not a pass: a device verdict (failed, crash, timeout, unexpected
    # pass), a case not judged, verdicts that disagree between runs, a run that ended early, a
    # rejected journal line
    return 1 if bad else 0
