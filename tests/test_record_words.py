"""What a run says about its record, from the user's side: a run without
its device is not green, a device that claims nothing is a clean skip,
the rerun command of a failure never replaces the sweep's report (copied
from the terminal, report.md or report.html), a truncated journal says how
many selected cases it lacks, a shard that selected nothing is not a
missing shard, and the smaller words (``cts report``'s default folder, the
``--help`` groups, one note instead of a warning per worker)."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cts.report.journal import Journal, file_header
from cts.report.markdown import markdown_report
from cts.report.record import read_record
from tests.test_sweep import ROOT, cts_report, results, run_cts
from tests.test_sweep_resume import _env, _own, sweep

INTEL = "cases/test_intel_mma.py"
Q = ["-q", "-p", "no:randomly"]
NO_VULKAN = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"}
NO_CUDA = {"CUDA_VISIBLE_DEVICES": ""}  # a driver that is there sees no device: the same verdict
NOTHING_JUDGED = (
    5  # cts.report.exit_status.NOTHING_JUDGED (a literal: these end-to-end tests also run on older code)
)


def status():
    """cts.report.status, imported by the tests of its functions only."""
    import cts.report.status as st

    return st


def exit_status():
    """cts.report.exit_status, imported by the tests of its functions only."""
    import cts.report.exit_status as ex

    assert ex.NOTHING_JUDGED == NOTHING_JUDGED
    return ex


# ------------------------------------------------------------ no device
@pytest.mark.e2e
@pytest.mark.parametrize(
    "args, env",
    [
        (["cases/test_coop_matrix.py", "--backend", "vulkan", "-k", "vk and f16"], NO_VULKAN),
        (["cases/test_mlir_mma.py", "--backend", "cuda", "-k", "f16", "-n", "2"], NO_CUDA),
    ],
    ids=["vulkan", "cuda-xdist"],
)
def test_a_backend_without_its_device_is_not_a_green_run(args, env, tmp_path):
    p = run_cts(*args, *Q, "--report-dir", str(tmp_path), env=env, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if "no case was judged" in ln]
    assert p.returncode == NOTHING_JUDGED == 5 and len(lines) == 1, p.stdout[-2000:]
    assert "found no device" in lines[0] and "skipped" in p.stdout
    assert "no case was judged: backend" in (tmp_path / "report.md").read_text()
    rep = cts_report(str(tmp_path))
    assert rep.returncode == NOTHING_JUDGED, rep.stdout[-1500:]


@pytest.mark.e2e
def test_a_sweep_without_its_device_exits_5_with_one_line(tmp_path):
    p = sweep("-j", "2", "cases/test_mlir_mma.py", "--backend", "cuda", "-k", "f16", "--report-dir",
              str(tmp_path))  # fmt: skip
    assert p.returncode == NOTHING_JUDGED, p.stdout[-2000:] + p.stderr[-2000:]
    assert sum("no case was judged" in ln for ln in p.stdout.splitlines()) == 1, p.stdout[-2000:]


@pytest.mark.e2e
def test_a_device_that_claims_none_of_the_cases_is_a_clean_all_skipped_run(tmp_path):
    """The emulator realizes no intel_mma case with 64-lane subgroups? It
    does not need to: a record whose device exists and skipped everything
    is clean and says so in one line (and a no-device record is not)."""
    rows = [{"nodeid": f"c::t[{i}]", "family": "f", "case_id": str(i), "outcome": "skipped",
             "reason": "device does not report cl_x", "time": 1.0} for i in range(3)]  # fmt: skip
    for device, expect_bad in (
        ({"name": "GPU"}, False),
        ({"name": "no Vulkan", "reason": "no loader"}, True),
    ):
        j = Journal(
            tmp_path / device["name"] / "r" / "main-1.jsonl",
            file_header("r", {"device": device["name"]}, "main"),
        )
        j.append(
            {"kind": "session", "run": "r", "backend": "vulkan", "device": device, "selected": 3, "time": 0.5}
        )
        for r in rows:
            j.append(r)
        j.append({"kind": "end", "status": "complete", "selected": 3, "time": 2.0})
        j.close()
        rec = read_record([tmp_path / device["name"]])
        assert not exit_status().record_status(rec)[0]
        assert bool(status().no_device(rec)) == expect_bad and bool(status().judged_line(rec)) != expect_bad
        rep = cts_report(str(tmp_path / device["name"]), "--out", str(tmp_path / "out"))
        assert rep.returncode == (NOTHING_JUDGED if expect_bad else 0), rep.stdout
        assert sum("no case was judged" in ln for ln in rep.stdout.splitlines()) == 1, rep.stdout


@pytest.mark.e2e
def test_a_real_device_that_claims_nothing_exits_0_with_one_line(tmp_path):
    """The Intel CPU OpenCL runtime has no subgroup-MMA built-in: every
    intel_mma case skips; the run is clean (exit 0) and says why in one line."""
    try:
        import pyopencl  # noqa: F401
    except ImportError:
        pytest.skip("pyopencl is not installed")
    p = run_cts(INTEL, *Q, "--backend", "opencl", "-k", "sg8 and M1 and exact", "--report-dir", str(tmp_path),
                timeout=300)  # fmt: skip
    if p.returncode == 4:
        pytest.skip(f"no OpenCL device here: {p.stdout[-300:]}")
    lines = [ln for ln in p.stdout.splitlines() if "no case was judged" in ln]
    assert p.returncode == 0 and len(lines) == 1 and "claims none of the" in lines[0], p.stdout[-2000:]


# ------------------------------------------------------------ rerun command
@pytest.mark.e2e
def test_the_rerun_command_from_terminal_markdown_and_html_never_replaces_the_sweeps_report(tmp_path):
    d = tmp_path / "sweep"
    p = run_cts(INTEL, *Q, "-k", "sg8 and i8_i8 and M1 and not wg", "--emulator-fault", "i8_as_u8",
                "--report-dir", str(d))  # fmt: skip
    assert p.returncode == 1, p.stdout[-2000:]
    before = {f: (d / f).read_bytes() for f in ("report.md", "report.html", "results.csv")}
    page = before["report.html"].decode()
    assert re.search(r"<td>device version</td><td><code>cts \d", page)  # the emulator's version: the suite's
    assert re.search(r"<td>exercised</td><td><code>intel_mma \d+ judged", page)  # what the run exercised
    nid = sorted(results(d / "results.csv"))[0]
    case = nid.split("::")[1]
    term = [
        ln.split("rerun: ", 1)[1] for ln in p.stdout.splitlines() if ln.startswith("rerun: ") and case in ln
    ]
    md = before["report.md"].decode()
    fenced = re.findall(r"```sh\n\s*(.+?)\n\s*```", md)
    coded = [html.unescape(c) for c in re.findall(r'<code class="rerun">(.*?)</code>', page)]
    copies = {
        "terminal": term[0],
        "report.md": next(c for c in fenced if case in c),
        "report.html": next(c for c in coded if case in c),
    }
    assert len(set(copies.values())) == 1, copies
    for where, text in copies.items():
        again = subprocess.run([*_own(shlex.split(text)), "-p", "no:cacheprovider"], cwd=ROOT, env=_env(),
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        assert again.returncode == 1 and "1 failed" in again.stdout, (where, again.stdout[-1500:])
        assert {f: (d / f).read_bytes() for f in before} == before, where  # the sweep's report is intact
        assert results(d / "rerun" / "results.csv") == {nid: "failed"}, where
    merged = cts_report(str(d), "--out", str(tmp_path / "m"))  # the sweep's record takes the reruns in
    assert merged.returncode == 1 and results(tmp_path / "m" / "results.csv") == results(d / "results.csv")


# ------------------------------------------------------------ the record's words
def _journal(path: Path, run: str, rows: list[dict], selected: int, ended: bool, **session) -> None:
    j = Journal(path, file_header(run, {"device": "d"}, "main"))
    j.append({"kind": "session", "run": run, "selected": selected, "time": 0.5, **session})
    for r in rows:
        j.append(r)
    if ended:
        j.append({"kind": "end", "status": "complete", "selected": selected, "time": 9.0})
    j.close()


def _rows(n: int, outcome: str = "passed", start: int = 0) -> list[dict]:
    return [{"nodeid": f"c::t[{i}]", "family": "f", "case_id": str(i), "outcome": outcome, "time": 1.0 + i / 1e3}
            for i in range(start, start + n)]  # fmt: skip


def test_a_truncated_journal_says_how_many_selected_cases_it_lacks(tmp_path):
    _journal(tmp_path / "r1" / "main-1.jsonl", "r1", _rows(505), 648, ended=False)
    rec = read_record([tmp_path])
    assert status().missing_line(rec).startswith("missing: 143 selected cases have no verdict")
    md = markdown_report(rec.rows, [*rec.sessions, *rec.notes], rec)
    head = md.split("\n## ")[0]
    assert "total 505" in head and "missing: 143 selected cases" in head, head


def test_a_shard_that_selected_nothing_is_not_missing_and_a_missing_one_is_named(tmp_path):
    for k, n in ((1, 4), (2, 0)):  # shard 2 selected nothing: its session says so
        _journal(tmp_path / "a" / "r" / f"shard{k}of2-main-{k}.jsonl", "r", _rows(n), n, ended=True,
                 options={"shard": f"{k}/2"})  # fmt: skip
    assert exit_status().record_status(read_record([tmp_path / "a"])) == (False, "")
    _journal(
        tmp_path / "b" / "r" / "shard1of2-main-1.jsonl",
        "r",
        _rows(4),
        4,
        ended=True,
        options={"shard": "1/2"},
    )
    bad, why = exit_status().record_status(read_record([tmp_path / "b"]))
    assert bad and why == "run r has no journal of shard(s) 2/2", why  # not "1 runs ended early"


def test_the_resume_command_of_a_sweep_is_the_launchers_without_its_run_id(tmp_path):
    launcher = "python -m cts sweep -j 2 cases -k 'a and b' --run-id fixed --report-dir out"
    _journal(tmp_path / "fixed" / "shard1of2-main-1.jsonl", "fixed", _rows(3), 9, ended=False,
             options={"shard": "1/2"}, sweep=launcher, command="pytest cases --shard 1/2 --journal-only")  # fmt: skip
    rec = read_record([tmp_path])
    (run,) = rec.runs.values()
    cmd = shlex.split(status().resume_command(run))
    assert cmd[:5] == ["python", "-m", "cts", "sweep", "-j"] and "--run-id" not in cmd and "a and b" in cmd
    assert cmd[-2:] == ["--resume", str(tmp_path / "fixed")] and "--shard" not in cmd
    (line,) = status().unfinished_lines(rec)
    assert "resume with: python -m cts sweep" in line and "of shard(s)" not in line, line


@pytest.mark.e2e
def test_cts_report_writes_to_a_default_folder(tmp_path):
    _journal(tmp_path / "j" / "r" / "main-1.jsonl", "r", _rows(2), 2, ended=True)
    p = cts_report(str(tmp_path / "j"))
    assert p.returncode == 0 and (tmp_path / "j" / "merged" / "report.md").exists(), p.stdout + p.stderr


@pytest.mark.e2e
def test_pytest_help_puts_the_shard_internals_in_a_group_of_their_own():
    p = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], cwd=ROOT,
                       env=_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
    groups = re.split(r"\n(?=\S[^\n]*:\n)", p.stdout)
    everyday = next(g for g in groups if g.startswith("subgroup-matrix conformance suite:"))
    internal = next(g for g in groups if g.startswith("subgroup-matrix conformance suite: shards"))
    for opt in ("--backend", "--device", "--report-dir", "--resume", "--expectations", "--emulator-fault"):
        assert f"  {opt}" in everyday and f"  {opt}" not in internal, opt
    for opt in ("--journal-only", "--run-id", "--shard", "--shard-durations"):
        assert re.search(rf"\n  {opt}[ =]", internal) and not re.search(rf"\n  {opt}[ =]", everyday), opt
    assert "the report merges both" not in p.stdout and "python -m cts sweep` alike" in " ".join(
        everyday.split()
    )


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_resume_note_is_said_once_and_not_as_a_warning(tmp_path, workers):
    pick = ["-k", "sg8 and i8_i8 and M1 and not wg"]
    assert run_cts(INTEL, *Q, *pick, "--report-dir", str(tmp_path)).returncode == 0
    p = run_cts(INTEL, *Q, *workers, "-k", "sg8 and i8_i8 and (M1 or M2) and not wg", "--report-dir",
                str(tmp_path), "--resume", str(tmp_path))  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:]
    said = [ln for ln in p.stdout.splitlines() if "cases already recorded were not run again" in ln]
    assert len(said) == 1 and said[0].startswith("cts: --resume: 4 cases"), p.stdout[-2000:]
    assert "PytestWarning" not in p.stdout and "warnings summary" not in p.stdout


@pytest.mark.e2e
def test_python_m_cts_devices_lists_every_backend_with_its_selector():
    p = subprocess.run([sys.executable, "-m", "cts", "devices"], cwd=ROOT, env={**_env(), **NO_VULKAN, **NO_CUDA},
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    heads = [ln.split(":")[0] for ln in p.stdout.splitlines() if not ln.startswith((" ", "details"))]
    assert heads == ["emulator", "opencl", "vulkan", "cuda"], p.stdout
    assert "vulkan: none (" in p.stdout and "cuda: none (" in p.stdout  # each says why
    for ln in p.stdout.splitlines():
        if ln.startswith("  ["):
            assert re.fullmatch(r"  \[(\d+)\] .+: --backend (opencl|vulkan|cuda) --device \1", ln), ln


def test_journal_notes_name_their_run(tmp_path):
    j = Journal(tmp_path / "r" / "main-1.jsonl", file_header("r", {"device": "d"}, "main"))
    j.append({"kind": "note", "text": "hello", "time": 1.0})
    j.append(_rows(1)[0])
    j.close()
    assert [(n["run"], n["text"]) for n in read_record([tmp_path]).notes] == [("r", "hello")]
    assert json.loads((tmp_path / "r" / "main-1.jsonl").read_text().splitlines()[1])["kind"] == "note"


def test_a_ci_shard_killed_and_run_again_under_its_run_id_completes_the_run(tmp_path):
    """Shards of a CI job matrix (``--shard K/N --run-id P``, merged by
    ``python -m cts report``): shard 1 killed, its printed resume command
    keeps ``--run-id P``, and its newer complete session replaces the
    killed one; before that the run is unfinished."""
    j = tmp_path / "P"
    cmd = "pytest cases --shard 1/2 --run-id P --journal-only --report-dir out"
    _journal(
        j / "shard1of2-main-1.jsonl", "P", _rows(2), 4, ended=False, options={"shard": "1/2"}, command=cmd
    )
    _journal(j / "shard2of2-main-2.jsonl", "P", _rows(3, start=10), 3, ended=True, options={"shard": "2/2"})
    rec = read_record([tmp_path])
    assert exit_status().record_status(rec) == (True, "1 run ended early")
    (line,) = status().unfinished_lines(rec)
    again = shlex.split(line.split("resume with: ", 1)[1])
    assert again[again.index("--run-id") + 1] == "P" and again[-2:] == ["--resume", str(j)], again
    rows = [dict(r, time=20.0 + i) for i, r in enumerate(_rows(4))]
    # the job run again: a newer session of shard 1/2 (it starts after the killed one)
    _journal(j / "shard1of2-main-3.jsonl", "P", rows, 4, ended=True, options={"shard": "1/2"}, time=15.0)
    rec = read_record([tmp_path])
    assert exit_status().record_status(rec) == (False, "") and len(rec.rows) == 7
