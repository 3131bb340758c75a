"""The markdown report of journal rows (``report.md``) and ``results.csv``
(one sorted line per case: node id, outcome, ratio) for machines to diff.
The HTML page is ``cts.report.html``'s; ``cts.report.writer`` writes the
three files at once or not at all; ``python -m cts report`` (merging the
journals of workers, shards, resumed runs and other machines) is
``cts.report.cli``."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict

from cts.judge import Rule
from cts.report.apart import FORCED_TITLE, finding_counts, forced_line, forced_reasons, split_forced
from cts.report.journal import BAD_OUTCOMES, DEVICE_BAD, forced_of, ident_label, layer_of, rerun_of
from cts.report.mdtext import github_table, md_block, md_code, md_text  # noqa: F401  (re-exported)
from cts.report.mdtext import md_table as _table
from cts.report.mdtext import plain as _s
from cts.report.record import Record
from cts.report.sections import by_section, first_line
from cts.report.summary import SHOWN, config_names, exercised, status_lines, summarize

__all__ = ["markdown_report", "csv_text"]


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


def markdown_report(
    rows: list[dict], sessions: list[dict] | None = None, record: Record | None = None
) -> str:
    """The markdown report: the totals and the record's status first, then
    the cases that did not pass (``cts.report.sections.NOT_PASSED``, each
    with its one-line reason and rerun command), then the device, the runs
    and notes, the summaries and the coverage, and the full reasons last."""
    if record is None or rows is not record.rows or any("family" in r and r["family"] is None for r in rows):
        # (a record's rows are in this order already, unless a family is null: "None" there)
        rows = sorted(rows, key=lambda r: (_s(r.get("family")), _s(r.get("nodeid")), _s(r.get("cfg"))))
    names = config_names(record, rows)
    out = ["# Subgroup-matrix conformance report", ""]
    rows, forced = split_forced(rows)  # --assume-extension: their own section, outside every total
    tot = summarize(rows)
    out += ["Totals: " + (", ".join(f"{k} {v}" for k, v in tot.items() if v) or "no conformance case"), ""]
    out += [forced_line(forced), ""] if forced else []
    filled = by_section([r for r in rows if r.get("outcome") != "passed"])
    lines = status_lines(rows, record)
    n_tool = sum(1 for r in rows if r.get("outcome") == "error" and r.get("toolchain"))
    if n_tool:
        lines.insert(1, f"of these, {n_tool} toolchain verdicts: the compiler erred (layer toolchain)")
    for line in lines:
        words, _, cmd = line.partition("; resume with: ")  # the command in a block: copied as it is
        loud = "**" if line.startswith(_LOUD) else ""
        out.append(f"* {loud}{md_text(words)}{'; resume with:' if cmd else ''}{loud}")
        out += ["", *("  " + ln for ln in md_block(cmd, "sh")), ""] if cmd else []
    out += [""] if lines else []
    for sec, got in filled:
        if (
            got or sec.key == "device-verdicts"
        ):  # "none" said for the device verdicts, the others only when any
            out += [f'<a id="{sec.key}"></a>', "", f"## {sec.title} ({len(got)})", ""]
            out += ([sec.blurb, ""] if sec.blurb and got else []) + _case_list(got, names)
    flaky = [r for r in rows if r.get("changed") or r.get("flaky_outcome")]
    cfg_col = ["config"] if names else []
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
    out += _apart_sections(forced, rows, names)
    out += ["", "## Device and environment", ""]
    heads = [s for s in sessions or [] if s.get("kind") == "session"]
    out += _environment(heads, rows)
    if record is not None and len(record.runs) > 1 or names:
        out += ["", "## Runs merged", ""]
        out.append(_runs_table(record, names))
        if names:
            out += ["", "Configurations (device identity and verdict-changing options): ", ""]
            out += [f"* **{n}**: {md_text(ident_label(record.configs.get(c, {})))}" for c, n in names.items()]
    notes = sorted({str(s.get("text")) for s in sessions or [] if s.get("kind") == "note"})
    if notes:
        out += ["", "Notes:", ""] + [f"* {md_text(n)}" for n in notes]
    out += [""]
    out += _summaries(rows, names)
    xf = [r for r in rows if r.get("outcome") == "xfailed"]
    if xf:
        out += ["", f"## Expected failures ({len(xf)}, from expectations files)", ""]
        out.append(_table([[r.get("nodeid"), _s(r.get("reason"))] for r in xf], ["case", "entry"]))
    if record is not None and record.problems:
        out += ["", f"## Journal problems: lines not used ({len(record.problems)})", ""]
        out += ["Lines of the journals that could not be read as a valid record (file:line: why).", ""]
        out += [f"* {md_text(p)}" for p in record.problems[:200]]
        if len(record.problems) > 200:
            out.append(f"* ... {len(record.problems) - 200} more")
    detailed = [r for sec, got in filled if sec.key != "interrupted" for r in got]
    if detailed:
        out += ["", f"## Details of the cases that did not pass ({len(detailed)})", ""]
        out += _case_blocks(detailed, names)
    return "\n".join(out) + "\n"


_LOUD = ("interrupted: run", "incomplete:", "missing:", "no case was judged: backend")


def _environment(heads: list[dict], rows: list[dict]) -> list[str]:
    out = []
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
        out.append(f"* command: {md_code(s.get('sweep') or s.get('command'))}")
        mt = dev.get("mlir_toolchain") or {}
        if mt:
            out.append(f"* MLIR toolchain: {md_code(mt.get('tool'))}, pipeline {md_code(mt.get('pipeline'))}")
        out.append(
            f"* python {md_text(s.get('python'))}, numpy {md_text(s.get('numpy'))}, "
            f"pytest {md_text(s.get('pytest'))}, {md_text(s.get('platform'))}"
        )
    ex = exercised(rows)
    if ex:
        out.append(f"* exercised: {md_text(ex)}")
    if len(heads) > 1:
        out.append(
            f"* {len(heads)} sessions merged (shards, workers or resumed runs); the lines above are the "
            "first one's, every run is listed under Runs merged"
        )
    return out or ["No session header in these journals."]


def _summaries(rows: list[dict], names: dict[str, str]) -> list[str]:
    """The summary per family, backend and device, per family and tier, and
    the coverage (spec row -> cases), from one pass over the rows."""
    out: list[str] = []
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
    return out


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


def _case_list(rows: list[dict], names: dict[str, str], cap: int = 200) -> list[str]:
    """One entry per case: node id, outcome (and configuration), the
    one-line reason, and the rerun command in a block of its own (copied
    as it is: no markdown escape inside)."""
    if not rows:
        return ["None.", ""]
    out = []
    for r in rows[:cap]:
        cfg = names.get(r.get("cfg"), "")
        why = first_line(r)
        out.append(
            f"* {md_code(r.get('nodeid'))} **{md_text(r.get('outcome'))}**"
            + (f" (layer {md_text(layer_of(r))})" if layer_of(r) else "")
            + (f" (config {cfg})" if cfg else "")
            + (f": {md_text(why)}" if why else "")
        )
        out += ["", *("  " + ln for ln in md_block(rerun_of(r), "sh")), ""]
    if len(rows) > cap:
        out += [f"... {len(rows) - cap} more: results.csv lists every case, the journal every reason", ""]
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
        if r.get("rule") and Rule.describe(str(r["rule"])):  # the rule's text from the one enumeration
            out.append(f"rule {md_text(r['rule'])}: {md_text(Rule.describe(str(r['rule'])))}")
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
