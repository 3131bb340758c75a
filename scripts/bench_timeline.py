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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description="where one `cts sweep`'s wall time goes, shard by shard; every other argument goes to "
        "`python -m cts sweep` (-j N, the selection, its options)"
    )
    ap.add_argument(
        "--alone", type=int, metavar="K", help="run shard K of -j N by itself, as one pytest process"
    )
    a, args = ap.parse_known_args(argv)
    alone = a.alone
    if alone is not None and "-j" not in args:
        ap.error("--alone K needs -j N")
    if not any(a.startswith("--report-dir") for a in args):
        args.append(f"--report-dir={tempfile.mkdtemp(prefix='cts-timeline-')}")
    report = Path(next(a.split("=", 1)[1] for a in args if a.startswith("--report-dir=")))
    run_id = f"timeline-{int(time.time())}"
    t0 = time.time()
    cmd = [sys.executable, "-m", "cts", "sweep", *args, "--run-id", run_id]
    if alone is not None:  # -j N -> --shard K/N, one pytest process
        j = args.index("-j")
        rest = args[:j] + args[j + 2 :]
        cmd = [sys.executable, "-m", "pytest", *rest, "-q", "-p", "no:xdist", "--run-id", run_id,
               "--shard", f"{alone}/{args[j + 1]}", "--journal-only"]  # fmt: skip
    p = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.time() - t0
    last = [ln for ln in p.stdout.splitlines() if " in " in ln and ("merge" in ln or "passed" in ln)]
    imports = re.search(r"\((?:imports|warm-up) ([0-9.]+)s\)", p.stdout)
    print(
        f"exit {p.returncode}, wall {wall:.2f} s"
        + (f", launcher's imports before the fork {imports.group(1)} s" if imports else "")
        + f": {last[-1] if last else p.stdout[-300:]}"
    )
    rows = timeline(report / "journal" / run_id, t0)
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
            f"| {s['name']} | {s['open']:.2f} | {s['first']:.2f} | {s['last']:.2f} | {s['end']:.2f} | "
            f"{s['n']} | {s['inside']:.2f} | {span:.2f} |"
        )
    ends = [s["end"] for s in rows]
    opens = [s["open"] for s in rows]
    inside = sum(s["inside"] for s in rows)
    span = sum((s["last"] or 0) - (s["first"] or 0) for s in rows)
    print(
        f"\njournal open: mean {statistics.mean(opens):.2f} s, max {max(opens):.2f} s; "
        f"end line: mean {statistics.mean(ends):.2f} s, max {max(ends):.2f} s (imbalance "
        f"{max(ends) - statistics.mean(ends):.2f} s); after the last end line: {wall - max(ends):.2f} s "
        f"(exits and merge); in case functions {inside:.2f} s of {span:.2f} s of case loops "
        f"({inside / span:.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
