"""Scale-out: shards that collect only their own cases,
``python -m cts sweep -j N`` (N shard processes, one merged report), and the
short journal lines of schema 3 (header defaults + rerun tail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cts.report.journal import Journal, file_header, with_defaults
from cts.report.record import read_record
from tests.test_sweep import ROOT, results, run_cts

INTEL = "cases/test_intel_mma.py"
SMALL = "sg8 and (i8_i8 or u8_u8) and not wg"  # 56 cases: base + split (wg2); i8_as_u8 fails the i8 ones


def sweep(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cts", "sweep", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _ids(p: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in p.stdout.splitlines() if "::" in ln]


@pytest.mark.e2e
def test_shards_collect_only_their_own_cases_and_together_every_case_once():
    everything = _ids(run_cts("cases", "--co", "-q"))
    parts = [_ids(run_cts("cases", "--co", "-q", "--shard", f"{k}/3")) for k in (1, 2, 3)]
    assert len(everything) > 7000
    assert sorted(everything) == sorted(i for p in parts for i in p)  # disjoint and complete
    assert all(len(p) < len(everything) / 2 for p in parts)  # each collects about a third


@pytest.mark.e2e
def test_a_stale_expectation_is_judged_against_every_shard(tmp_path):
    """A shard does not collect the other shards' cases; an entry matching
    only those is not stale, an entry matching no case anywhere is."""
    exp = tmp_path / "exp.txt"
    exp.write_text(
        "intel_mma[sg8-i8_i8-k32-M1-acc_i32-exact]  fail  matches a case in one shard only\n"
        "intel_mma[sg99-*]  fail  matches nothing\n",
        encoding="utf-8",
    )
    for k in (1, 2):
        p = run_cts(INTEL, "-q", "-k", SMALL, "--shard", f"{k}/2", "--expectations", str(exp), "--no-report")
        assert "'intel_mma[sg99-*]'" in p.stdout and "matches no case" in p.stdout, p.stdout[-1500:]
        assert "'intel_mma[sg8-i8_i8-k32-M1-acc_i32-exact]'" not in p.stdout, p.stdout[-1500:]


@pytest.mark.e2e
def test_sweep_launcher_merges_its_shards_into_one_report_like_a_plain_run(tmp_path):
    plain = run_cts(
        INTEL, "-q", "-k", SMALL, "--emulator-fault", "i8_as_u8", "--report-dir", str(tmp_path / "p")
    )
    assert plain.returncode == 1
    p = sweep(
        "-j", "3", INTEL, "-k", SMALL, "--emulator-fault", "i8_as_u8", "--report-dir", str(tmp_path / "s")
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]  # the fault fails cases: not clean
    assert "Traceback" not in p.stdout + p.stderr
    failed = [ln for ln in p.stdout.splitlines() if ln.startswith("FAILED cases/test_intel_mma.py::")]
    totals = next(i for i, ln in enumerate(p.stdout.splitlines()) if " failed in " in ln)
    assert failed and p.stdout.splitlines().index(failed[0]) < totals  # the short summary, then totals
    assert results(tmp_path / "s" / "results.csv") == results(tmp_path / "p" / "results.csv")
    assert "(3 shards)" in p.stdout and p.stdout.count("shard ") >= 3
    logs = sorted((tmp_path / "s" / "logs").rglob("*.log"))
    assert [f.name for f in logs] == ["shard1of3.log", "shard2of3.log", "shard3of3.log"]
    rec = read_record([tmp_path / "s" / "journal"])
    assert len(rec.runs) == 1 and next(iter(rec.runs.values())).complete  # one run, every shard ended
    clean = sweep(
        "-j", "2", "--spawn", INTEL, "-k", SMALL, "--report-dir", str(tmp_path / "c")
    )  # new interpreters
    assert clean.returncode == 0 and "FAILED " not in clean.stdout, clean.stdout[-2000:]
    assert set(results(tmp_path / "c" / "results.csv").values()) == {"passed"}
    assert "(imports " in p.stdout.splitlines()[0]  # forked right after the imports (the default)
    warm = sweep(
        "-j", "3", "--warm-up", INTEL, "-k", SMALL, "--emulator-fault", "i8_as_u8",
        "--report-dir", str(tmp_path / "w"),
    )  # fmt: skip
    assert warm.returncode == 1 and "(warm-up " in warm.stdout.splitlines()[0], warm.stdout[-2000:]
    assert results(tmp_path / "w" / "results.csv") == results(tmp_path / "p" / "results.csv")


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args, message",
    [
        (["-n", "2"], "the launcher shards the run itself"),
        (["--shard", "1/2"], "the launcher shards the run itself"),
        (["--no-report"], "a sweep writes its journal"),
        (["-j", "0"], "1..1024 shard processes"),
        (["--run-id", "a b"], "--run-id 'a b'"),
        (["--report-dir", "/proc/no/such"], "--report-dir: cannot write in /proc/no/such"),
    ],
)
def test_sweep_launcher_rejects_bad_options_in_one_line(args, message):
    p = sweep(INTEL, *args)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_a_sweep_without_a_test_path_writes_into_an_existing_report_folder_outside_the_project(tmp_path):
    """pytest looks for its rootdir among the arguments that name existing
    paths before it knows the suite's options: ``--report-dir DIR`` with no
    test path, DIR an existing folder outside the project, made every shard
    a usage error (rootdir DIR: no conftest, no plugin).  The launcher hands
    the suite's options to the shards as ``--name=value``."""
    out = tmp_path / "out"
    out.mkdir()
    p = sweep("-j", "2", "--report-dir", str(out), "-k", "intel_mma and sg8 and i8_i8 and not wg")
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    assert "28 passed" in p.stdout and (out / "report.md").is_file(), p.stdout[-1500:]


