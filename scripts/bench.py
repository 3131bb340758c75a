#!/usr/bin/env python3
"""Benchmark of the conformance sweeps (not a timed test).

    python scripts/bench.py              # emulator: in-process runners and the pytest sweep
    python scripts/bench.py --no-pytest  # in-process only
    python scripts/bench.py --opencl     # OpenCL sweep: cold/warm cache, build vs run, 1 vs 2 workers

Prints wall time and cases per second for each measured configuration.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def bench_emulator_inprocess() -> tuple[int, float]:
    from cts.backends.emulator import EmulatorBackend
    from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
    from cts.runs.intel import run_intel_mma, run_tf32_convert
    from reference.data import TIERS

    be = EmulatorBackend()
    jobs = [(c, run_intel_mma) for c in intel_mma_cases(TIERS) + intel_split_cases(TIERS)]
    jobs += [(c, run_tf32_convert) for c in tf32_convert_cases(TIERS)]
    t0 = time.perf_counter()
    for case, runner in jobs:
        assert runner(case, be, 1).verdict.passed, case.id
    return len(jobs), time.perf_counter() - t0


def bench_pytest(args: list[str], label: str, report: Path | None = None) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *([] if args and args[0].startswith("cases") else ["cases"]),
        "-q",
        "-p",
        "no:warnings",
        "--report-dir",
        str(report or ROOT / "reports" / "bench"),
        *args,
    ]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=os.environ.copy())
    dt = time.perf_counter() - t0
    tail = [ln for ln in out.stdout.splitlines() if " in " in ln and ("passed" in ln or "skipped" in ln)]
    summary = tail[-1] if tail else out.stdout[-300:]
    n = sum(
        int(w)
        for w, nxt in zip(summary.split(), summary.split()[1:])
        if w.isdigit() and nxt.startswith(("passed", "skipped", "failed"))
    )
    print(f"{label:40s} {dt:7.2f} s  {n / dt if dt else 0:8.1f} cases/s   [{summary.strip()}]")


def bench_opencl(workers: tuple[str, ...] = ("0", "2")) -> None:
    """OpenCL sweep of the Intel families on the Intel CPU runtime with the
    shipped prelude: cold (empty program cache) and warm, 1 and 2 workers,
    build vs run seconds summed over workers (from <report-dir>/opencl-stats)."""
    import json
    import shutil
    import tempfile

    cache = Path(tempfile.mkdtemp(prefix="cts-bench-cl-"))
    report = ROOT / "reports" / "bench" / "opencl"
    base = ["--backend", "opencl", "--opencl-prelude", "builtin", "--opencl-cache-dir", str(cache)]
    try:
        for n in workers:
            for state in ("cold", "warm"):
                if state == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                bench_pytest(
                    ["cases/test_intel_mma.py", *base, "-n", n], f"opencl+prelude, {state}, -n {n}", report
                )
                tot: dict[str, float] = {}
                runs = sorted((report / "opencl-stats").glob("*/"), key=lambda p: p.stat().st_mtime)
                for f in runs[-1].glob("*.json") if runs else []:  # the run just made
                    for k, v in json.loads(f.read_text()).items():
                        tot[k] = tot.get(k, 0) + v
                print(
                    f"{'':40s} build {tot.get('build_seconds', 0):6.1f} s ({int(tot.get('compiled', 0))} compiled, "
                    f"{int(tot.get('disk_hits', 0))} from disk), run {tot.get('run_seconds', 0):5.2f} s "
                    f"({int(tot.get('launches', 0))} launches), summed over workers"
                )
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-pytest", action="store_true", help="skip the pytest sweeps")
    ap.add_argument(
        "--opencl", action="store_true", help="only the OpenCL sweep (Intel CPU runtime + shipped prelude)"
    )
    a = ap.parse_args()
    if a.opencl:
        bench_opencl()
        return 0
    n, dt = bench_emulator_inprocess()
    print(
        f"{'emulator, Intel families, in-process':40s} {dt:7.2f} s  {n / dt:8.1f} cases/s   [{n} cases, 1 core]"
    )
    if not a.no_pytest:
        bench_pytest(["-k", "intel"], "emulator, Intel families, pytest")
        bench_pytest([], "emulator, all families, pytest")
        bench_pytest(["-n", "2"], "emulator, all families, pytest -n 2")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
