"""The record of a sweep under attack: runs that never erase,
hide or pollute each other's verdicts; kill -9 at random points then
resume; file-size limits during a sweep and during `cts report`; two runs
into one folder at once; fuzzed journals; inputs checked before a device
sees them.  Each scenario asserts: no traceback, no lost verdict, no false
pass, and the exit status (README "The record of a sweep")."""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cts.report.exit_status import record_status
from cts.report.journal import SCHEMA, Journal, file_header
from cts.report.markdown import markdown_report
from cts.report.record import read_record
from cts.report.writer import write_reports
from tests.test_sweep import ROOT, cts_report, results, run_cts

INTEL = "cases/test_intel_mma.py"
ROTATE = "cases/test_subgroup_rotate.py"
SMALL = "sg8 and i8_i8 and not wg"  # 56 intel_mma + split cases (wg2)
Q = ["-q", "-p", "no:randomly"]


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}


def _no_traceback(p: subprocess.CompletedProcess) -> None:
    text = p.stdout + p.stderr
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]


def _journal_lines(d: Path) -> list[str]:
    return [ln for f in sorted((d / "journal").rglob("*.jsonl")) for ln in f.read_text().splitlines()]


# ------------------------------------------------ runs never touch each other
@pytest.mark.e2e
def test_listing_or_selecting_nothing_writes_nothing_and_the_sweep_stays_rebuildable(tmp_path):
    d = tmp_path / "r"
    p = run_cts(ROTATE, *Q, "-n", "2", "-k", "sg16", "--report-dir", str(d))
    assert p.returncode == 0, p.stdout[-2000:]
    n = len(results(d / "results.csv"))
    before = sorted((f.name, f.stat().st_size) for f in (d / "journal").rglob("*"))
    for extra in (["--co"], ["-k", "nomatch"], ["--help"]):
        p = run_cts("cases", *Q, *extra, "--report-dir", str(d))
        assert p.returncode in (0, 5), p.stdout[-1000:] + p.stderr[-1000:]
        assert sorted((f.name, f.stat().st_size) for f in (d / "journal").rglob("*")) == before, extra
    p = cts_report(str(d), "--out", str(tmp_path / "m"))
    assert p.returncode == 0 and f"passed {n}, total {n}" in p.stdout, p.stdout + p.stderr


@pytest.mark.e2e
def test_a_second_run_keeps_the_first_runs_journal_and_its_report_names_it(tmp_path):
    d = tmp_path / "r"
    assert run_cts(INTEL, *Q, "-k", "sg8 and M1", "--report-dir", str(d)).returncode == 0
    assert run_cts(INTEL, *Q, "-k", "sg16 and M1", "--report-dir", str(d)).returncode == 0
    # oldest first by when the run last wrote (run ids order by the second only: two quick runs may share one)
    runs = [p.name for p in sorted((d / "journal").iterdir(), key=lambda p: p.stat().st_mtime_ns)]
    assert len(runs) == 2
    md = (d / "report.md").read_text()
    assert "sg16" in md and "sg8-" not in md.split("## Coverage")[1]  # the report covers the newest run
    assert f"also holds 1 other run(s) not in this report ({runs[0]})" in md.replace("\\", "")
    p = cts_report(str(d), "--out", str(tmp_path / "m"))  # both runs, one configuration: no conflict
    res = results(tmp_path / "m" / "results.csv")
    assert p.returncode == 0 and any("sg8-" in n for n in res) and any("sg16-" in n for n in res)


