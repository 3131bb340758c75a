"""``python -m cts report JOURNAL_OR_DIR... --out DIR``: merge journals into
the three report files, print the cases that did not pass, the totals and
the status lines, and exit with the record's status (``cts.report.exit_status``)."""

from __future__ import annotations

import argparse
import os

from cts.report.apart import forced_line, split_forced
from cts.report.exit_status import record_exit_status, record_status
from cts.report.record import read_record
from cts.report.summary import status_lines, summarize
from cts.report.terminal import failure_lines
from cts.report.writer import write_record

__all__ = ["OneLineParser", "main", "default_out"]


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
    ap.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        help="folder for the reports (default: DIR/merged for one folder given, else reports/merged)",
    )
    a = ap.parse_args(argv)
    if a.out is None:
        a.out = default_out(a.journals)
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
    for line in failure_lines(rec.rows, record=rec):
        print(line)
    rows, forced = split_forced(rec.rows)
    tot = summarize(rows)
    print(", ".join(f"{k} {v}" for k, v in tot.items() if v))
    if forced:
        print(forced_line(forced))
    for line in status_lines(rows, rec):
        print(line)
    if len(rec.configs) > 1:
        print(f"{len(rec.configs)} configurations kept apart (see Runs merged)")
    bad, why = record_status(rec)
    if bad:
        print(f"not clean: {why}")
    return record_exit_status(rec)


def default_out(journals: list[str]) -> str:
    """``--out`` when none is given: ``merged`` inside the one folder given,
    else ``reports/merged``."""
    if len(journals) == 1 and os.path.isdir(journals[0]):
        return os.path.join(journals[0], "merged")
    return os.path.join("reports", "merged")