def test_the_launcher_joins_exactly_the_suites_options_that_take_a_value():
    from cts.launch import _joined, _suite_value_options

    names = _suite_value_options()
    assert {"--report-dir", "--run-id", "--resume", "--seed", "--backend", "--emulator-fault"} <= names
    assert not names & {"--no-report", "--journal-only", "--assume-extension"}  # flags; a value optional
    args = ["cases", "--report-dir", "/x", "-k", "a and b", "--emulator-fault", "f", "--emulator-fault=g"]
    assert _joined(args, names) == ["cases", "--report-dir=/x", "-k", "a and b", "--emulator-fault=f",
                                    "--emulator-fault=g"]  # fmt: skip
    # an option without its value stays as it was given (pytest then says so); nothing after "--"
    assert _joined(["--assume-extension", "--run-id", "R"], names) == ["--assume-extension", "--run-id=R"]
    assert _joined(["--report-dir", "--seed", "3"], names) == ["--report-dir", "--seed=3"]
    assert _joined(["--", "--report-dir", "/x"], names) == ["--", "--report-dir", "/x"]
    assert _joined(["--report-dir"], names) == ["--report-dir"]


@pytest.mark.e2e
def test_sweep_launcher_reports_a_pytest_usage_error_once(tmp_path):
    p = sweep("-j", "2", INTEL, "--backend", "nosuch", "--report-dir", str(tmp_path / "r"))
    assert p.returncode == 4 and "nosuch" in p.stderr and "Traceback" not in p.stdout + p.stderr, p.stderr


def test_schema3_lines_take_their_header_defaults_and_keep_their_own_values(tmp_path):
    hdr = file_header(
        "r1",
        {"backend": "emulator"},
        "gw0",
        {"backend": "emulator", "device": "dev A", "seed": 7},
        " --seed 7",
    )
    j = Journal(tmp_path / "j" / "gw0-1.jsonl", hdr)
    j.append(
        {"nodeid": "cases/t.py::t[a b]", "family": "f", "case_id": "a", "outcome": "passed", "time": 1.0}
    )
    j.append({"nodeid": "cases/t.py::t[c]", "family": "f", "case_id": "c", "outcome": "failed", "device": "dev B",
              "rerun": "pytest own", "time": 2.0})  # fmt: skip
    j.close()
    rows = {r["case_id"]: r for r in read_record([tmp_path / "j"]).rows}
    assert rows["a"]["device"] == "dev A" and rows["a"]["seed"] == 7 and rows["a"]["backend"] == "emulator"
    assert rows["a"]["rerun"] == "pytest 'cases/t.py::t[a b]' --seed 7"
    assert rows["c"]["device"] == "dev B" and rows["c"]["rerun"] == "pytest own"
    assert with_defaults({"kind": "note", "text": "x"}, {"defaults": {}}) == {"kind": "note", "text": "x"}