@pytest.mark.e2e
def test_two_concurrent_runs_into_one_folder_both_keep_complete_records(tmp_path):
    d = tmp_path / "r"
    cmd = [sys.executable, "-m", "pytest", INTEL, *Q, "-p", "no:cacheprovider", "--report-dir", str(d)]
    procs = [
        subprocess.Popen(
            [*cmd, "-k", k], cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for k in ("sg8", "sg16")
    ]
    for p in procs:
        p.communicate(timeout=300)
        assert p.returncode == 0
    rec = read_record([d])
    assert len(rec.runs) == 2 and all(r.complete for r in rec.runs.values())
    assert all(r.selected and r.results == r.selected for r in rec.runs.values())  # every case recorded
    assert {r["outcome"] for r in rec.rows} == {"passed"}
    assert len(rec.rows) == sum(r.selected for r in rec.runs.values())


# ------------------------------------------------------- merges hide nothing
@pytest.mark.e2e
def test_a_faulty_run_then_a_clean_one_merge_with_every_failure_kept(tmp_path):
    d = tmp_path / "r"
    p = run_cts(INTEL, *Q, "-n", "2", "--report-dir", str(d), "--emulator-fault", "acc_ignored")
    assert p.returncode == 1
    faulty = results(d / "results.csv")
    n_failed = sum(o == "failed" for o in faulty.values())
    assert n_failed == 630, n_failed  # 396 intel_mma + 234 split (wg2, wg4, wg8); the 18 tf32 pass
    p = run_cts(INTEL, *Q, "-n", "2", "--report-dir", str(d), "--shard", "1/1")
    assert p.returncode == 0  # this run's own report: its own verdicts only
    assert set(results(d / "results.csv").values()) == {"passed"}
    p = cts_report(str(d), "--out", str(tmp_path / "m"))
    _no_traceback(p)
    assert p.returncode == 1, p.stdout
    assert "failed 630" in p.stdout and "passed 666" in p.stdout and "2 configurations kept apart" in p.stdout
    md = (tmp_path / "m" / "report.md").read_text()
    assert "## Runs merged" in md and "faults acc_ignored" in md
    summary = md.split("## Summary per family, backend and device")[1].split("##")[0]
    assert "| config " in summary and "| A " in summary and "| B " in summary


@pytest.mark.e2e
def test_a_fresh_run_never_reports_failures_of_an_older_run_in_its_folder(tmp_path):
    d = tmp_path / "r"
    assert (
        run_cts(INTEL, *Q, "-k", SMALL, "--report-dir", str(d), "--emulator-fault", "acc_ignored").returncode
        == 1
    )
    p = run_cts(INTEL, *Q, "-k", SMALL, "--report-dir", str(d))
    assert p.returncode == 0, p.stdout[-2000:]
    res = results(d / "results.csv")
    assert set(res.values()) == {"passed"}
    assert f"Totals: passed {len(res)}, total {len(res)}" in (d / "report.md").read_text()


@pytest.mark.e2e
def test_the_same_case_judged_differently_on_one_configuration_is_changed_and_not_clean(tmp_path):
    """Two runs of one configuration that disagree (here: a journal of the
    same configuration written by hand with one verdict flipped, as a
    flaky driver would) are shown as changed, with both verdicts counted."""
    d = tmp_path / "r"
    assert run_cts(INTEL, *Q, "-k", "sg8 and i8_i8 and M1", "--report-dir", str(d)).returncode == 0
    rec = read_record([d])
    (run,) = rec.runs.values()
    row = next(r for r in rec.rows if r["outcome"] == "passed")
    j = Journal(d / "journal" / "other-run" / "main-1.jsonl", file_header("other-run", run.ident, "main"))
    j.append({k: v for k, v in row.items() if k not in ("run", "cfg")} | {"outcome": "failed", "time": 1.0})
    j.close()
    p = cts_report(str(d), "--out", str(tmp_path / "m"))
    assert p.returncode == 1 and "1 cases changed verdict between runs" in p.stdout, p.stdout
    md = (tmp_path / "m" / "report.md").read_text()
    assert "## Changed between runs (flaky)" in md and "failed 1, passed 1" in md


# ---------------------------------------------------------- kill -9 + resume
@pytest.mark.e2e
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_a_random_point_then_resume_loses_no_verdict_and_gives_no_false_pass(tmp_path, seed):
    """The reference: one whole run of a wrong device.  Then the same sweep
    killed (SIGKILL of the whole process group, as a CI limit does) at a
    random point, its report rebuilt (it says interrupted, exit 1), and
    resumed: the record equals the reference case by case."""
    ref = tmp_path / "ref"
    common = [INTEL, *Q, "-k", "sg8 or M1", "--emulator-fault", "acc_ignored"]
    assert run_cts(*common, "--report-dir", str(ref)).returncode == 1
    want = results(ref / "results.csv")
    d = tmp_path / "r"
    workers = ["-n", "2"] if seed == 3 else ["-p", "no:xdist"]
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *common,
        *workers,
        "-p",
        "no:cacheprovider",
        "--report-dir",
        str(d),
    ]
    p = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)  # fmt: skip
    rnd = random.Random(seed)
    deadline = time.time() + 60
    target = rnd.randint(5, len(want) - 5)
    while time.time() < deadline and p.poll() is None:
        done = sum('"outcome"' in ln for ln in _journal_lines(d)) if (d / "journal").exists() else 0
        if done >= target:
            break
        time.sleep(0.01)
    time.sleep(rnd.random() * 0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert p.returncode == -signal.SIGKILL, "the run ended before the kill: make the slice larger"
    rep = cts_report(str(d), "--out", str(tmp_path / "killed"))
    _no_traceback(rep)
    assert rep.returncode == 1 and "interrupted: run " in rep.stdout, rep.stdout
    got = results(tmp_path / "killed" / "results.csv")
    assert got and all(want[n] == o or o == "interrupted" for n, o in got.items())  # nothing made up
    assert "killed (no end record)" in (tmp_path / "killed" / "report.md").read_text()
    p2 = run_cts(*common, "--report-dir", str(d), "--resume", str(d / "journal"))
    _no_traceback(p2)
    assert p2.returncode == 1  # the wrong device's failures are the whole sweep's verdict
    assert results(d / "results.csv") == want
    rep = cts_report(str(d), "--out", str(tmp_path / "m"))
    assert results(tmp_path / "m" / "results.csv") == want and "interrupted" not in rep.stdout, rep.stdout
    assert "resumed by" in (tmp_path / "m" / "report.md").read_text()


@pytest.mark.e2e
def test_ctrl_c_report_says_interrupted_with_the_resume_command(tmp_path):
    cmd = [sys.executable, "-m", "pytest", INTEL, *Q, "-p", "no:xdist", "-p", "no:cacheprovider",
           "--report-dir", str(tmp_path), "-k", "sg8 and i8_i8 and exact and not wg", "--emulator-fault", "hostile_hang_M2"]  # fmt: skip
    from tests.test_hostile import interrupt_inside_hang

    rc, out = interrupt_inside_hang(cmd, _env() | {"CTS_HOSTILE": "1"}, tmp_path)
    assert rc == 2, out[-2000:]
    md = (tmp_path / "report.md").read_text()
    assert "interrupted: run " in md and "judged 1 of 7 cases" in md and "--resume " in md, md[:2000]


# ------------------------------------------------------ disk full (ulimit -f)
def _limit(nbytes: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))

    return set_limit


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_file_size_limit_during_a_sweep_stops_it_with_one_line_and_the_journal_intact(tmp_path, workers):
    cmd = [sys.executable, "-m", "pytest", INTEL, *Q, *workers, "-p", "no:cacheprovider", "--report-dir",
           str(tmp_path), "--emulator-fault", "acc_ignored"]  # fmt: skip
    p = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300,
                       preexec_fn=_limit(200_000))  # fmt: skip
    _no_traceback(p)
    assert p.returncode in (1, 3), p.stdout[-2000:]
    assert "cannot write the journal" in p.stdout + p.stderr and "File too large" in p.stdout + p.stderr
    rec = read_record([tmp_path])  # what was written is readable; a cut last line is a listed problem
    assert rec.rows and len(rec.problems) <= 3, rec.problems
    assert all(r["outcome"] in ("passed", "failed", "interrupted") for r in rec.rows)
    bad, why = record_status(rec)
    assert bad  # a stopped sweep is never a clean one
    if workers[0] == "-p":
        assert p.returncode == 3 and "run stops" in p.stdout
    (run,) = rec.runs.values()
    assert not run.complete  # the end line could not be written either: the record says it ended early


