#!/usr/bin/env python3
"""Benchmark of the conformance sweeps against pytest's own floor (not a timed test).

    python scripts/bench.py                      # the emulator sweep: serial, -n 2, cts sweep -j 2 vs the floor
    python scripts/bench.py --jobs 2,4,8,16      # any job counts: pytest -n J and cts sweep -j J
    python scripts/bench.py --slice 500          # memory: peak RSS of 500 cases (spread) vs the full sweep
    python scripts/bench.py -- cases/test_joint_matrix.py   # any pytest selection / options after --
    python scripts/bench.py --harness 8000       # the harness's own cost a case (no-op cases, real plugin)
    python scripts/bench.py --opencl             # OpenCL: Intel families on Intel's CPU runtime, cold/warm

The floor is the same collected node ids as no-op tests (``assert case``),
generated in a temporary folder and run by the same pytest with the same
worker count: what pytest itself costs for that many items.  Every suite
figure is printed as a ratio to it.  "harness" is the time outside the case
functions (wall - floor - sum of journal durations) per case; the
per-family table is cases per second inside the case functions.  Peak RSS is
the largest process of the run (``getrusage(RUSAGE_CHILDREN)`` of a wrapper).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LAST_CPU = [0.0]
# the floor runs outside the project: the plugins the project's addopts leave out are left out here too
PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:warnings",
    "-p",
    "no:hypothesispytest",
]


def measure(cmd: list[str], cwd: Path) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (MB, largest process) and stdout of ``cmd``,
    run under a wrapper whose children's rusage is the command's alone.
    ``LAST_CPU[0]`` is its CPU seconds (user + system, all processes)."""
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "r = [u.ru_maxrss, u.ru_utime + u.ru_stime]\n"
        "sys.stdout.write(p.stdout + p.stderr)\n"
        "print('\\n@@BENCH ' + json.dumps([dt, r, p.returncode]))\n"
    )
    out = subprocess.run([sys.executable, "-c", wrapper, *cmd], cwd=cwd, capture_output=True, text=True)
    text = out.stdout
    m = re.search(r"@@BENCH (\[.*\])", text)
    if not m:
        raise SystemExit(f"bench: could not run {' '.join(cmd)}: {out.stderr[-500:]}")
    dt, (rss_kb, cpu), rc = json.loads(m.group(1))
    LAST_CPU[0] = cpu
    if rc not in (0, 1):
        raise SystemExit(f"bench: {' '.join(cmd)} exited {rc}:\n{text[-1500:]}")
    return dt, rss_kb // 1024, text


def collect(sel: list[str]) -> list[str]:
    out = subprocess.run([*PYTEST, "--co", *sel], cwd=ROOT, capture_output=True, text=True)
    ids = [ln for ln in out.stdout.splitlines() if "::" in ln and not ln.startswith(" ")]
    if not ids:
        raise SystemExit(f"bench: nothing collected by {sel}:\n{out.stdout[-800:]}{out.stderr[-800:]}")
    return ids