@pytest.mark.parametrize(
    "defaults, message",
    [
        ({"seed": True}, "journal header defaults: field 'seed'"),
        ({"outcome": "passed"}, "'defaults' may hold only"),
    ],
)
def test_bad_header_defaults_are_journal_problems(tmp_path, defaults, message):
    f = tmp_path / "j" / "main-1.jsonl"
    f.parent.mkdir()
    hdr = file_header("r1", {"backend": "emulator"}, "main") | {"defaults": defaults}
    f.write_text(json.dumps(hdr) + "\n")
    rec = read_record([f.parent])
    assert any(message in p for p in rec.problems), rec.problems


@pytest.mark.e2e
def test_a_sweeps_lines_leave_the_shared_fields_to_the_header(tmp_path):
    p = run_cts(INTEL, "-q", "-k", "sg8 and i8_i8 and exact", "--report-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout[-1500:]
    lines = [
        json.loads(ln)
        for f in (tmp_path / "r" / "journal").rglob("*.jsonl")
        for ln in f.read_text().splitlines()
    ]
    head = lines[0]
    assert head["kind"] == "journal" and head["defaults"]["device"] == "numpy emulator"
    cases = [r for r in lines if r.get("kind") in (None, "start")]
    assert cases and all("device" not in r and "rerun" not in r for r in cases)
    rows = read_record([tmp_path / "r" / "journal"]).rows
    assert all(r["device"] == "numpy emulator" and r["rerun"].startswith("pytest 'cases/") for r in rows)


def _workflow_command(step: str) -> str:
    """The ``run:`` line of the named step of .github/workflows/sweep.yml."""
    lines = (ROOT / ".github" / "workflows" / "sweep.yml").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip() == f"- name: {step}")
    return next(ln.split("run:", 1)[1].strip() for ln in lines[at + 1 :] if ln.strip().startswith("run:"))


