"""Self-contained HTML conformance report .

One file, no network: inline CSS, a few lines of inline JavaScript (table
sorting only) and an inline SVG plot.  Every string that comes from a
journal -- device names, driver versions, build logs, case ids -- goes
through ``html.escape``, so a hostile driver string is shown, never run.

Sections: environment block (device, driver, versions, seed, command line),
totals, notes, one colour-coded conformance matrix per family, the plot of
measured error against the allowed bound for the float cases (Rule F), the
coverage table, and the sortable failure table with details and rerun
commands.
"""

from __future__ import annotations

import html
import math
import sys
from collections import Counter, defaultdict
from operator import itemgetter

from cts.judge import Rule
from cts.report.apart import FORCED_TITLE, finding_counts, forced_line, forced_reasons, split_forced
from cts.report.journal import OUTCOMES, ident_label, layer_of, rerun_of
from cts.report.sections import by_section, first_line, section_of_outcome
from cts.report.summary import config_names, exercised, status_lines

__all__ = ["MATRICES_SLOT", "family_matrices", "html_report", "matrix_axes"]

COLOURS = {
    "passed": "#2e9e44",
    "failed": "#d12f2f",
    "crash": "#7a1010",
    "timeout": "#b3541e",
    "error": "#6b6bd6",
    "interrupted": "#c7c7d9",
    "skipped": "#9aa3ad",
    "xfailed": "#e0b000",
    "xpassed": "#8f3fbf",
    "partial": "#8cc63f",
}

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
th{background:#f0f0f0}th.sort{cursor:pointer}th.sort:after{content:" \\2195";color:#999}
.env td:first-child{font-weight:bold;white-space:nowrap}
.cell{color:#fff;text-align:center;font-weight:bold;min-width:4em}
.badge{display:inline-block;color:#fff;text-decoration:none;padding:1px 8px;border-radius:8px;margin-right:4px}
pre{white-space:pre-wrap;background:#f7f7f7;padding:4px;max-height:30em;overflow:auto;margin:2px 0}
.note{background:#fff6d5;padding:4px 8px;margin:2px 0;border-left:4px solid #e0b000}
code{background:#f2f2f2}
"""

SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.classList.add('sort');
    th.addEventListener('click',function(){
      var body=t.tBodies[0], rows=Array.prototype.slice.call(body.rows);
      var dir=th.dataset.dir==='asc'?-1:1; th.dataset.dir=dir===1?'asc':'desc';
      rows.sort(function(a,b){
        var x=a.cells[i].dataset.v||a.cells[i].textContent, y=b.cells[i].dataset.v||b.cells[i].textContent;
        var nx=parseFloat(x), ny=parseFloat(y);
        if(!isNaN(nx)&&!isNaN(ny)) return dir*(nx-ny);
        return dir*x.localeCompare(y);
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


def e(x) -> str:
    """Escape any value for HTML text and attributes."""
    return html.escape("" if x is None else str(x), quote=True)


def status_of(c: Counter) -> str:
    """Worst outcome wins (peer-suites.md F.1: pass < skip < fail)."""
    for k in ("crash", "timeout", "failed", "xpassed", "error", "interrupted"):
        if c.get(k):
            return k
    if c.get("passed"):
        return "passed" if not c.get("skipped") else "partial"
    if c.get("xfailed"):
        return "xfailed"
    return "skipped"


PREFERRED = ["types", "type", "op", "acc", "sg", "k", "use", "api"]
COLUMN_AXES = ["M", "arch", "sg", "width"]
MAX_ROWS = 48  # a matrix a person reads at a glance; the rest is folded into the cells
MAX_ROW_AXES = 4


def matrix_axes(rows: list[dict]) -> tuple[str | None, list[str]]:
    """(column axis, row axes) of a family's matrix.

    Columns: the first of ``COLUMN_AXES`` the family varies (``M`` for the
    Intel built-ins, ``arch`` for joint_matrix), else its axis with the most
    values up to 8.  Rows: axes of ``PREFERRED`` first (a constant one
    too: it names what the matrix is about), then the others with the
    fewest values, each added only while the matrix keeps at most
    ``MAX_ROWS`` rows and ``MAX_ROW_AXES`` axes.  Every other axis and the
    data tier are folded into the cells (a cell is red if any case folded
    into it failed)."""
    values: dict[str, set] = defaultdict(set)
    for ax in _axes_of(rows):
        for k, v in ax.items():
            values[k].add(str(v))
    cand = [k for k in values if k != "tier" and len(values[k]) > 1]
    if not cand:
        return None, [k for k in values if k != "tier"][:MAX_ROW_AXES]
    col = next((k for k in COLUMN_AXES if k in cand), None)
    if col is None:
        small = [k for k in cand if len(values[k]) <= 8]
        col = (
            max(small, key=lambda k: (len(values[k]), k))
            if small
            else min(cand, key=lambda k: (len(values[k]), k))
        )
    order = [k for k in PREFERRED if k in values and k != col]
    order += sorted((k for k in cand if k not in order and k != col), key=lambda k: (len(values[k]), k))
    chosen: list[str] = []
    combos: list[tuple] | None = None  # the distinct value tuples of ``order`` (made when first needed)
    bound = 1  # the product of the chosen axes' value counts: an upper bound of the rows
    for k in order:
        if len(chosen) == MAX_ROW_AXES:
            break
        n = max(1, len(values[k]))
        if n > MAX_ROWS:  # more rows than allowed whatever the other axes
            continue
        if bound * (n + (k not in values)) > MAX_ROWS:  # (a row without the axis is a row of its own)
            if combos is None:
                combos = list({tuple([str(ax.get(a, "")) for a in order]) for ax in _axes_of(rows)})
            pick = itemgetter(*[order.index(a) for a in (*chosen, k)])
            if len(set(map(pick, combos))) > MAX_ROWS:  # (one axis: values, not 1-tuples; the same count)
                continue
        chosen.append(k)
        bound *= n + 1
    return col, chosen


def _axes_of(rows: list[dict]) -> list[dict]:
    """Each row's ``axes`` (an empty dict where it has none)."""
    return [r.get("axes") or {} for r in rows]


def _natural(v: str):
    try:
        return (0, float(v), "")
    except (ValueError, OverflowError):
        return (1, 0.0, v)


def _matrix(family: str, rows: list[dict]) -> str:
    col, row_axes = matrix_axes(rows)
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    tips: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in rows:
        ax = r.get("axes") or {}
        rk = " ".join(f"{k}={ax[k]}" for k in row_axes if k in ax) or "all"
        ck = (str(ax[col]) if col in ax else "-") if col else "cases"
        cells[(rk, ck)][r.get("outcome")] += 1
        if r.get("outcome") not in ("passed", "skipped"):
            tips[(rk, ck)].append(f"{r.get('case_id', '')}: {r.get('outcome')}")
    rks = sorted({k[0] for k in cells})
    cks = sorted({k[1] for k in cells}, key=_natural)
    folded = sorted({k for r in rows for k in (r.get("axes") or {})} - {col, *row_axes})
    out = [f"<h3>{e(family)}</h3>"]
    if folded:
        out.append(f"<p>{len(rows)} cases; folded into each cell: {e(', '.join(folded))}</p>")
    out.append("<table><tr><th>" + e(" ".join(row_axes)) + "</th>")
    out += [f"<th>{e(col)}={e(c)}</th>" if col else f"<th>{e(c)}</th>" for c in cks]
    out.append("</tr>")
    for rk in rks:
        out.append(f"<tr><td>{e(rk)}</td>")
        for ck in cks:
            c = cells.get((rk, ck))
            if not c:
                out.append("<td></td>")
                continue
            st = status_of(c)
            n = sum(c.values())
            good = c.get("passed", 0) + c.get("xfailed", 0)
            label = f"{good}/{n}" if st not in ("skipped",) else "skip"
            out.append(
                f'<td class="cell" style="background:{COLOURS[st]}" title="{e(_tip(c, tips[(rk, ck)]))}">'
                f"{e(label)}</td>"
            )
        out.append("</tr>")
    out.append("</table>")
    return "\n".join(out)


def _tip(c: Counter, odd: list[str]) -> str:
    """Hover text of a cell: its outcome counts and the cases that did not
    simply pass or skip (the first 12)."""
    head = ", ".join(f"{k} {c[k]}" for k in OUTCOMES if c.get(k))
    more = f"; ... {len(odd) - 12} more" if len(odd) > 12 else ""
    return "; ".join([head, *odd[:12]]) + more


def _legend() -> str:
    return "".join(f'<span class="badge" style="background:{c}">{e(k)}</span>' for k, c in COLOURS.items())


def error_plot(rows: list[dict], width: int = 900, height: int = 320) -> str:
    """Inline SVG: for each float case judged by a bound (Rule F), its
    measured max |error| / bound on a log axis; the line at 1 is the bound.
    Cases with zero error sit on the bottom edge."""
    pts = [r for r in rows if r.get("rule") == Rule.F and r.get("max_ratio") is not None]
    if not pts:
        return "<p>No float cases judged against a bound (Rule F) in these journals.</p>"
    pts.sort(key=lambda r: (str(r.get("family")), str(r.get("case_id"))))
    lo, hi = -6.0, 1.0
    for r in pts:
        v = float(r["max_ratio"])
        if v > 0 and math.isfinite(v):
            hi = max(hi, math.ceil(math.log10(v)))
    ml, mr, mt, mb = 60, 10, 20, 40
    pw, ph = width - ml - mr, height - mt - mb

    def ylog(lv: float) -> float:
        return mt + ph * (hi - min(max(lv, lo), hi)) / (hi - lo)

    def y(v: float) -> float:
        return ylog(lo if v <= 0 or not math.isfinite(v) else math.log10(v))

    out = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">']
    out.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>')
    step = max(1, math.ceil((hi - lo) / 12))  # a wrong device may be 1e300 off: a dozen ticks at most
    for d in range(int(lo), int(hi) + 1, step):
        yy = ylog(d)
        out.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{ml - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end">1e{d}</text>')
    yb = y(1.0)
    out.append(
        f'<line x1="{ml}" x2="{ml + pw}" y1="{yb:.1f}" y2="{yb:.1f}" stroke="#d12f2f" stroke-width="2"/>'
    )
    out.append(
        f'<text x="{ml + pw - 4}" y="{yb - 4:.1f}" font-size="12" text-anchor="end" fill="#d12f2f">bound</text>'
    )
    n = len(pts)
    for i, r in enumerate(pts):
        xx = ml + pw * (i + 0.5) / n
        v = float(r["max_ratio"])
        col = COLOURS.get(r.get("outcome"), "#333")
        tip = f"{r.get('family')}[{r.get('case_id')}] max|err| {r.get('max_error')} err/bound {v:.3g}"
        out.append(
            f'<circle cx="{xx:.1f}" cy="{y(v):.1f}" r="3" fill="{col}"><title>{e(tip)}</title></circle>'
        )
    out.append(
        f'<text x="{ml + pw / 2}" y="{height - 8}" font-size="12" text-anchor="middle">'
        f"float cases (Rule F), sorted by family and id: {n}</text>"
    )
    out.append(
        f'<text x="14" y="{mt + ph / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {mt + ph / 2})">max |error| / bound</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


def _seq(x) -> list:
    """A journal value meant as a list (another machine's journal may hold anything)."""
    return list(x) if isinstance(x, (list, tuple)) else ([] if x is None else [x])


def _env(sessions: list[dict], cases: list[dict] | None = None) -> str:
    """The device and environment table; ``exercised``: what the run's
    cases exercised (per family, judged and skipped), beside the
    extensions the device reports."""

    rows: list[tuple[str, object]] = []
    for s in sessions:
        dev = s.get("device") or {}
        rows += [
            ("backend", s.get("backend")),
            ("device", dev.get("name")),
            ("platform", dev.get("platform")),
            ("driver", dev.get("driver")),
            ("device version", dev.get("version")),
            ("subgroup sizes", ", ".join(map(str, _seq(dev.get("subgroup_sizes"))))),
            ("exercised", exercised(cases or [])),
            ("extensions the device reports", " ".join(map(str, _seq(dev.get("extensions"))))),
            ("seed", s.get("seed")),
            ("tolerance profile", s.get("profile")),
            ("tiers", ", ".join(map(str, _seq(s.get("tiers"))))),
            ("options", ", ".join(f"{k}={v}" for k, v in (s.get("options") or {}).items())),
            ("command", s.get("sweep") or s.get("command")),
            ("python / numpy / pytest", f"{s.get('python')} / {s.get('numpy')} / {s.get('pytest')}"),
            ("host platform", s.get("platform")),
        ]
        rows.append(("", ""))
    if not rows:
        return "<p>No session header in these journals.</p>"
    body = "".join(
        f"<tr><td>{e(k)}</td><td><code>{e(v)}</code></td></tr>" for k, v in rows if v not in (None,)
    )
    return f'<table class="env">{body}</table>'


def _failures(rows: list[dict]) -> str:
    """The table of one section of cases that did not pass: outcome,
    family, case, error/bound, duration, the one-line reason with the rerun
    command under it (shown, to copy), and the whole reason folded."""
    if not rows:
        return "<p>None.</p>"
    out = [
        '<table class="sortable"><thead><tr><th>outcome</th><th>layer</th><th>family</th><th>case</th>'
        "<th>max err/bound</th><th>duration s</th><th>reason and rerun command</th></tr></thead><tbody>"
    ]
    for r in rows:
        ratio = r.get("max_ratio")
        reason = str(r.get("reason") or "")
        st = r.get("outcome")
        out.append(
            f'<tr><td class="cell" style="background:{COLOURS.get(st, "#333")}">{e(st)}</td>'
            f"<td>{e(layer_of(r))}</td><td>{e(r.get('family'))}</td><td>{e(r.get('case_id') or r.get('nodeid'))}</td>"
            f'<td data-v="{e(ratio if ratio is not None else -1)}">{e(_ratio_text(r, ratio))}</td>'
            f"<td>{e(r.get('duration'))}</td>"
            f'<td>{e(first_line(r, 200))}<br>rerun: <code class="rerun">{e(rerun_of(r))}</code>'
            f"<details><summary>whole reason</summary><pre>{e(reason[:6000])}</pre></details></td></tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _coverage(rows: list[dict]) -> str:
    cov: dict[tuple, Counter] = defaultdict(Counter)
    for r in rows:
        cov[(r.get("family") or "", r.get("spec_row") or r.get("case_id") or "")][r.get("outcome")] += 1
    out = [
        '<table class="sortable"><thead><tr><th>family</th><th>spec row</th><th>status</th><th>cases</th>'
        "</tr></thead><tbody>"
    ]
    for (fam, row), c in sorted(cov.items()):
        st = status_of(c)
        cnt = ", ".join(f"{k} {c[k]}" for k in OUTCOMES if c.get(k))
        out.append(
            f"<tr><td>{e(fam)}</td><td><code>{e(row)}</code></td>"
            f'<td class="cell" style="background:{COLOURS[st]}">{e(st)}</td><td>{e(cnt)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _record_parts(record, rows: list[dict]) -> tuple[list[str], list[str], list[str]]:
    """(runs, changed, problems) parts of a merged record: the runs and
    configurations merged; changed verdicts; journal problems."""

    top: list[str] = []
    changed: list[str] = []
    bottom: list[str] = []
    if record is None:
        return top, changed, bottom
    names = config_names(record, rows)
    if len(record.runs) > 1 or names:
        body = "".join(
            f"<tr><td><code>{e(r.run)}</code></td><td>{e(names.get(r.cfg, ''))}</td>"
            f"<td>{e(r.status + (f' (resumed by {r.covered_by})' if r.covered_by else ''))}</td>"
            f"<td>{e(r.results)}{e(f' of {r.selected}' if r.selected is not None else '')}</td>"
            f"<td>{e(', '.join((r.session or {}).get('resumes') or []))}</td><td><code>{e(r.command)}</code></td></tr>"
            for r in sorted(record.runs.values(), key=lambda r: (r.start_time, r.run))
        )
        top.append(
            "<h2>Runs merged</h2><table><thead><tr><th>run</th><th>config</th><th>status</th><th>judged</th>"
            f"<th>resumes</th><th>command</th></tr></thead><tbody>{body}</tbody></table>"
        )
        if names:
            top.append(
                "<p>Configurations (device identity and verdict-changing options):</p><ul>"
                + "".join(
                    f"<li><b>{e(n)}</b>: {e(ident_label(record.configs.get(c, {})))}</li>"
                    for c, n in names.items()
                )
                + "</ul>"
            )
    flaky = [r for r in rows if r.get("changed") or r.get("flaky_outcome")]
    if flaky:
        changed.append(
            f"<h2>Changed between runs (flaky): a different verdict when run again ({len(flaky)})</h2>"
        )
        changed.append(
            '<table class="sortable"><thead><tr><th>case</th><th>config</th><th>before</th><th>last</th>'
            "<th>verdicts (count)</th><th>reason before</th></tr></thead><tbody>"
            + "".join(
                f"<tr><td>{e(r.get('nodeid'))}</td><td>{e(names.get(r.get('cfg'), ''))}</td>"
                f"<td>{e(r.get('flaky_outcome'))}</td><td>{e(r.get('outcome'))}</td>"
                f"<td>{e(', '.join(f'{k} {v}' for k, v in (r.get('changed') or {}).items()))}</td>"
                f"<td>{e(r.get('flaky_reason'))}</td></tr>"
                for r in flaky
            )
            + "</tbody></table>"
        )
    if record.problems:
        bottom.append(f"<h2>Journal problems: lines not used ({len(record.problems)})</h2>")
        bottom.append(
            "<ul>" + "".join(f"<li><code>{e(p)}</code></li>" for p in record.problems[:200]) + "</ul>"
        )
    return top, changed, bottom


# where html_report(..., matrices=MATRICES_SLOT) leaves the family matrices out, for a caller that
# builds them apart (family_matrices) and puts them in with one str.replace; no escaped journal text
# can hold it (e() turns every "<" into "&lt;")
MATRICES_SLOT = "<!--cts:family-matrices-->"


def _by_family(rows: list[dict]) -> dict[str, list[dict]]:
    fams: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        fams[r.get("family") or "?"].append(r)
    return fams


def family_matrices(rows: list[dict]) -> str:
    """The conformance matrices of every family, as ``html_report`` places them."""
    fams = _by_family(rows)
    return "\n".join(_matrix(fam, fams[fam]) for fam in sorted(fams))


def html_report(
    rows: list[dict], sessions: list[dict] | None = None, record=None, matrices: str | None = None
) -> str:
    """The whole page as one string (``record``: the merged record the rows
    come from, for its runs, changed verdicts and journal problems).
    ``matrices``: the family matrices' HTML (``family_matrices``, or
    ``MATRICES_SLOT`` to leave a place for them), built here if None.

    Order: the totals (each badge links to the section that lists its
    cases) and the record's status, the cases that did not pass
    (``cts.report.sections.NOT_PASSED``: reason, rerun command, details),
    changed verdicts, the device and environment, runs and notes, the
    matrices, the error plot, the coverage."""

    top, changed, bottom = _record_parts(record, rows)
    rows, forced = split_forced(rows)  # --assume-extension: apart, outside the totals
    sessions = sessions or []
    heads = [s for s in sessions if s.get("kind") == "session"]
    notes = sorted({str(s.get("text")) for s in sessions if s.get("kind") == "note"})
    tot = Counter(r.get("outcome") for r in rows)
    filled = by_section([r for r in rows if r.get("outcome") != "passed"])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Subgroup-matrix conformance report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Subgroup-matrix conformance report</h1>",
        '<h2 id="totals">Totals</h2><p>',
        "".join(_badge(k, tot[k], filled) for k in OUTCOMES if tot.get(k)),
        f" total {len(rows)}</p>",
        *(f'<div class="note"><b>{e(line)}</b></div>' for line in status_lines(rows, record)),
    ]
    for sec, got in filled:
        if got or sec.key == "device-verdicts":
            parts.append(f'<h2 id="{e(sec.key)}">{e(sec.title)} ({len(got)})</h2>')
            if got:
                parts.append(f"<p>{e(sec.blurb)} Click a column header to sort.</p>" + _failures(got))
            else:
                parts.append("<p>None.</p>")
    parts += changed
    parts += [
        '<h2 id="device">Device and environment</h2>',
        _env(heads[:1], rows),
        f"<p>{len(heads)} session(s) merged (shards / workers / resumed runs).</p>" if len(heads) > 1 else "",
        *top,
    ]
    if notes:
        parts.append("<h2>Notes</h2>" + "".join(f'<div class="note">{e(n)}</div>' for n in notes))
    parts.append('<h2 id="matrices">Conformance matrix per family</h2><p>Legend: ' + _legend() + "</p>")
    parts.append(
        "<p>Each cell folds the cases of one row and column (the data tiers, and the axes named above a "
        "matrix): passed (or expected-fail) / cases, coloured by the worst outcome; hover for the "
        "cases that did not pass.</p>"
    )
    parts.append(family_matrices(rows) if matrices is None else matrices)
    parts.append("<h2>Measured error against the allowed bound (float cases)</h2>")
    parts.append(error_plot(rows))
    parts.append(rules_legend(rows))
    if forced:
        parts.append(f'<h2 id="forced">{e(FORCED_TITLE)} ({len(forced)})</h2><p>{e(forced_line(forced))}</p>')
        parts.append("".join(f'<div class="note">{e(w)}: {n} cases</div>' for w, n in forced_reasons(forced)))
        parts.append(_failures([r for r in forced if r.get("outcome") not in ("passed", "skipped")]))
    findings = finding_counts(rows)
    if findings:
        parts.append(f'<h2 id="findings">Invalid modules from the toolchain ({len(findings)} findings)</h2>')
        parts.append("".join(f'<div class="note">{e(f)}: {n} cases</div>' for f, n in findings))
    xf = [r for r in rows if r.get("outcome") == "xfailed"]
    if xf:
        parts.append(
            f'<h2 id="expected-failures">Expected failures ({len(xf)}, from expectations files)</h2>'
        )
        parts.append(
            f"<details><summary>{len(xf)} cases listed as known failures</summary>"
            '<table class="sortable"><thead><tr><th>case</th><th>entry</th></tr></thead><tbody>'
            + "".join(f"<tr><td>{e(r.get('nodeid'))}</td><td>{e(r.get('reason'))}</td></tr>" for r in xf)
            + "</tbody></table></details>"
        )
    parts += bottom
    parts.append('<h2 id="coverage">Coverage: spec row &rarr; cases</h2>' + _coverage(rows))
    parts.append(f"<script>{SORT_JS}</script></body></html>")
    return "\n".join(p for p in parts if p)


# where each outcome's badge leads when no section of NOT_PASSED lists it
_BADGE_HOME = {"passed": "matrices", "skipped": "coverage", "xfailed": "expected-failures"}


def _badge(outcome: str, n: int, filled) -> str:
    """A totals badge that links to the section listing its cases."""
    home = section_of_outcome(outcome, filled) or _BADGE_HOME.get(outcome, "coverage")
    return f'<a class="badge" style="background:{COLOURS[outcome]}" href="#{e(home)}">{e(outcome)} {n}</a>'


# rules that judge against a non-zero bound (the one enumeration: cts.judge.Rule); R has
# one only under the default profile
_BOUND_RULES = tuple(r.value for r in Rule if r.bounded)


def rules_legend(rows: list[dict]) -> str:
    """The acceptance rules the rows name, with their text (from cts.judge.Rule)."""
    seen = sorted({str(r["rule"]) for r in rows if r.get("rule")})
    if not seen:
        return ""
    items = "".join(
        f"<li><b>{e(x)}</b>: {e(Rule.describe(x) or 'a rule letter of an older journal')}</li>" for x in seen
    )
    return f"<h3>Acceptance rules of these cases</h3><ul>{items}</ul>"


def _ratio_text(r: dict, ratio) -> str:
    """The failure table's error/bound cell: a number where the case was
    judged against a non-zero bound; bit-exact rules (E, I, T, strict R, ...)
    say their rule instead of a meaningless 0."""
    rule = r.get("rule")
    if ratio is None or rule is None:
        return ""
    if rule not in _BOUND_RULES or (rule == Rule.R and not float(ratio)):
        return f"rule {rule}"
    return f"{float(ratio):.3g}"


if __name__ == "__main__":  # the browser check, kept at its documented name
    from cts.report.browser import check_main

    raise SystemExit(check_main(sys.argv[1:]))