def write_floor(ids: list[str], into: Path) -> None:
    """The no-op twin of ``ids``: one parametrized test per (file, function)
    with the same ids, so pytest does the same per-item work and nothing else."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for nid in ids:
        path, _, rest = nid.partition("::")
        func, _, param = rest.partition("[")
        groups[(path, func)].append(param[:-1] if param else "")
    files: dict[str, list[str]] = defaultdict(list)
    for (path, func), params in groups.items():
        files[path].append(
            f"@pytest.mark.parametrize('case', range(1, {len(params) + 1}), ids={params!r})\n"
            f"def {func}(case):\n    assert case\n"
        )
    for path, tests in files.items():
        f = into / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("import pytest\n\n\n" + "\n\n".join(tests))
    (into / "pytest.ini").write_text("[pytest]\n")


def summary(text: str) -> str:
    tail = [ln for ln in text.splitlines() if re.search(r"\d+ (passed|skipped|failed)", ln)]
    return tail[-1].strip("= ") if tail else text[-200:]


def journal_durations(report: Path) -> dict[str, tuple[int, float]]:
    from cts.report.record import read_record

    fam: dict[str, list[float]] = defaultdict(list)
    for r in read_record([report / "journal"]).rows:
        if r.get("outcome") in ("passed", "failed", "skipped"):
            fam[r.get("family") or "?"].append(float(r.get("duration") or 0))
    return {k: (len(v), sum(v)) for k, v in sorted(fam.items())}


def workers_args(n: str) -> list[str]:
    return ["-p", "no:xdist"] if n == "0" else ["-n", n]


def bench_sweep(sel: list[str], jobs: list[int], shards: bool) -> None:
    """For each job count J: pytest-xdist ``-n J`` (J = 1: serial, no
    xdist) and ``python -m cts sweep -j J`` (J shard processes + merge),
    each beside its floor: the same ids as no-op tests under ``-n J``, or
    split into the same J shards run as J concurrent processes."""
    ids = collect(sel)
    tmp = Path(tempfile.mkdtemp(prefix="cts-bench-"))
    try:
        write_floor(ids, tmp / "floor")
        subprocess.run(
            [*PYTEST, "--co", "."], cwd=tmp / "floor", capture_output=True
        )  # untimed: compiled once
        print(
            f"{len(ids)} cases ({' '.join(sel)}), {os.cpu_count()} CPUs; floor = the same ids as no-op tests\n"
        )
        ceiling = {j: cpu_ceiling(j) for j in jobs}
        print(
            "machine ceiling (J busy processes of pure Python at once vs one): "
            + ", ".join(f"J={j}: {c:.2f}x" for j, c in ceiling.items())
            + "\n"
        )
        top = max(jobs)
        if top > 1 and sel == ["cases"]:
            fam = ["cases/test_coop_matrix.py"]
            print(
                f"suite ceiling ({top} copies of `pytest {fam[0]}` at once vs one): "
                f"{suite_ceiling(top, fam):.2f}x\n"
            )
        # untimed: fills the compiled-module cache every run uses (same_bytecode_cache) and the kernel caches
        subprocess.run(
            [*PYTEST, *sel, "-p", "no:xdist", "-k", "tf32", "--no-report"], cwd=ROOT, capture_output=True
        )
        if shards:
            prime = [
                sys.executable,
                "-m",
                "cts",
                "sweep",
                "-j",
                "2",
                *sel,
                "-k",
                "tf32",
                f"--report-dir={tmp / 'p'}",
            ]
            subprocess.run(prime, cwd=ROOT, capture_output=True)
        print(
            "| run | suite | floor | ratio | speed-up vs serial | of the ceiling | harness ms/case | peak RSS | result |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        serial = None
        serial_fams: dict = {}
        for j in jobs:
            report = tmp / f"report-x{j}"
            args = workers_args("0" if j == 1 else str(j))
            dt, rss, text = measure(
                [*PYTEST, *sel, *args, f"--report-dir={report}", "--run-id", f"x{j}"], ROOT
            )
            fdt, _, _ = measure([*PYTEST, *args, "."], tmp / "floor")
            fams = journal_durations(report)
            serial = serial or dt
            serial_fams = serial_fams or fams
            inside = sum(t for _, t in fams.values()) / j
            label = "serial (-p no:xdist)" if j == 1 else f"pytest -n {j}"
            print(
                f"| {label} | {dt:.1f} s | {fdt:.1f} s | {dt / fdt:.2f}x | {serial / dt:.2f}x | "
                f"{serial / dt / ceiling[j]:.0%} | {(dt - fdt - inside) / len(ids) * 1e3:.2f} | {rss} MB | "
                f"{summary(text)} |"
            )
            if shards and j > 1:
                report = tmp / f"report-s{j}"
                cmd = [sys.executable, "-m", "cts", "sweep", "-j", str(j), *sel, f"--report-dir={report}"]
                dt, rss, text = measure(cmd, ROOT)
                fdt = floor_shards(sel, j, tmp / f"floor-s{j}")
                print(
                    f"| cts sweep -j {j} | {dt:.1f} s | {fdt:.1f} s | {dt / fdt:.2f}x | {serial / dt:.2f}x | "
                    f"{serial / dt / ceiling[j]:.0%} | | {rss} MB | {summary(text)} |"
                )
                # again into the same folder with --balance: split by the recorded seconds of the run
                # just made (what a CI that sweeps into one report folder many times a day gets)
                dt, rss, text = measure([*cmd, "--balance"], ROOT)
                print(
                    f"| cts sweep -j {j} --balance | {dt:.1f} s | {fdt:.1f} s | {dt / fdt:.2f}x | "
                    f"{serial / dt:.2f}x | {serial / dt / ceiling[j]:.0%} | | {rss} MB | {summary(text)} |"
                )
        print("\n| family | cases | in case functions (serial) | ms/case | cases/s |")
        print("|---|---|---|---|---|")
        for k, (c, t) in serial_fams.items():
            print(f"| {k} | {c} | {t:.2f} s | {t / c * 1e3:.2f} | {c / t if t else 0:.0f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cpu_ceiling(n: int, repeat: int = 3) -> float:
    """The machine's own limit for ``n`` processes: ``n`` copies of a pure
    Python loop at once against one alone (throughput ratio, best of
    ``repeat``).  A VM whose cores slow down when all of them are busy
    cannot give any sweep more than this."""
    loop = [sys.executable, "-c", "sum(range(15_000_000))"]

    def wall(k: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen(loop) for _ in range(k)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    one = min(wall(1) for _ in range(repeat))
    return n * one / min(wall(n) for _ in range(repeat)) if n > 1 else 1.0


def suite_ceiling(n: int, sel: list[str], repeat: int = 2) -> float:
    """The same for the suite's own work: ``n`` concurrent serial pytest
    runs of ``sel`` (one family) against one alone.  Its memory and cache
    traffic are not a pure Python loop's, so a VM can scale it better or
    worse than ``cpu_ceiling`` says."""
    cmd = [*PYTEST, *sel, "-p", "no:xdist", "--no-report"]

    def wall(k: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL) for _ in range(k)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    one = min(wall(1) for _ in range(repeat))
    return n * one / min(wall(n) for _ in range(repeat)) if n > 1 else 1.0


def floor_shards(sel: list[str], n: int, into: Path) -> float:
    """Wall time of ``n`` concurrent pytest processes, each running the no-op
    twin of one shard: the ids ``--shard k/n`` collects (kernel groups
    placed as one, as the sweep does), compiled once before the clock starts."""
    for k in range(1, n + 1):
        write_floor(collect([*sel, "--shard", f"{k}/{n}"]), into / str(k))
        subprocess.run([*PYTEST, "--co", "."], cwd=into / str(k), capture_output=True)
    env = dict(os.environ)
    if env.get("CTS_SWEEP_PLUGINS") != "all":  # the plugins of a sweep's shards (cts.launch._shard_plugins)
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        env["PYTEST_PLUGINS"] = ",".join(p for p in (env.get("PYTEST_PLUGINS"), "pytest_timeout") if p)
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*PYTEST, "-p", "no:xdist", "."], cwd=into / str(k), stdout=subprocess.DEVNULL, env=env
        )
        for k in range(1, n + 1)
    ]
    for p in procs:
        p.wait()
    return time.perf_counter() - t0


HARNESS_CASES = """\
import pytest
from dataclasses import dataclass, field
from cts.judge import Verdict