@pytest.mark.e2e
def test_a_file_size_limit_during_cts_report_keeps_the_previous_report_set(tmp_path):
    d = tmp_path / "r"
    assert (
        run_cts(INTEL, *Q, "-k", SMALL, "--report-dir", str(d), "--emulator-fault", "acc_ignored").returncode
        == 1
    )
    out = tmp_path / "out"
    assert cts_report(str(d), "--out", str(out)).returncode == 1
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    assert run_cts(INTEL, *Q, "--report-dir", str(d), "--emulator-fault", "acc_ignored").returncode == 1
    p = subprocess.run([sys.executable, "-m", "cts", "report", str(d), "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True, preexec_fn=_limit(30_000))  # fmt: skip
    _no_traceback(p)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(err) == 1 and "previous report files there are unchanged" in err[0], (
        p.stderr
    )
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before  # all three intact, no temporary left


# --------------------------------------------------------------- fuzzed journals
def _valid_run(tmp_path: Path) -> Path:
    d = tmp_path / "r"
    assert run_cts(INTEL, *Q, "-k", "sg8 and i8_i8 and M1", "--report-dir", str(d)).returncode == 0
    return d


@pytest.mark.e2e
@pytest.mark.parametrize(
    "line, why",
    [
        ('{"nodeid": "x::t[a]", "outcome": "passed", "axes": [1]', "not JSON"),  # truncated
        ('{"nodeid": "x::t[b]", "outcome": "passed", "axes": [1]}', "field 'axes' must be an object"),
        (
            '{"nodeid": "x::t[c]", "outcome": "passed", "max_ratio": "abc"}',
            "field 'max_ratio' must be a number",
        ),
        ('{"nodeid": "x::t[d]", "outcome": "exploded"}', "unknown outcome 'exploded'"),
        ('{"nodeid": 7, "outcome": "passed"}', "line without nodeid"),
        ('{"kind": "session", "device": "not an object"}', "'device' must be an object"),
        ('{"kind": "teleport", "nodeid": "x"}', "unknown line kind"),
        ('{"nodeid": "x::t[e]", "outcome": "passed", "time": "yesterday"}', "field 'time' must be a number"),
        ("[1, 2, 3]", "not a JSON object"),
        ("\x00\xff garbage", "not JSON"),
    ],
    ids=[
        "truncated",
        "axes-list",
        "ratio-text",
        "unknown-outcome",
        "nodeid-int",
        "session-device",
        "kind",
        "time-text",
        "array",
        "binary",
    ],  # fmt: skip
)
def test_a_fuzzed_journal_line_is_a_listed_problem_never_a_traceback_or_a_silent_pass(tmp_path, line, why):
    d = _valid_run(tmp_path)
    f = next((d / "journal").rglob("main-*.jsonl"))
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    p = cts_report(str(d), "--out", str(tmp_path / "m"))
    _no_traceback(p)
    assert p.returncode == 1 and "1 journal lines rejected" in p.stdout and why in p.stdout, p.stdout
    md = (tmp_path / "m" / "report.md").read_text()
    assert "## Journal problems: lines not used (1)" in md and f"{f.name}:" in md
    assert "passed 4, total 4" in p.stdout  # the valid verdicts are all still there


@pytest.mark.e2e
def test_a_huge_journal_line_and_a_newer_schema_are_problems(tmp_path):
    d = _valid_run(tmp_path)
    with open(d / "journal" / "huge.jsonl", "w") as fh:
        fh.write('{"nodeid": "x::t[h]", "outcome": "passed", "reason": "' + "x" * (5 << 20) + '"}\n')
    newer = d / "journal" / "future" / "main-1.jsonl"
    newer.parent.mkdir()
    newer.write_text(
        json.dumps({"kind": "journal", "schema": SCHEMA + 1, "run": "future", "ident": {}}) + "\n"
    )
    p = cts_report(str(d), "--out", str(tmp_path / "m"))
    _no_traceback(p)
    assert p.returncode == 1 and "longer than" in p.stdout and "newer than this suite reads" in p.stdout


@pytest.mark.e2e
def test_journals_from_other_machines_clocks_and_pythons_merge(tmp_path):
    """Two journals of one configuration made on different machines: other
    paths, a clock a day off, another Python and numpy.  They merge into one record;
    a different driver version is another configuration, kept apart."""
    d = _valid_run(tmp_path)
    rec = read_record([d])
    (run,) = rec.runs.values()
    other = tmp_path / "other-machine"
    hdr = file_header("machine-b", run.ident, "gw3") | {"host": "ci-runner-7", "time": time.time() + 86400}
    j = Journal(other / "gw3-99.jsonl", hdr)
    j.append({"kind": "session", "run": "machine-b", "python": "3.13.1", "numpy": "1.26.4", "command": "pytest /builds/x/cases",
              "device": {"name": run.ident["device"]}, "time": time.time() + 86400, "selected": 1})  # fmt: skip
    new = dict(rec.rows[0]) | {
        "nodeid": rec.rows[0]["nodeid"].replace("M1", "M9"),
        "time": time.time() + 86400,
    }
    j.append({k: v for k, v in new.items() if k not in ("run", "cfg")})
    j.append({"kind": "end", "status": "complete", "selected": 1, "time": time.time() + 86401})
    j.close()
    drv = tmp_path / "driver-b"
    j = Journal(drv / "main-1.jsonl", file_header("driver-b", run.ident | {"driver": "v2"}, "main"))
    j.append({"kind": "session", "run": "driver-b", "device": {"name": run.ident["device"]}, "selected": 1})
    j.append({k: v for k, v in rec.rows[0].items() if k not in ("run", "cfg")} | {"outcome": "failed"})
    j.append({"kind": "end", "status": "complete", "selected": 1})
    j.close()
    n = len(rec.rows)
    both = read_record([d, other])
    assert len(both.rows) == n + 1 and not both.problems and len(both.configs) == 1
    assert {r["outcome"] for r in both.rows} == {"passed"} and not record_status(both)[0]
    apart = read_record([d, other, drv])
    assert (
        len(apart.rows) == n + 2 and len(apart.configs) == 2 and not apart.changed()
    )  # not a flip: another driver
    assert record_status(apart) == (True, "failed 1")


# ------------------------------------------------------------------ escaping
def test_markdown_escapes_pipes_backticks_and_html_from_journals():
    evil = "Evil | GPU <script>alert(1)</script> `x` ```"
    rows = [
        {
            "nodeid": f"c::t[{i}]",
            "family": "intel_mma",
            "case_id": str(i),
            "outcome": o,
            "device": evil,
            "backend": "opencl",
            "reason": "log ``` </pre> | <img src=x>",
            "spec_row": evil,
        }  # fmt: skip
        for i, o in enumerate(("passed", "failed"))
    ]
    sess = [{"kind": "session", "backend": "opencl", "device": {"name": evil, "driver": evil}, "command": evil},
            {"kind": "note", "text": evil}]  # fmt: skip
    md = markdown_report(rows, sess)
    outside = md.split("```")[0] + md.split("## Coverage")[1].split("### ")[0]  # all but the fenced logs
    assert "<script>" not in outside and "<img" not in outside and "&lt;script&gt;" in outside
    plain = markdown_report([r | {"device": "GPU", "spec_row": "row"} for r in rows], [])

    def summary_cells(text: str) -> list[int]:
        part = text.split("## Summary per family, backend and device")[1].split("\n## ")[0]
        return [len(ln.replace("\\|", "").split("|")) for ln in part.splitlines() if ln.startswith("|")]

    assert summary_cells(md) == summary_cells(plain)  # a pipe in a device name adds no column
    block = md.split("### c::t[1] - failed")[1]
    lines = block.split("\n")
    assert (
        lines[2] == lines[4] == "````" and "```" in lines[3]
    )  # the fence is longer: the log cannot close it


# ---------------------------------------------------------- bad input
@pytest.mark.e2e
@pytest.mark.parametrize(
    "profile, message",
    [
        ({"M": "16"}, "entries[0].M must be an integer"),
        ({"M": 0}, "entries[0].M = 0: must be in 1..256"),
        ({"M": -16}, "must be in 1..256"),
        ({"M": 1 << 20}, "must be in 1..256"),
        ({"scope": "galaxy"}, "known scopes are"),
        ({"sat": "yes"}, "sat must be true or false"),
        ({"A": "f17"}, "unknown component type"),
        ({"Q": 1}, "unknown keys Q"),
    ],
)
def test_a_bad_coop_profile_is_a_usage_error_before_any_case_runs(tmp_path, profile, message):
    entry = {"M": 16, "N": 16, "K": 16, "A": "f16", "B": "f16", "C": "f32", "R": "f32"} | profile
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"name": "x", "subgroup_size": 32, "entries": [entry]}))
    p = run_cts("cases/test_coop_matrix.py", "-q", "--no-report", "--coop-profile", str(f))
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(err) == 1 and message in err[0], p.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args, env, message",
    [
        (["--subgroups", "10000000"], {}, "--subgroups must be <= 4096"),
        (["--run-id", "../x"], {}, "--run-id '../x'"),
        (
            ["--backend", "opencl", "--device", "0"],
            {"CTS_COOP_CHILD_TIMEOUT": "0.001"},
            "CTS_COOP_CHILD_TIMEOUT",
        ),
    ],
    ids=["subgroups", "run-id", "child-timeout"],
)
def test_limits_are_checked_before_a_device_sees_them(args, env, message):
    if "opencl" in args:
        pytest.importorskip("pyopencl")
    p = run_cts(INTEL, "-q", "--no-report", *args, env=env)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    if "opencl" in args and "OpenCL" in p.stderr and message not in p.stderr:
        pytest.skip(f"no OpenCL device here: {err[:1]}")
    assert p.returncode == 4 and len(err) == 1 and message in err[0], p.stderr


