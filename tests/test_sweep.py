"""Sweeps: --shard K/N, --resume, --expectations, JUnit, `python -m cts report`
(items 1-5).  End-to-end through pytest in subprocesses on a small
case selection of the emulator, so each run takes a second or two."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cts.plugin.shard import parse_shard, shard_of

ROOT = Path(__file__).resolve().parents[1]
CASES = "cases/test_intel_mma.py"
SMALL = "sg8 and (i8_i8 or u8_u8) and not wg"  # 56 cases: base + split (wg2); i8_as_u8 fails the i8 ones


def run_cts(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """pytest on the conformance cases in a fresh process (no xdist/pytest
    variables of the outer run leak in)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    e.update(env or {})
    cmd = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"]
    return subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def results(path: Path) -> dict[str, str]:
    """nodeid -> outcome from a results.csv."""
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["nodeid"]: r["outcome"] for r in csv.DictReader(fh)}


def cts_report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cts", "report", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


# ------------------------------------------------------------------ shard
def test_parse_shard_accepts_k_of_n_and_rejects_the_rest():
    assert parse_shard("1/1") == (1, 1)
    assert parse_shard("3/4") == (3, 4)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0", "-1/2", ""):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


def test_shard_of_is_stable_and_covers_every_slice():
    ids = [f"cases/x.py::test_x[case{i}]" for i in range(400)]
    slices = [shard_of(i, 4) for i in ids]
    assert slices == [shard_of(i, 4) for i in ids]  # no salted hash
    counts = [slices.count(k) for k in (1, 2, 3, 4)]
    assert min(counts) > 60, counts  # roughly balanced
    assert shard_of("cases/x.py::test_x[case0]", 1) == 1


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The reference run: -n 2, with a fault so outcomes include failures."""
    d = tmp_path_factory.mktemp("plain")
    p = run_cts(CASES, "-q", "-n", "2", "-k", SMALL, "--emulator-fault", "i8_as_u8", "--report-dir", str(d))
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    res = results(d / "results.csv")
    assert len(res) == 56 and {"passed", "failed"} <= set(res.values())
    return d, res


# A slice of every family of cases/ (262 cases), with one fault per family so
# each has failures next to passes, and skips (joint_matrix).
SLICE = (
    "(sg8 and (i8_i8 or u8_u8) and not wg) or (rotate and opencl_c and char) or (mlir and f16_f16_f16 and tight)"
    " or (coop_matrix and A16x16 and f16 and exact) or (joint and amx and bf16 and exact and row_row)"
    " or (round_tf32 and w1 and not w16) or (numerics and bf16_f32)"
)
SLICE_FAULTS = [
    f"--emulator-fault={f}"
    for f in (
        "i8_as_u8",
        "rotate_direction_reversed",
        "mlir_compute_transpose_ignored",
        "coop_colmajor_as_rowmajor",
        "joint_apply_coords_swapped",
    )
]


def verdicts(path: Path) -> dict[str, tuple[str, str]]:
    """nodeid -> (outcome, max err/bound) from a results.csv: the outcome
    and the measured error must agree, not only the case set."""
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["nodeid"]: (r["outcome"], r["max_ratio"]) for r in csv.DictReader(fh)}


@pytest.mark.e2e
def test_plain_xdist_and_merged_shards_give_the_same_cases_and_outcomes(tmp_path):
    """`pytest cases` (plain), `pytest cases -n 2` and
    `--shard 1/2` + `--shard 2/2` + `python -m cts report` agree case by case
    on the outcome and the measured error, over a slice of every family."""
    tiers = "--tiers=exact,onehot,random,special,rounding,model"  # model: opt-in, part of the slice
    base = ["cases", "-q", "-k", SLICE, tiers, *SLICE_FAULTS]
    runs = {}
    for name, extra in (("plain", []), ("xdist", ["-n", "2"])):
        p = run_cts(*base, *extra, "--report-dir", str(tmp_path / name))
        assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]  # the faults fail cases
        runs[name] = verdicts(tmp_path / name / "results.csv")
    plain = runs["plain"]
    # 198 + the MLIR compute cases on device shapes + 56 of the coop KHR axes
    assert len(plain) == 262, len(plain)
    fams = {}
    for nid, (outcome, _) in plain.items():
        fams.setdefault(nid.split("::")[0], set()).add(outcome)
    faulty = {f for f, o in fams.items() if {"passed", "failed"} <= o}
    assert len(fams) == 7 and len(faulty) == 5, fams  # numerics_model and spirv's tf32 rounding pass
    assert "skipped" in {o for o, _ in plain.values()}
    assert any(r for _, r in plain.values())  # measured errors are compared too

    junit = tmp_path / "junit.xml"
    shard_sets = []
    for k in (1, 2):  # both shards into one report folder, as CI jobs sharing a volume would
        p = run_cts(
            *base, "--shard", f"{k}/2", "--run-id", "sweep-1", "--report-dir", str(tmp_path / "r"),
            "--junitxml", str(junit),
        )  # fmt: skip
        assert p.returncode in (0, 1), p.stderr[-2000:]
        shard_sets.append({r.attrib["name"] for r in ET.parse(junit).getroot().iter("testcase")})
    assert shard_sets[0] and shard_sets[1] and not shard_sets[0] & shard_sets[1]
    assert len(shard_sets[0]) + len(shard_sets[1]) == 262
    results_rows = [
        ln for f in (tmp_path / "r" / "journal").rglob("*.jsonl") for ln in f.read_text().splitlines()
        if '"outcome"' in ln and '"kind"' not in ln
    ]  # fmt: skip
    assert len(results_rows) == 262  # no case ran in both shards, none twice
    # the report of the last shard merges both: one run (--run-id), two sessions
    assert verdicts(tmp_path / "r" / "results.csv") == plain
    # and merged again by the CLI from the journal folder alone
    p = cts_report(str(tmp_path / "r" / "journal"), "--out", str(tmp_path / "m"))
    assert p.returncode == 1, p.stderr  # the merged run has device failures: the merge says so
    assert verdicts(tmp_path / "m" / "results.csv") == plain == runs["xdist"]
    assert "2 sessions merged" in (tmp_path / "m" / "report.md").read_text()


@pytest.mark.e2e
def test_junit_xml_carries_case_properties(tmp_path):
    junit = tmp_path / "j.xml"
    p = run_cts(CASES, "-q", "-k", "sg8 and i8_i8 and M1 and exact", "--no-report", "--junitxml", str(junit))
    assert p.returncode == 0, p.stdout[-2000:]
    tc = next(ET.parse(junit).getroot().iter("testcase"))
    props = {x.attrib["name"]: x.attrib["value"] for x in tc.iter("property")}
    assert props["cts_family"] == "intel_mma" and props["cts_outcome"] == "passed"
    assert props["cts_case_id"] == "sg8-i8_i8-k32-M1-acc_i32-exact"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args, message",
    [
        (["--shard", "3/2"], "--shard K/N needs 1 <= K <= N"),
        (["--shard", "x"], "--shard expects K/N"),
        (["--resume", "/nonexistent/journal"], "--resume: journal not found"),
        (["--expectations", "/nonexistent/exp.txt"], "cannot read expectations file"),
    ],
)
def test_bad_sweep_options_give_one_line_errors(args, message):
    p = run_cts(CASES, "-q", "--no-report", *args)
    assert p.returncode == 4  # pytest usage error
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and message in err[0], p.stderr


# ----------------------------------------------------------------- resume
@pytest.mark.e2e
def test_resume_runs_only_what_is_missing(unsharded, tmp_path):
    _, plain = unsharded
    d = tmp_path / "r"
    common = [CASES, "-q", "--emulator-fault", "i8_as_u8", "--report-dir", str(d)]
    p = run_cts(*common, "-k", "sg8 and i8_i8 and M1")  # the "interrupted" first part
    first = results(d / "results.csv")
    assert p.returncode in (0, 1) and 0 < len(first) < 56
    p = run_cts(*common, "-k", SMALL, "--resume", str(d / "journal"))
    assert p.returncode in (0, 1), p.stderr[-2000:]
    from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
    from reference.data import TIERS

    in_file = sum(len(f(TIERS)) for f in (intel_mma_cases, intel_split_cases, tf32_convert_cases))
    assert f" {in_file - 56 + len(first)} deselected" in p.stdout  # -k's and the resumed ones
    assert results(d / "results.csv") == plain
    starts = [
        ln for f in (d / "journal").rglob("*.jsonl") for ln in f.read_text().splitlines() if '"start"' in ln
    ]
    assert len(starts) == 56  # no case ran twice
    assert f"--resume: {len(first)} cases already recorded" in (d / "report.md").read_text()


@pytest.mark.e2e
@pytest.mark.parametrize(
    "change",
    [
        ["--seed", "7"],
        ["--tolerance-profile", "strict"],
        ["--backend", "opencl", "--device", "Intel", "--opencl-prelude", "builtin"],
        ["--emulator-model", "trunc_b4"],
        ["--subgroups", "4"],
    ],
)
def test_resume_reruns_cases_recorded_under_another_configuration(tmp_path, change):
    """A verdict holds only for the backend, device, driver, seed and profile
    it was recorded with: resuming under another one reruns those cases and
    the report says why (before, emulator rows were reported as OpenCL's)."""
    if change[1] == "opencl":
        pytest.importorskip("pyopencl")
    old, d = tmp_path / "old", tmp_path / "new"
    pick = ["-k", "sg8 and u8_u8 and M1 and exact"]
    p = run_cts(CASES, "-q", *pick, "--report-dir", str(old))
    assert p.returncode == 0, p.stdout[-1500:]
    p = run_cts(CASES, "-q", *pick, *change, "--resume", str(old / "journal"), "--report-dir", str(d))
    if change[1] == "opencl" and "matches no OpenCL device" in p.stderr + p.stdout:
        pytest.skip("no Intel OpenCL device here")
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-1500:]
    assert re.match(r"1 passed, \d+ deselected", p.stdout.splitlines()[-1]), p.stdout[-800:]  # it ran again
    note = "recorded cases are from another configuration"
    assert note in (d / "report.md").read_text()
    with open(d / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    want_seed = change[1] if change[0] == "--seed" else "1"
    assert rows and all(r["seed"] == want_seed for r in rows), rows


@pytest.mark.e2e
def test_resume_from_another_folder_starts_a_fresh_journal_here(tmp_path):
    """Rows of an older run left in the report folder must not leak into the
    report of a sweep resumed from a journal elsewhere."""
    import json

    d, old = tmp_path / "r", tmp_path / "old"
    stale = {"nodeid": "cases/test_intel_mma.py::test_intel_mma[stale]", "family": "intel_mma",
             "case_id": "stale", "outcome": "failed", "time": 1.0}  # fmt: skip
    (d / "journal").mkdir(parents=True)
    (d / "journal" / "main-1.jsonl").write_text(json.dumps(stale) + "\n")
    m1 = "cases/test_intel_mma.py::test_intel_mma[sg8-i8_i8-k32-M1-acc_i32-exact]"
    (old / "journal").mkdir(parents=True)
    (old / "journal" / "main-2.jsonl").write_text(
        json.dumps(stale | {"nodeid": m1, "outcome": "passed"}) + "\n"
    )
    p = run_cts(
        CASES,
        "-q",
        "-k",
        "sg8 and i8_i8 and exact and not wg",
        "--resume",
        str(old / "journal"),
        "--report-dir",
        str(d),
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    res = results(d / "results.csv")
    assert res[m1] == "passed" and len(res) == 7 and not [n for n in res if "stale" in n]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda t: ["--resume", str(_write(t / "j.jsonl.gz", b"not gzip"))], "--resume: cannot read journal"),
        (lambda t: ["--expectations", str(_write(t / "e.txt", b"\xff\xfe x fail y\n"))], "not UTF-8 text"),
        (lambda t: ["--report-dir", str(_write(t / "file", b"x"))], "--report-dir: cannot write the journal"),
        (lambda t: ["--report-dir="], "--report-dir: empty path"),
    ],
    ids=["corrupt-resume-journal", "binary-expectations", "report-dir-is-a-file", "report-dir-empty"],
)
def test_unreadable_inputs_are_one_line_usage_errors(tmp_path, make, message):
    p = run_cts(CASES, "-q", "-k", "sg8 and i8_i8 and M1 and exact", *make(tmp_path))
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(err) == 1 and message in err[0], p.stdout[-2000:] + p.stderr


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ----------------------------------------------------------- expectations
@pytest.mark.e2e
def test_expectations_xfail_xpass_skip_and_stale_entries(tmp_path):
    exp = tmp_path / "exp.txt"
    exp.write_text(
        "# known failures of the i8_as_u8 emulator\n"
        "test_intel_mma[sg8-i8_i8-k32-M*-acc_i32-random]  fail  https://tracker.example/issue/1\n"
        "intel_mma[sg8-u8_u8-k32-M1-acc_i32-exact]        fail  wrongly listed: passes\n"
        "intel_split_mma[*]                                skip  split pairing not wired on this driver\n"
        "test_intel_mma[sg32-*]                            fail  https://tracker.example/issue/2\n",
        encoding="utf-8",
    )
    d = tmp_path / "r"
    p = run_cts(
        CASES,
        "-q",
        "-k",
        SMALL,
        "--emulator-fault",
        "i8_as_u8",
        "--expectations",
        str(exp),
        "--report-dir",
        str(d),
    )
    res = results(d / "results.csv")
    rid = "cases/test_intel_mma.py::test_intel_mma[sg8-i8_i8-k32-{}-acc_i32-{}]"
    assert {res[rid.format(m, "random")] for m in ("M1", "M2", "M4", "M8")} == {"xfailed"}
    assert res[rid.replace("i8_i8", "u8_u8").format("M1", "exact")] == "xpassed"
    assert {o for n, o in res.items() if "split" in n} == {"skipped"}
    # cases failing without an entry still fail the run
    assert "failed" in res.values() and p.returncode == 1
    md = (d / "report.md").read_text()
    assert "remove the entry" in md and "https://tracker.example/issue/1" in md
    assert "'test_intel_mma[sg32-*]'" in md and "matches no case" in md  # stale entry kept in the report
    assert "matches no case" in p.stdout  # and warned by pytest