@dataclass(frozen=True)
class Case:
    n: int
    family: str = "intel_tf32_convert"  # a family the emulator has: the case is not skipped
    tier: str = "exact"
    spec_row: str = "a no-op case"
    axes: dict = field(default_factory=dict, hash=False)

    @property
    def id(self):
        return f"case{self.n}"


class Result:
    def __init__(self):
        self.verdict = Verdict(True, 1, 0, "exact")


def runner(case, backend, seed):
    return Result()


@pytest.mark.cts_cases.with_args(lambda tiers: [Case(n) for n in range(%d)])
def test_harness(case, cts):
    cts.check(case, runner)
"""


def bench_harness(count: int) -> None:
    """The harness's own cost per case: ``count`` no-op cases through the
    real plugin (journal, record, report) vs ``count`` no-op pytest tests."""
    tmp = Path(tempfile.mkdtemp(prefix="cts-bench-harness-"))
    try:
        (tmp / "suite" / "cases").mkdir(parents=True)
        (tmp / "suite" / "conftest.py").write_text('pytest_plugins = ["cts.plugin"]\n')
        (tmp / "suite" / "pytest.ini").write_text("[pytest]\n")
        (tmp / "suite" / "cases" / "test_harness.py").write_text(HARNESS_CASES % count)
        write_floor([f"cases/test_harness.py::test_harness[case{n}]" for n in range(count)], tmp / "floor")
        env_py = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
        os.environ["PYTHONPATH"] = env_py
        for n in ("0", "2"):
            dt, _, text = measure([*PYTEST, *workers_args(n), f"--report-dir={tmp / 'r'}"], tmp / "suite")
            cpu = LAST_CPU[0]
            fdt, _, _ = measure([*PYTEST, *workers_args(n), "."], tmp / "floor")
            fcpu = LAST_CPU[0]
            print(
                f"harness, {'serial' if n == '0' else '-n ' + n}: {count} no-op cases {dt:.2f} s wall "
                f"({cpu:.2f} s CPU), floor {fdt:.2f} s ({fcpu:.2f} s CPU): {(dt - fdt) / count * 1e3:.3f} ms wall, "
                f"{(cpu - fcpu) / count * 1e3:.3f} ms CPU a case over pytest's own [{summary(text)}]"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_slice(sel: list[str], count: int) -> None:
    """Peak RSS of the full serial sweep vs a slice of ``count`` cases spread
    evenly over it (every family in it: the figure is growth with the number
    of cases, not with the mix of families)."""
    ids = collect(sel)
    tmp = Path(tempfile.mkdtemp(prefix="cts-bench-"))
    try:
        step = max(1, len(ids) // count)
        part = tmp / "slice.txt"
        part.write_text("\n".join(ids[::step][:count]) + "\n")
        res = []
        for label, args in (
            (f"{count} cases (every {step}th)", ["@" + str(part)]),
            (f"all {len(ids)} cases", sel),
        ):
            dt, rss, text = measure([*PYTEST, *args, "-p", "no:xdist", f"--report-dir={tmp / 'r'}"], ROOT)
            res.append(rss)
            print(f"{label:28s} {dt:6.1f} s  peak RSS {rss:5d} MB  [{summary(text)}]")
        print(f"full / slice peak RSS: {res[1] / res[0]:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_opencl(workers: tuple[str, ...] = ("0", "2")) -> None:
    """OpenCL sweep of the Intel families on the Intel CPU runtime with the
    shipped prelude: cold (empty program cache) and warm, 1 and 2 workers,
    build vs run seconds summed over workers (from <report-dir>/opencl-stats)."""
    cache = Path(tempfile.mkdtemp(prefix="cts-bench-cl-"))
    report = Path(tempfile.mkdtemp(prefix="cts-bench-report-"))
    base = ["--backend", "opencl", "--opencl-prelude", "builtin", "--opencl-cache-dir", str(cache)]
    try:
        for n in workers:
            for state in ("cold", "warm"):
                if state == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                run_id = f"cl{n}{state}"
                dt, rss, text = measure(
                    [
                        *PYTEST,
                        "cases/test_intel_mma.py",
                        *base,
                        *workers_args(n),
                        f"--report-dir={report}",
                        "--run-id",
                        run_id,
                    ],
                    ROOT,
                )
                tot: dict[str, float] = {}
                for f in (report / "opencl-stats" / run_id).glob("*.json"):
                    for k, v in json.loads(f.read_text()).items():
                        tot[k] = tot.get(k, 0) + v
                print(
                    f"opencl+prelude, {state}, -n {n}: {dt:6.2f} s, peak {rss} MB [{summary(text)}]; build "
                    f"{tot.get('build_seconds', 0):.1f} s ({int(tot.get('compiled', 0))} compiled, "
                    f"{int(tot.get('disk_hits', 0))} from disk), run {tot.get('run_seconds', 0):.2f} s "
                    f"({int(tot.get('launches', 0))} launches), summed over workers"
                )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(report, ignore_errors=True)


def same_bytecode_cache() -> str:
    """Where PYTHONDONTWRITEBYTECODE is set (as on the GPU machine), every
    plain pytest run compiles numpy, pytest and the suite from source (0.7-1 s
    a run measured there), while ``cts sweep`` keeps its compiled modules in a
    cache: a serial baseline that compiles and a sweep that does not would
    credit the sweep with the compile time.  So every run of the benchmark
    (serial, xdist, the floors, the sweeps) uses the launcher's cache folder;
    the first, untimed run fills it.  The folder, or '' where caching is on."""
    if not (os.environ.get("PYTHONDONTWRITEBYTECODE") or sys.dont_write_bytecode):
        return ""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.environ.get("PYTHONPYCACHEPREFIX") or os.path.join(base, "cts", "pycache")
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default="1,2", help="comma-separated job counts (1 = serial; default 1,2)")
    ap.add_argument("--no-shards", action="store_true", help="only pytest-xdist, not `cts sweep -j N`")
    ap.add_argument(
        "--slice", type=int, default=0, help="memory: peak RSS of N cases spread over the sweep vs all"
    )
    ap.add_argument(
        "--harness", type=int, default=0, help="the harness's own cost: N no-op cases vs the floor"
    )
    ap.add_argument("--opencl", action="store_true", help="OpenCL: Intel families on Intel's CPU runtime")
    ap.add_argument("pytest_args", nargs="*", help="pytest selection and options (after --); default: cases")
    a = ap.parse_args()
    sel = a.pytest_args or ["cases"]
    cache = same_bytecode_cache()
    if cache:
        print(
            f"PYTHONDONTWRITEBYTECODE is set: every run keeps its compiled modules in {cache}, as `cts sweep` does\n"
        )
    if a.opencl:
        bench_opencl()
    elif a.harness:
        bench_harness(a.harness)
    elif a.slice:
        bench_slice(sel, a.slice)
    else:
        jobs = [int(w) for w in a.jobs.split(",") if w.strip()]
        bench_sweep(sel, sorted(set([1, *jobs])), not a.no_shards)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
