"""Fault injection on every path that ends a sweep, from the user's side:
``python -m cts sweep -j N``, ``pytest`` and ``pytest -n 2``, each stopped
at a random point (Ctrl-C to the whole process group, as a terminal sends
it, or SIGKILL, as a CI limit does) on a wrong device (``--emulator-fault
i8_as_u8``), then continued with the one command the sweep printed (or
``python -m cts report`` printed).  The continued sweep's results.csv must
equal the uninterrupted sweep's case by case, its report must count every
selected case, and its exit status must be 1: the wrong device's failures
recorded before the stop are the whole sweep's verdict."""

from __future__ import annotations

import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_sweep import ROOT, cts_report, results

INTEL = "cases/test_intel_mma.py"
PICK = "sg8 and not wg"  # 126 intel_mma cases: i8 ones fail under i8_as_u8, the others pass
FAULT = ["--emulator-fault", "i8_as_u8"]


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}


def sweep(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "cts", "sweep", *args]
    return subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)


def _own(cmd: list[str]) -> list[str]:
    """A printed command as this test runs it: ``python`` / ``pytest`` by this interpreter."""
    if cmd[0] == "python":
        return [sys.executable, *cmd[1:]]
    if cmd[0] == "pytest":
        return [sys.executable, "-m", "pytest", *cmd[1:]]
    raise AssertionError(f"not a command this suite prints: {cmd}")


def _recorded(d: Path) -> int:
    if not (d / "journal").exists():
        return 0
    return sum(f.read_text(errors="replace").count('"outcome"') for f in (d / "journal").rglob("*.jsonl"))


def stop_at_random_point(cmd: list[str], d: Path, seed: int, total: int, sig: int) -> tuple[int, str]:
    """Run ``cmd`` in a process group of its own, wait until it has recorded a
    random number of verdicts, then send ``sig`` to the whole group."""
    p = subprocess.Popen(
        cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    rnd = random.Random(seed)
    target = rnd.randint(10, total - 30)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None and _recorded(d) < target:
        time.sleep(0.01)
    time.sleep(rnd.random() * 0.05)
    assert p.poll() is None, "the run ended before the stop: make the selection larger"
    os.killpg(p.pid, sig)
    out, _ = p.communicate(timeout=120)
    return p.returncode, out


def resume_command(text: str) -> list[str]:
    found = re.findall(r"resume with: (.+)", text)
    assert len(found) == 1, text[-3000:]
    return _own(shlex.split(found[0]))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, str]:
    """The whole faulty sweep, never stopped: node id -> outcome."""
    d = tmp_path_factory.mktemp("ref")
    p = sweep("-j", "2", INTEL, "-k", PICK, *FAULT, "--report-dir", str(d))
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-2000:]
    ref = results(d / "results.csv")
    assert "failed" in ref.values() and "passed" in ref.values()
    return ref


def _whole_sweep(d: Path, ref: dict[str, str], p: subprocess.CompletedProcess) -> None:
    """What a continued sweep must show: exit 1, every verdict, the right total."""
    assert "Traceback" not in p.stdout + p.stderr, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.returncode == 1, p.stdout[-3000:]
    assert results(d / "results.csv") == ref
    md = (d / "report.md").read_text()
    assert f"total {len(ref)}\n" in md.split("\n## ")[0], md[:1500]
    failed = sum(o == "failed" for o in ref.values())
    assert f"## Failures: device verdicts ({failed})" in md
    merged = cts_report(str(d), "--out", str(d / "merged"))
    assert merged.returncode == 1 and "interrupted" not in merged.stdout, merged.stdout[-2000:]
    assert results(d / "merged" / "results.csv") == ref


@pytest.mark.e2e
def test_cts_sweep_resume_merges_the_recorded_failures_with_the_new_verdicts(reference, tmp_path):
    """A part of the sweep recorded (here: the M1 cases, every i8 one a
    failure), then ``cts sweep --resume`` of the report folder: the report
    and exit status are the whole sweep's (it merged only its own journal
    folder: the recorded failures were hidden and it exited 0)."""
    d = tmp_path / "r"
    first = sweep("-j", "2", INTEL, "-k", f"{PICK} and M1", *FAULT, "--report-dir", str(d))
    assert first.returncode == 1 and "shard(s)" not in first.stdout, first.stdout[-2000:]
    p = sweep("-j", "2", INTEL, "-k", PICK, *FAULT, "--report-dir", str(d), "--resume", str(d))
    _whole_sweep(d, reference, p)
    assert "recorded before (--resume)" in p.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("seed", [1, 2])
def test_cts_sweep_stopped_by_ctrl_c_continues_with_the_command_it_printed(reference, tmp_path, seed):
    d = tmp_path / "r"
    cmd = [sys.executable, "-m", "cts", "sweep", "-j", "2", INTEL, "-k", PICK, *FAULT, "--report-dir", str(d)]
    rc, out = stop_at_random_point(cmd, d, seed, len(reference), signal.SIGINT)
    assert rc == 2 and "Traceback" not in out, out[-3000:]
    again = resume_command(out)
    assert again[1:5] == ["-m", "cts", "sweep", "-j"] and "--shard" not in again, again
    p = subprocess.run(again, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    _whole_sweep(d, reference, p)


@pytest.mark.e2e
def test_cts_sweep_killed_by_sigkill_continues_with_the_command_the_report_printed(reference, tmp_path):
    d = tmp_path / "r"
    cmd = [sys.executable, "-m", "cts", "sweep", "-j", "2", INTEL, "-k", PICK, *FAULT, "--report-dir", str(d)]
    rc, _ = stop_at_random_point(cmd, d, 3, len(reference), signal.SIGKILL)
    assert rc == -signal.SIGKILL
    rep = cts_report(str(d))  # the default --out: DIR/merged
    assert rep.returncode == 1 and "missing: " in rep.stdout, rep.stdout[-3000:]
    assert (d / "merged" / "report.md").exists()
    p = subprocess.run(resume_command(rep.stdout), cwd=ROOT, env=_env(), capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    _whole_sweep(d, reference, p)


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_stopped_by_ctrl_c_prints_its_resume_command_and_continues_with_it(
    reference, tmp_path, workers
):
    """After Ctrl-C the terminal shows the command that continues the run
    (not only KeyboardInterrupt), and that command completes the sweep."""
    d = tmp_path / "r"
    cmd = [sys.executable, "-m", "pytest", INTEL, "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-k", PICK,
           *FAULT, *workers, "--report-dir", str(d)]  # fmt: skip
    rc, out = stop_at_random_point(cmd, d, 4, len(reference), signal.SIGINT)
    assert rc == 2, out[-3000:]
    again = resume_command(out)
    assert "cts: interrupted: run " in out and again[1:3] == ["-m", "pytest"], out[-3000:]
    p = subprocess.run([*again, "-p", "no:cacheprovider"], cwd=ROOT, env=_env(), capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    _whole_sweep(d, reference, p)