@pytest.mark.e2e
@pytest.mark.parametrize(
    "line, message",
    [
        ("test_x[a]  fail", "needs a tracker URL or a reason"),
        ("test_x[a]  flaky  https://t/1", "outcome must be one of fail, skip"),
        ("test_x[a]", "expected 'PATTERN OUTCOME"),
    ],
)
def test_malformed_expectations_are_one_line_usage_errors(tmp_path, line, message):
    exp = tmp_path / "e.txt"
    exp.write_text(line + "\n", encoding="utf-8")
    p = run_cts(CASES, "-q", "--no-report", "--expectations", str(exp))
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(err) == 1 and message in err[0] and f"{exp}:1" in err[0], p.stderr


@pytest.mark.e2e
def test_the_rerun_command_of_a_run_with_non_default_tiers_collects_the_case(tmp_path):
    """The printed rerun line carries the run's tiers, and running it finds
    and reruns exactly that case (it did not when only the opt-in tier was
    carried over)."""
    import shlex

    p = run_cts(CASES, "-q", "--no-report", "-k", "sg8 and u8_u8 and M1", "--tiers", "exact,model",
                "--emulator-fault", "acc_ignored")  # fmt: skip
    assert p.returncode == 1, p.stdout[-1500:]
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("rerun: pytest"))
    assert "--tiers exact,model" in line, line
    args = shlex.split(line.removeprefix("rerun: pytest "))
    p2 = run_cts(*args, "-q", "--no-report")
    assert p2.returncode == 1 and p2.stdout.splitlines()[-1].startswith("1 failed"), p2.stdout[-1500:]
