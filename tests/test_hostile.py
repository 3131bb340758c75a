"""Hostile drivers: a backend double that kills its process
or hangs inside a case (cts/backends/emu_hostile.py, intel_mma cases with
M = 2).  The sweep goes on, that case is reported as crash or timeout, and
every other result is kept."""

from __future__ import annotations

import json

import pytest

from cts.backends.base import CaseError
from cts.backends.emulator import EmulatorBackend
from cts.families.intel import intel_mma_cases
from cts.runs.intel import run_intel_mma
from tests.test_sweep import CASES, ROOT, results, run_cts

PICK = "sg8 and i8_i8 and exact and not wg"  # 4 intel_mma cases (M1, M2, M4, M8) + 3 split cases (wg2)
M2 = "cases/test_intel_mma.py::test_intel_mma[sg8-i8_i8-k32-M2-acc_i32-exact]"
ARMED = {"CTS_HOSTILE": "1"}


def _others_passed(res: dict[str, str]) -> None:
    assert len(res) == 7, res
    assert {o for n, o in res.items() if n != M2} == {"passed"}


@pytest.mark.e2e
def test_worker_crash_under_xdist_is_a_crash_row_and_the_sweep_goes_on(tmp_path):
    p = run_cts(
        CASES, "-q", "-n", "2", "-k", PICK, "--emulator-fault", "hostile_segv_M2", "--report-dir", str(tmp_path),
        env=ARMED,
    )  # fmt: skip
    assert p.returncode == 1, p.stdout[-3000:]
    assert "crashed while running" in p.stdout
    res = results(tmp_path / "results.csv")
    assert res[M2] == "crash"
    _others_passed(res)
    md = (tmp_path / "report.md").read_text()
    assert "crash 1" in md and "crashed while running" in md
    # the crash row carries the case fields of the dead worker's start marker
    html = (tmp_path / "report.html").read_text()
    assert "intel_sub_group_i8_i8_matrix_mad_k32(int2, int8, int2) sg8" in html


@pytest.mark.e2e
def test_crash_without_xdist_keeps_earlier_rows_and_resume_continues(tmp_path):
    common = [CASES, "-q", "-p", "no:randomly", "-k", PICK, "--report-dir", str(tmp_path)]
    p = run_cts(*common, "--emulator-fault", "hostile_segv_M2", env=ARMED)
    assert p.returncode < 0 or p.returncode > 128 or p.returncode == 1  # killed by SIGSEGV
    from cts.report.record import read_journals

    rows = {r["nodeid"]: r["outcome"] for r in read_journals([tmp_path / "journal"])}
    m1 = M2.replace("M2", "M1")
    assert rows == {m1: "passed", M2: "crash"}  # the row before the crash is kept; the crash is inferred
    assert "Segmentation fault" in next(iter((tmp_path / "journal").rglob("*.fault"))).read_text()
    p = run_cts(*common, "--resume", str(tmp_path / "journal"))
    # the resumed sweep runs the crashed case again; here it does not recur: every case is judged,
    # and the report keeps the crash as changed (flaky) instead of hiding it: not a clean sweep
    assert p.returncode == 1 and "changed verdict between runs" in p.stdout, p.stdout[-2000:]
    res = results(tmp_path / "results.csv")
    assert res[M2] == "passed"
    _others_passed(res)
    md = (tmp_path / "report.md").read_text()
    assert "## Changed between runs (flaky): a different verdict when run again (1)" in md, md[-2000:]
    assert f"| {M2} | crash" in md and "crash 1, passed 1" in md, md[-2000:]


def interrupt_inside_hang(cmd: list[str], env: dict, tmp_path) -> tuple[int, str]:
    """Run ``cmd`` (a pytest run with the ``hostile_hang_M2`` fault armed),
    send it SIGINT once the hang has begun (the fault writes a marker file
    when it enters the loop), and return its exit status and output.  A run
    that has not ended 60 s after the signal gets SIGABRT, and the test fails
    with the stack faulthandler wrote beside its journal."""
    import signal
    import subprocess
    import time

    mark = tmp_path / "hang-entered"
    env = {**env, "CTS_HOSTILE_MARK": str(mark)}
    p = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # SIGINT as a terminal sends it
    )  # fmt: skip
    deadline = time.time() + 120
    while time.time() < deadline and not mark.exists() and p.poll() is None:
        time.sleep(0.05)
    assert mark.exists(), f"the hang never began: {p.communicate(timeout=60)[0][-2000:]}"
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGABRT)
        out, _ = p.communicate(timeout=60)
        faults = "\n".join(f.read_text(errors="replace") for f in tmp_path.rglob("*.fault"))
        raise AssertionError(
            f"still running 60 s after SIGINT; its stack:\n{faults}\n{out[-2000:]}"
        ) from None
    return p.returncode, out


@pytest.mark.e2e
def test_a_sweep_interrupted_by_the_user_resumes_with_the_case_it_was_in(tmp_path):
    """Ctrl-C inside a case is not a crash: that case gets no row and the
    resumed sweep runs it (here without the fault: it passes)."""
    import os
    import sys

    from cts.report.record import read_journals

    common = [
        CASES,
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-k",
        PICK,
        "--report-dir",
        str(tmp_path),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))} | ARMED
    rc, out = interrupt_inside_hang(
        [sys.executable, "-m", "pytest", *common, "--emulator-fault", "hostile_hang_M2"], env, tmp_path
    )
    assert rc == 2 and "KeyboardInterrupt" in out, out[-2000:]
    rows = {r["nodeid"]: r["outcome"] for r in read_journals([tmp_path / "journal"])}
    assert rows == {M2.replace("M2", "M1"): "passed"}, rows  # no crash row for the interrupted case
    p2 = run_cts(*common, "--resume", str(tmp_path / "journal"))
    assert p2.returncode == 0, p2.stdout[-2000:]
    assert (
        set(results(tmp_path / "results.csv").values()) == {"passed"}
        and len(results(tmp_path / "results.csv")) == 7
    )


