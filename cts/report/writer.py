"""The three report files of a set of case rows or a merged record
(report.md, report.html, results.csv), written all or none, the markdown
and HTML built in forked children where that saves time (``cts.report.aside``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cts.report.atomic import write_set
from cts.report.markdown import csv_text, markdown_report
from cts.report.record import Record

__all__ = ["write_reports", "write_record"]


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