@pytest.mark.e2e
def test_a_hung_child_kernel_is_a_timeout_verdict_not_a_failure(tmp_path):
    p = run_cts(INTEL, *Q, "-k", "sg8 and i8_i8 and exact", "--emulator-fault", "hostile_child_hang_M2",
                "--report-dir", str(tmp_path))  # fmt: skip
    assert p.returncode == 1
    res = results(tmp_path / "results.csv")
    assert [o for n, o in res.items() if "test_intel_mma[" in n and "M2" in n] == ["timeout"]


@pytest.mark.e2e
def test_seed_with_leading_zeros_and_report_dir_spellings(tmp_path):
    p = run_cts(
        INTEL, *Q, "-k", "sg8 and i8_i8 and M1 and exact", "--seed", "007", f"--report-dir={tmp_path / 'a'}"
    )
    assert p.returncode == 0 and (tmp_path / "a" / "report.md").exists(), p.stderr
    assert "seed 7" in (tmp_path / "a" / "report.md").read_text()
    # a report folder whose own "tests" folder pytest pre-parses as a path (as `--report-dir .` from
    # the checkout does): the run still writes its report
    d = tmp_path / "b"
    d.mkdir()
    (d / "tests").symlink_to(ROOT / "tests")
    p = run_cts(INTEL, *Q, "-k", "sg8 and i8_i8 and M1 and exact", "--report-dir", str(d))
    assert p.returncode == 0 and (d / "report.md").exists(), p.stdout[-1500:]