@pytest.mark.e2e
@pytest.mark.parametrize("method", ["signal", "thread"])
def test_hang_becomes_timeout_and_the_sweep_goes_on(tmp_path, method):
    """signal: pytest-timeout fails the case in the worker; thread: it kills
    the worker, the controller journals the crash and the start marker's
    timeout turns it into ``timeout``."""
    p = run_cts(
        CASES, "-q", "-n", "2", "-k", PICK, "--emulator-fault", "hostile_hang_M2", "--timeout", "2",
        "--timeout-method", method, "--report-dir", str(tmp_path),
        env=ARMED, timeout=90,
    )  # fmt: skip
    assert p.returncode == 1, p.stdout[-3000:]
    res = results(tmp_path / "results.csv")
    assert res[M2] == "timeout", res
    _others_passed(res)


@pytest.mark.e2e
def test_markup_in_a_build_log_is_escaped_in_the_html_report(tmp_path):
    p = run_cts(
        CASES, "-q", "-k", PICK, "--emulator-fault", "hostile_markup_log_M2", "--report-dir", str(tmp_path)
    )
    assert p.returncode == 1
    page = (tmp_path / "report.html").read_text()
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert "<script>alert" not in page and "<img" not in page and "<b>bold" not in page
    assert page.count("<script>") == 1  # only the table-sorting script of the page itself
    row = next(
        json.loads(ln)
        for f in (tmp_path / "journal").rglob("*.jsonl")
        for ln in f.read_text().splitlines()
        if M2 in ln and '"outcome"' in ln
    )
    assert row["outcome"] == "failed" and "<script>" in row["error"]  # the journal keeps the raw log


@pytest.mark.parametrize("fault", ["hostile_segv_M2", "hostile_hang_M2"])
def test_unarmed_hostile_faults_fail_the_case_instead(monkeypatch, fault):
    """In-process loops over all faults can never be killed or hung."""
    monkeypatch.delenv("CTS_HOSTILE", raising=False)
    case = next(
        c for c in intel_mma_cases(("exact",)) if c.M == 2 and c.a == "i8" and c.b == "i8" and c.sg == 8
    )
    with pytest.raises(CaseError, match="not armed"):
        run_intel_mma(case, EmulatorBackend((fault,)), 1, subgroups=2)
    other = next(c for c in intel_mma_cases(("exact",)) if c.M == 4)
    assert run_intel_mma(other, EmulatorBackend((fault,)), 1, subgroups=2).verdict.passed


@pytest.mark.e2e
def test_a_driver_crashing_on_many_cases_does_not_stop_the_sweep(tmp_path):
    """6 crashes on one worker: more than pytest-xdist's default restart limit
    (4 x workers; the 5th crash would end the sweep), which cts.plugin.sweep raises,
    so every case still gets a row."""
    p = run_cts(
        CASES, "-q", "-n", "1", "-k", "i8_i8 and M2 and not onehot and not wg", "--emulator-fault", "hostile_segv_M2",
        "--report-dir", str(tmp_path), env=ARMED,
    )  # fmt: skip
    assert "maximum crashed workers reached" not in p.stdout
    res = results(tmp_path / "results.csv")
    assert sorted(res.values()) == ["crash"] * 6 + ["passed"] * 3, res  # 6 intel_mma M2 cases, 3 split ones


def test_a_journal_cut_mid_line_is_repaired_before_appending(tmp_path):
    """A process killed while writing leaves a half line; the next run that
    appends to the same file (same worker name and pid, common in
    containers) must not glue its first row onto it."""
    import warnings

    from cts.report.journal import Journal
    from cts.report.record import read_journals

    f = tmp_path / "main-1.jsonl"
    f.write_text(json.dumps({"nodeid": "a", "outcome": "passed", "time": 1}) + "\n" + '{"nodeid": "b", "outc')
    j = Journal(f)
    j.append({"kind": "start", "nodeid": "c", "time": 2})
    j.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = {r["nodeid"]: r["outcome"] for r in read_journals([f])}
    # c's start marker survived; its process left no fatal signal: the run was killed from outside
    assert rows == {"a": "passed", "c": "interrupted"}, rows
    assert len(caught) == 1 and "main-1.jsonl:2: not JSON" in str(caught[0].message)


def test_a_malformed_child_timeout_is_a_case_error_not_a_crash(monkeypatch):
    from cts.backends.opencl_coop import CHILD_TIMEOUT_S, child_timeout_s

    monkeypatch.setenv("CTS_COOP_CHILD_TIMEOUT", "2m")
    with pytest.raises(CaseError, match="CTS_COOP_CHILD_TIMEOUT='2m'"):
        child_timeout_s()
    for bad in ("inf", "nan", "0", "1e300"):
        monkeypatch.setenv("CTS_COOP_CHILD_TIMEOUT", bad)
        with pytest.raises(CaseError, match="expected a number of seconds"):
            child_timeout_s()
    monkeypatch.setenv("CTS_COOP_CHILD_TIMEOUT", "7.5")
    assert child_timeout_s() == 7.5
    monkeypatch.delenv("CTS_COOP_CHILD_TIMEOUT")
    assert child_timeout_s() == CHILD_TIMEOUT_S
