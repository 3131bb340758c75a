"""Where a sweep's merge goes: the phases of ``python -m cts sweep``'s merge,
timed on the journals of one run (a benchmark, not a test).

    python -m cts sweep -j 16 cases --report-dir /tmp/w
    python scripts/bench_merge.py /tmp/w/journal/<run id> [repetitions]

Per repetition: reading every journal but the last ahead (what the launcher
does while the last shards run), ``read_record`` of the run (the last journal
and the merge of every row), the markdown, HTML and CSV texts one after the
other in this process, writing the three files, the launcher's own
``write_record`` (markdown and HTML in forked children), and the record's
status.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread: write_record forks its children

import gc  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from cts.report import exit_status, html, markdown, writer  # noqa: E402
from cts.report.atomic import write_set  # noqa: E402
from cts.report.record import prime, read_record  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or not Path(argv[0]).is_dir():
        print("usage: python scripts/bench_merge.py JOURNAL_FOLDER_OF_ONE_RUN [REPETITIONS]", file=sys.stderr)
        return 2
    folder = argv[0]
    files = sorted(Path(folder).glob("*.jsonl"))
    gc.freeze()
    out = Path(tempfile.mkdtemp(prefix="cts-bench-merge-"))
    for _ in range(int(argv[1]) if len(argv) > 1 else 4):
        t = [time.perf_counter()]
        prime(files[:-1])
        t.append(time.perf_counter())
        rec = read_record([folder])
        t.append(time.perf_counter())
        notes = [*rec.sessions, *rec.notes]
        md = markdown.markdown_report(rec.rows, notes, rec)
        t.append(time.perf_counter())
        page = html.html_report(rec.rows, notes, rec)
        t.append(time.perf_counter())
        csv = markdown.csv_text(rec.rows)
        t.append(time.perf_counter())
        write_set({out / "report.md": md, out / "report.html": page, out / "results.csv": csv})
        t.append(time.perf_counter())
        writer.write_record(rec, out / "aside", aside=True)
        t.append(time.perf_counter())
        exit_status.record_status(rec)
        t.append(time.perf_counter())
        names = (
            "read ahead",
            "read_record",
            "markdown",
            "html",
            "csv",
            "write 3 files",
            "write_record",
            "status",
        )
        print("  ".join(f"{n} {b - a:.3f}s" for n, a, b in zip(names, t, t[1:])), flush=True)
        del rec
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