@pytest.mark.e2e
def test_report_out_must_be_a_folder_name(tmp_path):
    d = _valid_run(tmp_path)
    p = cts_report(str(d), "--out", "")
    assert p.returncode == 2 and "--out: empty path" in p.stderr
    (tmp_path / "o" / "report.md").mkdir(parents=True)
    p = cts_report(str(d), "--out", str(tmp_path / "o"))
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(err) == 1 and "cannot write the report" in err[0], p.stderr
    assert sorted(f.name for f in (tmp_path / "o").iterdir()) == ["report.md"]  # nothing half-written


# ------------------------------------------------------------- exit statuses
@pytest.mark.e2e
def test_exit_status_of_resumed_and_no_report_runs_covers_the_whole_sweep(tmp_path):
    d = tmp_path / "r"
    pick = ["-k", "sg8 and i8_i8 and M1"]
    assert (
        run_cts(INTEL, *Q, *pick, "--report-dir", str(d), "--emulator-fault", "acc_ignored").returncode == 1
    )
    faulty = ["--emulator-fault", "acc_ignored"]
    # everything already judged: nothing left to run, the sweep's verdict stands
    p = run_cts(INTEL, *Q, *pick, *faulty, "--report-dir", str(d), "--resume", str(d / "journal"))
    assert p.returncode == 1, p.stdout[-1500:]
    p = run_cts(INTEL, *Q, *pick, *faulty, "--no-report", "--resume", str(d / "journal"))
    assert p.returncode == 1, p.stdout[-1500:]
    ok = tmp_path / "ok"
    assert run_cts(INTEL, *Q, *pick, "--report-dir", str(ok)).returncode == 0
    p = run_cts(INTEL, *Q, *pick, "--report-dir", str(ok), "--resume", str(ok / "journal"))
    assert p.returncode == 0, p.stdout[-1500:]  # a complete, clean sweep resumed: 0, not "no tests" (5)