@pytest.mark.e2e
def test_the_ci_workflow_shards_and_merge_give_the_single_process_report(tmp_path):
    """The example workflow's commands (4 shard jobs, each journal in its own
    folder as the artifacts are downloaded, one merge job) on a slice of
    every family: the merged report equals the single-process one, case for
    case; without one shard's journal the merge fails and names it."""
    import shlex
    import shutil

    sel = ["-k", "sg8 and i8_i8 or vk-muladd and f16 or rotate and sg16 and int and exact"]
    single = run_cts("cases", "-q", *sel, "--report-dir", str(tmp_path / "single"))
    assert single.returncode == 0, single.stdout[-1500:]
    shard_cmd = shlex.split(_workflow_command("sweep shard"))
    merge_cmd = shlex.split(_workflow_command("merge"))
    assert shard_cmd[:3] == ["python", "-m", "pytest"] and merge_cmd[:4] == ["python", "-m", "cts", "report"]
    env = {"SHARDS": "4", "RUN_ID": "gh-1-1"}
    for k in range(1, 5):
        job = tmp_path / f"job{k}"
        job.mkdir()
        args = [
            a.replace("$SHARD/$SHARDS", f"{k}/4").replace("$RUN_ID", env["RUN_ID"]) for a in shard_cmd[3:]
        ]
        args = [str(job / "out") if a == "out" else a for a in args]
        p = run_cts(*args, *sel)
        assert p.returncode in (0, 5), p.stdout[-1500:] + p.stderr[-1500:]
        shutil.copytree(job / "out" / "journal", tmp_path / "journals" / f"journal-{k}")  # download-artifact
    merge = [str(tmp_path / a) if a in ("journals", "report") else a for a in merge_cmd[4:]]
    p = subprocess.run(
        [sys.executable, "-m", "cts", "report", *merge], cwd=ROOT, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    assert results(tmp_path / "report" / "results.csv") == results(tmp_path / "single" / "results.csv")
    shutil.rmtree(tmp_path / "journals" / "journal-3")  # a shard job that never uploaded
    p = subprocess.run(
        [sys.executable, "-m", "cts", "report", *merge], cwd=ROOT, capture_output=True, text=True
    )
    assert p.returncode == 1 and "shard(s) 3/4" in p.stdout, p.stdout[-1500:]


@pytest.mark.e2e
def test_sweep_launcher_merges_junit_of_its_shards(tmp_path):
    import xml.etree.ElementTree as ET

    junit = tmp_path / "junit.xml"
    p = sweep("-j", "2", INTEL, "-k", SMALL, "--report-dir", str(tmp_path / "r"), "--junitxml", str(junit))
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    names = [c.attrib["name"] for c in ET.parse(junit).getroot().iter("testcase")]
    assert len(names) == len(set(names)) == len(results(tmp_path / "r" / "results.csv")) == 56


def test_a_journal_read_ahead_is_used_only_while_the_file_is_unchanged(tmp_path):
    """The launcher reads a finished shard's journal while the others run
    (``prime``); a file that changed after (resumed into, copied over) is
    read again, so the merge never misses a line."""
    from cts.report.record import prime

    f = tmp_path / "j" / "main-1.jsonl"
    j = Journal(f, file_header("r1", {"backend": "emulator"}, "main"))
    j.append({"nodeid": "cases/t.py::t[a]", "family": "f", "case_id": "a", "outcome": "passed", "time": 1.0})
    j.close()
    assert prime([f]) == 1
    assert [r["case_id"] for r in read_record([tmp_path / "j"]).rows] == ["a"]
    assert prime([f]) == 1
    with open(f, "a", encoding="utf-8") as fh:  # the file grows after it was read ahead
        fh.write(json.dumps({"nodeid": "cases/t.py::t[b]", "family": "f", "case_id": "b",
                             "outcome": "failed", "time": 2.0}) + "\n")  # fmt: skip
    rows = {r["case_id"]: r["outcome"] for r in read_record([tmp_path / "j"]).rows}
    assert rows == {"a": "passed", "b": "failed"}


ASIDE = """
import os, sys
import numpy  # the launcher imports it (warm-up) with OPENBLAS_NUM_THREADS=1 set before
from cts.report.aside import aside, one_thread
assert one_thread()
assert aside(lambda n: "é" * n, 70000)() == "é" * 70000  # more than a pipe holds at once
me = os.getpid()
assert aside(lambda: str(os.getpid()))() != str(me)  # built by a child
assert aside(lambda: "a\\udcffb")() == "a\\udcffb"  # a lone surrogate (journal text may hold one)
big = aside(lambda: "x" * 1_000_000)  # more than a pipe holds: the child blocks writing it
big.discard()  # a value no longer wanted: the child is ended and reaped
try:
    os.waitpid(-1, os.WNOHANG)
    print("a child is left")
except ChildProcessError:
    pass
def broken():
    raise KeyError("in the child and again here")
get = aside(broken)
try:
    get()
except KeyError as e:
    print("raised here:", e, os.getpid() == me)
"""


_FORKS_ONE_THREADED = """
import os, sys
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.pop(var, None)  # as a user's shell leaves them
import cts.launch as L
from cts.report.aside import one_thread
seen, fork = [], L._Forked.__init__
def watched(self, *a, **k):
    seen.append(one_thread())
    fork(self, *a, **k)
L._Forked.__init__ = watched
rc = L.main(sys.argv[1:])
print("one thread at every fork:", seen and all(seen), seen, "rc", rc)
"""


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status (Linux)")
@pytest.mark.parametrize("extra", [[], ["--balance"]], ids=["plain", "balance"])
def test_the_launcher_forks_its_shards_from_a_single_thread(tmp_path, extra):
    """numpy's BLAS starts its threads when numpy is imported unless told
    one: the launcher sets that before its first import of numpy, so it
    forks from one thread (a lock held by another thread would stay held in
    every shard) and builds the reports in children (cts/report/aside.py).
    ``--balance`` too: its module imports numpy (it once did so first)."""
    p = subprocess.run(
        [sys.executable, "-c", _FORKS_ONE_THREADED, "-j", "2", *extra, INTEL, "-k", SMALL,
         "--report-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "one thread at every fork: True" in p.stdout, p.stdout[-1500:] + p.stderr[-1500:]


@pytest.mark.e2e
def test_work_aside_is_done_by_a_child_in_a_one_threaded_launcher_and_a_failing_child_raises_here():
    env = {**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    p = subprocess.run(
        [sys.executable, "-c", ASIDE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "raised here: 'in the child and again here' True"


@pytest.mark.e2e
def test_the_sweep_keeps_compiled_modules_outside_the_tree_when_bytecode_writing_is_off(tmp_path):
    env = {
        **__import__("os").environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    p = subprocess.run(
        [sys.executable, "-m", "cts", "sweep", "-j", "1", INTEL, "-k", "sg8 and i8_i8 and k32 and M1 and not wg",
         "--report-dir", str(tmp_path / "r")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    cache = tmp_path / "xdg" / "cts" / "pycache"
    assert f"compiled modules kept in {cache}" in p.stdout
    for mod in ("cts/plugin/__init__", "cts/plugin/shard", "reference/data"):  # all imported by the launcher
        assert any(cache.rglob(f"{mod}.*.pyc")), f"{mod} was imported before the cache was in place"


_PREIMPORT = """
import sys
import cts.launch as launch
launch._import_shard_modules()
for name in ("_pytest.junitxml", "cts.backends.emulator", "cts.runs.joint", "cts.families.coop", "reference.joint"):
    assert name in sys.modules, name
backends = {m.rsplit(".", 1)[-1] for m in sys.modules if m.startswith("cts.backends.")}
device = sorted(b for b in backends if b not in ("base", "emulator") and not b.startswith("emu_"))
device += sorted(m for m in sys.modules if m in ("vulkan", "cuda", "torch") or m.startswith(("vulkan.", "cuda.")))
assert not device, device  # a driver loaded before the fork would be shared by every shard
cases = [m for m in sys.modules if m.startswith("test_") or m == "conftest"]
assert not cases, cases  # pytest imports them itself, with their assertions rewritten
print("ok")
"""


@pytest.mark.e2e
def test_the_launcher_imports_what_every_shard_needs_before_the_fork_and_no_device_module():
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # as the launcher sets it for its shards
    out = subprocess.run(
        [sys.executable, "-c", _PREIMPORT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


@pytest.mark.e2e
def test_the_shards_load_the_suites_own_plugins_and_those_named_not_every_installed_one(tmp_path):
    # an installed pytest plugin (an entry point) that marks each process it is loaded in
    site = tmp_path / "site"
    dist = site / "fakeplug-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nfakeplug = fakeplug_mod\n")
    (site / "fakeplug_mod.py").write_text(
        "import os\n\n\ndef pytest_configure(config):\n    open(os.environ['FAKEPLUG_MARK'], 'a').write('x')\n"
    )
    mark = tmp_path / "mark"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["FAKEPLUG_MARK"] = str(mark)

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", *args]
        return subprocess.run(
            cmd, cwd=ROOT, env={**env, **extra}, capture_output=True, text=True, timeout=300
        )

    def sweep_into(folder: str, *args: str, **extra: str) -> subprocess.CompletedProcess:
        """A 2-shard sweep of the small Intel selection, its report in tmp_path/folder."""
        small = ("cts", "sweep", "-j", "2", INTEL, "-k", SMALL)
        return run(*small, *args, "--report-dir", str(tmp_path / folder), **extra)

    def loads() -> int:
        """Processes the plugin was loaded in since the last call."""
        n = len(mark.read_text()) if mark.exists() else 0
        mark.unlink(missing_ok=True)
        return n

    plain = run(
        "pytest", INTEL, "-q", "-k", SMALL, "--co", "--no-report"
    )  # plain pytest loads it: a real plugin
    assert plain.returncode == 0 and loads() == 1, plain.stdout[-1000:]
    p = sweep_into("a")
    assert p.returncode == 0 and loads() == 0, p.stdout[-2000:] + p.stderr[-2000:]
    logs = "".join(f.read_text() for f in (tmp_path / "a" / "logs").rglob("*.log"))
    assert "Unknown config option" not in logs and "2 shard processes" in p.stdout  # pytest-timeout loaded
    named = sweep_into("b", "-p", "fakeplug_mod")
    assert named.returncode == 0 and loads() == 2, named.stdout[-2000:]  # named with -p: in both shards
    every = sweep_into("c", CTS_SWEEP_PLUGINS="all")
    assert every.returncode == 0 and loads() == 2, every.stdout[-2000:]
    # pytest-timeout comes through the environment: a shard's recorded command (the report's resume
    # command) runs as it is in a plain shell, and naming the plugin yourself is no conflict
    rec = read_record([tmp_path / "a" / "journal"])
    assert rec.sessions and not any("timeout" in str(h.get("command")) for h in rec.sessions)
    own = sweep_into("d", "-p", "timeout", "--timeout", "60")
    assert own.returncode == 0 and loads() == 0, own.stdout[-2000:] + own.stderr[-2000:]
    off = sweep_into("e", "--timeout", "60", PYTEST_ADDOPTS="-p no:timeout")
    assert off.returncode == 4 and "unrecognized arguments: --timeout" in off.stderr, off.stderr[-2000:]
    assert "CTS_SWEEP_PLUGINS=all" in off.stderr  # the one-line refusal names the way out
