"""Where the wall time of one ``python -m cts sweep`` goes, shard by shard
(a benchmark, not a test).

    python scripts/bench_timeline.py -j 16 cases [more sweep options]
    python scripts/bench_timeline.py --alone 4 -j 16 cases

The second form runs shard 4 of 16 alone, as one ``python -m pytest
--shard 4/16 --journal-only`` process: the same cases without the other
fifteen beside it, so the two tables tell what running side by side costs.
Runs the sweep into a temporary report folder (unless ``--report-dir`` is
given), then reads its journals.  Per shard, in seconds from the launcher's
start: when its journal opened (the fork plus pytest's configuration and the
shard's collection), its first and last case, the end line (session finish),
the case count, and the time inside its case functions against the span of
its case loop (the rest is pytest's own per-item work and the suite's hooks).
Then the totals: the slowest shard's end against the mean (imbalance), and
what came after the last end (the shards' exit and the launcher's merge).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timeline(journals: Path, t0: float) -> list[dict]:
    out = []
    for f in sorted(journals.glob("*.jsonl")):
        s = {
            "name": f.name.split("-")[0],
            "open": None,
            "first": None,
            "last": None,
            "end": None,
            "n": 0,
            "inside": 0.0,
        }
        for line in f.read_text().splitlines():
            r = json.loads(line)
            kind, t = r.get("kind"), r.get("time")
            if kind == "journal":
                s["open"] = t - t0
            elif kind == "start" and s["first"] is None:
                s["first"] = t - t0
            elif kind == "end":
                s["end"] = t - t0
            elif "duration" in r and kind is None:
                s["last"] = t - t0
                s["n"] += 1
                s["inside"] += r.get("duration") or 0.0
        out.append(s)
    return out


def _value(args: list[str], *names: str) -> tuple[str | None, list[str]]:
    """The value of the first of ``names`` in ``args`` (``--x V``, ``--x=V``,
    ``-jV``) and ``args`` without it."""
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1], args[:i] + args[i + 2 :]
            if a.startswith(n + "=") or (len(n) == 2 and a.startswith(n) and a[2:].isdigit()):
                return a[len(n) + (a[len(n)] == "=") :], args[:i] + args[i + 1 :]
    return None, list(args)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="where one `cts sweep`'s wall time goes, shard by shard; every other argument goes to "
        "`python -m cts sweep` (-j N, the selection, its options)"
    )
    ap.add_argument(
        "--alone", type=int, metavar="K", help="run shard K of -j N by itself, as one pytest process"
    )
    a, args = ap.parse_known_args(argv)
    jobs, rest = _value(args, "-j", "--jobs")
    if a.alone is not None and not (jobs or "").isdigit():
        ap.error("--alone K needs -j N")
    given, _ = _value(args, "--report-dir")
    report = Path(given or tempfile.mkdtemp(prefix="cts-timeline-"))
    if given is None:
        args, rest = [*args, f"--report-dir={report}"], [*rest, f"--report-dir={report}"]
    try:
        return _measure(args, rest, a.alone, jobs, report)
    finally:
        if given is None:
            shutil.rmtree(report, ignore_errors=True)


def _measure(args: list[str], rest: list[str], alone: int | None, jobs: str | None, report: Path) -> int:
    run_id = f"timeline-{int(time.time())}"
    t0 = time.time()
    cmd = [sys.executable, "-m", "cts", "sweep", *args, "--run-id", run_id]
    if alone is not None:  # -j N -> --shard K/N, one pytest process
        cmd = [sys.executable, "-m", "pytest", *rest, "-q", "-p", "no:xdist", "--run-id", run_id,
               "--shard", f"{alone}/{jobs}", "--journal-only"]  # fmt: skip
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.time() - t0
    last = [ln for ln in p.stdout.splitlines() if " in " in ln and ("merge" in ln or "passed" in ln)]
    imports = re.search(r"\((?:imports|warm-up) ([0-9.]+)s\)", p.stdout)
    print(
        f"exit {p.returncode}, wall {wall:.2f} s"
        + (f", launcher's imports before the fork {imports.group(1)} s" if imports else "")
        + f": {last[-1] if last else p.stdout[-300:]}"
    )
    rows = [r for r in timeline(report / "journal" / run_id, t0) if r["open"] is not None]
    if not rows:
        print(p.stdout[-2000:], p.stderr[-2000:])
        return 1
    print(
        "| shard | journal open | first case | last case | end line | cases | in case functions | loop span |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s in rows:
        span = (s["last"] or 0) - (s["first"] or 0)
        print(
            f"| {s['name']} | {_fmt(s['open'])} | {_fmt(s['first'])} | {_fmt(s['last'])} | {_fmt(s['end'])} | "
            f"{s['n']} | {s['inside']:.2f} | {span:.2f} |"
        )
    ends = [s["end"] for s in rows if s["end"] is not None]
    if len(ends) < len(rows):
        print(f"\n{len(rows) - len(ends)} shard(s) wrote no end line (interrupted or killed)")
    if not ends:
        return 1
    opens = [s["open"] for s in rows]
    inside = sum(s["inside"] for s in rows)
    span = sum((s["last"] or 0) - (s["first"] or 0) for s in rows)
    print(
        f"\njournal open: mean {statistics.mean(opens):.2f} s, max {max(opens):.2f} s; "
        f"end line: mean {statistics.mean(ends):.2f} s, max {max(ends):.2f} s (imbalance "
        f"{max(ends) - statistics.mean(ends):.2f} s); after the last end line: {wall - max(ends):.2f} s "
        f"(exits and merge); in case functions {inside:.2f} s of {span:.2f} s of case loops "
        f"({inside / span if span else 0:.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