def test_write_reports_is_all_or_nothing(tmp_path, monkeypatch):
    rows = [{"nodeid": "c::t[a]", "family": "f", "case_id": "a", "outcome": "passed"}]
    write_reports(rows, tmp_path)
    before = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    import cts.report.writer as md

    real = md.os.replace
    calls = []

    def fail_second(a, b):  # the first file is already renamed when the second fails
        calls.append(b)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(md.os, "replace", fail_second)
    with pytest.raises(OSError, match="previous report files there are unchanged"):
        write_reports([dict(rows[0], outcome="failed")], tmp_path)
    assert {f.name: f.read_bytes() for f in tmp_path.iterdir()} == before


@pytest.mark.e2e
def test_concatenated_journals_read_as_their_folder(tmp_path):
    """`cat RUN/*.jsonl > one.jsonl` (how a device recipe brings a run back)
    is the same record: each header starts the next process's section."""
    d = tmp_path / "r"
    assert run_cts(INTEL, *Q, "-n", "2", "-k", "sg8 and i8_i8 and M1", "--report-dir", str(d)).returncode == 0
    one = tmp_path / "one.jsonl"
    one.write_text("".join(f.read_text() for f in sorted((d / "journal").rglob("*.jsonl"))))
    a, b = read_record([d]), read_record([one])
    strip = [{k: v for k, v in r.items()} for r in a.rows]
    assert not b.problems and [r["outcome"] for r in b.rows] == [r["outcome"] for r in strip]
    assert [r.status for r in b.runs.values()] == ["complete"]


def test_ctrl_c_in_a_later_run_does_not_erase_an_earlier_runs_crash(tmp_path):
    """Run 1 crashed in a case (fatal signal), run 2 (resuming) was stopped
    with Ctrl-C in the same case, run 3 passed it: the crash stays in the
    record as a changed verdict."""
    from cts.report.journal import fault_log_of

    ident = {"backend": "emulator", "device": "d"}
    case = {"nodeid": "c::t[x]", "family": "f", "case_id": "x"}
    j1 = Journal(tmp_path / "run1" / "main-1.jsonl", file_header("run1", ident, "main"))
    j1.append({"kind": "start", **case, "time": 1.0})
    j1.close()
    fault_log_of(j1.path).write_text("Fatal Python error: Segmentation fault\n")
    j2 = Journal(tmp_path / "run2" / "main-2.jsonl", file_header("run2", ident, "main"))
    j2.append({"kind": "start", **case, "time": 2.0})
    j2.append({"kind": "interrupted", "nodeid": case["nodeid"], "time": 3.0})
    j2.close()
    j3 = Journal(tmp_path / "run3" / "main-3.jsonl", file_header("run3", ident, "main"))
    j3.append({**case, "outcome": "passed", "time": 4.0})
    j3.close()
    (row,) = read_record([tmp_path]).rows
    assert row["outcome"] == "passed" and row["changed"] == {"crash": 1, "passed": 1}, row


def test_shards_of_one_run_id_are_complete_only_when_every_shard_ended(tmp_path):
    """Two shards given one --run-id: one killed between cases (its end line
    missing) makes the run unfinished, whatever the other shard did; one
    --run-id given to two configurations keeps both configurations' rows."""
    ident = {"backend": "emulator", "device": "d"}
    case = {"family": "f", "outcome": "passed", "time": 2.0}
    for k, ended in ((1, True), (2, False)):
        j = Journal(tmp_path / "sweep" / f"shard{k}of2-main-{k}.jsonl", file_header("sweep", ident, "main"))
        j.append({"kind": "session", "run": "sweep", "selected": 2, "time": 1.0})
        j.append({**case, "nodeid": f"c::t[{k}]", "case_id": str(k)})
        if ended:
            j.append({"kind": "end", "status": "complete", "selected": 2, "time": 3.0})
        j.close()
    rec = read_record([tmp_path / "sweep"])
    (run,) = rec.runs.values()
    assert run.selected == 4 and run.status == "killed (no end record) (in 1 of 2 sessions)"
    assert record_status(rec)[0] and rec.unfinished()
    j = Journal(tmp_path / "other" / "main-9.jsonl", file_header("sweep", ident | {"driver": "2"}, "main"))
    j.append({**case, "nodeid": "c::t[1]", "case_id": "1", "outcome": "failed"})
    j.close()
    both = read_record([tmp_path])
    assert len(both.runs) == 2 and sorted(r["outcome"] for r in both.rows) == ["failed", "passed", "passed"]
