"""The layer that erred and the one capability rule: every non-pass names
device, toolchain or suite (journal field ``layer``, terminal, reports,
JUnit); a case that runs only because of ``--assume-extension`` is forced,
reported apart and outside the exit status; a module an external tool
produced that is shown invalid makes a wrong result the tool's verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from cts.report.exit_status import record_status
from cts.report.journal import forced_of, layer_of
from cts.report.markdown import csv_text, markdown_report

ROOT = Path(__file__).resolve().parents[1]


def _rows(report_dir: Path) -> list[dict]:
    return [
        json.loads(ln)
        for f in (report_dir / "journal").rglob("*.jsonl")
        for ln in f.read_text().splitlines()
        if '"outcome"' in ln
    ]


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}


# ------------------------------------------------------------------ units
def test_the_layer_of_every_outcome():
    assert [layer_of({"outcome": o}) for o in ("failed", "crash", "timeout", "xfailed", "xpassed")] == [
        "device"
    ] * 5
    assert layer_of({"outcome": "error"}) == "suite"
    assert layer_of({"outcome": "error", "toolchain": "mlir-opt 22.1.8"}) == "toolchain"
    assert [layer_of({"outcome": o}) for o in ("passed", "skipped", "interrupted")] == ["", "", ""]
    assert layer_of({"outcome": "error", "layer": "toolchain"}) == "toolchain"  # the row's own word first
    assert forced_of({"forced": "--assume-extension x"}) == "--assume-extension x" and forced_of({}) == ""


def _row(nodeid, outcome, **kw):
    return {"nodeid": nodeid, "family": "f", "case_id": nodeid, "outcome": outcome, "reason": "r", **kw}


def test_forced_rows_are_apart_in_the_markdown_csv_and_status():
    rows = [
        _row("t[ok]", "passed"),
        _row("t[forced-bad]", "failed", forced="--assume-extension X: without it, X not supported"),
        _row("t[forced-ok]", "passed", forced="--assume-extension X: without it, X not supported"),
    ]
    md = markdown_report(rows)
    assert "Totals: passed 1, total 1" in md
    assert "Forced (run only because of --assume-extension" in md and "passed 1, failed 1, total 2" in md
    assert "## Forced: run only because of --assume-extension, not conformance verdicts (2)" in md
    assert "## Failures: device verdicts (0)" in md
    assert "### t[forced-bad] - failed (layer: device)" in md
    csv = csv_text(rows).splitlines()
    assert csv[0].endswith(",layer,forced") and any(',device,"--assume-extension X' in ln for ln in csv)
    rec = SimpleNamespace(rows=rows, unfinished=lambda: [], problems=[])
    assert record_status(rec) == (False, "")  # forced failures are no conformance verdicts
    rec.rows = [*rows, _row("t[bad]", "failed")]
    assert record_status(rec)[0] is True  # a conformance failure still is


def test_findings_are_counted_once_per_finding():
    f1, f2 = "spirv-val rejects: VulkanMemoryModel", "si8 MulAdd without MatrixASignedComponentsKHR"
    rows = [
        _row("t[a]", "passed", findings=[f1]),
        _row("t[b]", "passed", findings=[f1]),
        _row("t[c]", "error", findings=[f1, f2], toolchain="mlir-opt 22.1.8"),
    ]
    md = markdown_report(rows)
    assert "## Invalid modules from the toolchain (2 findings)" in md
    table = md[md.index("## Invalid modules") :]
    counts = {
        ln.split("|")[1].strip(): ln.split("|")[2].strip() for ln in table.splitlines() if ln.startswith("| ")
    }
    assert counts[f1] == "3" and counts[f2] == "1", counts


def _session(failed: list, errors: list = ()):
    tr = SimpleNamespace(stats={"failed": failed, "error": list(errors)})
    pm = SimpleNamespace(get_plugin=lambda name: tr if name == "terminalreporter" else None)
    config = SimpleNamespace(pluginmanager=pm)
    return SimpleNamespace(config=config, exitstatus=pytest.ExitCode.TESTS_FAILED)


@pytest.mark.parametrize(
    "fault, reports, want",
    [
        ("none", [{"cts_forced": "x"}], pytest.ExitCode.OK),
        ("a conformance failure among forced ones", [{"cts_forced": "x"}, {}], pytest.ExitCode.TESTS_FAILED),
        ("a conformance failure alone", [{}], pytest.ExitCode.TESTS_FAILED),
    ],
)
def test_only_forced_failures_leave_the_exit_status_clean(fault, reports, want):
    from cts.plugin.casejournal import pytest_sessionfinish

    s = _session([SimpleNamespace(when="call", **r) for r in reports])
    pytest_sessionfinish(s, s.exitstatus)
    assert s.exitstatus == want, fault


# --------------------------------------------- Intel's CPU runtime: forced
def _intel_or_skip():
    pytest.importorskip("pyopencl")
    from cts.backends.base import BackendError

    try:
        from cts.backends.opencl import OpenCLBackend

        OpenCLBackend("Intel").close()
    except (BackendError, ImportError) as e:
        pytest.skip(f"no Intel CPU OpenCL runtime: {e}")


def _coop(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / ("forced" if extra else "plain")
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_coop_opencl.py", "-q", "-p", "no:xdist", "-p",
        "no:cacheprovider", "--backend", "opencl", "--device", "Intel", "--coop-api", "clspv",
        "-k", "length-A16x16-f16", "--report-dir", str(out), "--junitxml", str(out / "j.xml"), *extra,
    ]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300), out


@pytest.mark.e2e
def test_assumed_extension_runs_are_forced_apart_from_conformance(tmp_path):
    """Intel's CPU runtime does not list cl_khr_cooperative_matrix: plain,
    the case is a skip naming it; under --assume-extension it runs, forced:
    its failure is the device's layer, outside the totals and exit status,
    in the report's Forced section, the CSV and JUnit."""
    _intel_or_skip()
    p, out = _coop(tmp_path)
    assert p.returncode == 0, p.stdout[-2000:]
    [row] = _rows(out)
    assert row["outcome"] == "skipped" and "cl_khr_cooperative_matrix not supported" in row["reason"]
    assert "forced" not in row and "layer" not in row
    p, out = _coop(tmp_path, "--assume-extension", "cl_khr_cooperative_matrix")
    [row] = _rows(out)
    assert row["forced"].startswith("--assume-extension cl_khr_cooperative_matrix: without it, ")
    assert row["outcome"] in ("failed", "passed"), row["outcome"]
    md = (out / "report.md").read_text()
    assert "## Forced: run only because of --assume-extension" in md and "Totals: no conformance case" in md
    assert "Forced: run only because of --assume-extension" in (out / "report.html").read_text()
    assert row["forced"][:40] in (out / "results.csv").read_text()
    props = {p.get("name"): p.get("value") for p in ET.parse(out / "j.xml").getroot().iter("property")}
    assert props["cts_forced"] == row["forced"]
    if row["outcome"] == "failed":  # this runtime without AMX: the build fails
        assert row["layer"] == "device" and props["cts_layer"] == "device"
        assert "FORCED (not a conformance verdict)" in p.stdout
    assert p.returncode == 0, p.stdout[-2000:]


# ------------------------------------ a module shown invalid: toolchain's
FINDING = "spirv-val --target-env vulkan1.3 rejects the module as produced: an injected finding"
PLUGIN = f"""
from cts.backends.emulator import EmulatorBackend

def _take(self):
    return ("mlir-opt 22.1.8", [{FINDING!r}])

EmulatorBackend.take_module_findings = _take
"""


def _mlir(tmp_path: Path, name: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    (tmp_path / "invalid_modules.py").write_text(textwrap.dedent(PLUGIN))
    env = {**_env(), "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = tmp_path / name
    cmd = [
        sys.executable, "-m", "pytest", "cases/test_mlir_mma.py", "-q", "-p", "no:xdist", "-p",
        "no:cacheprovider", "-k", "load_store-f16-padded-loadN-storeN", "--report-dir", str(out),
        "--junitxml", str(out / "j.xml"), *extra,
    ]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300), out


@pytest.mark.e2e
@pytest.mark.parametrize(
    "fault, plugin, outcome, layer",
    [
        ("mlir_lead_dimension_ignored", True, "error", "toolchain"),  # wrong result, invalid module
        ("", True, "passed", ""),  # right result, invalid module: passed, the finding kept
        ("mlir_lead_dimension_ignored", False, "failed", "device"),  # control: a valid module's wrong result
    ],
)
def test_a_wrong_result_from_an_invalid_module_is_the_toolchains(tmp_path, fault, plugin, outcome, layer):
    extra = (["-p", "invalid_modules"] if plugin else []) + (["--emulator-fault", fault] if fault else [])
    p, out = _mlir(tmp_path, "r", *extra)
    rows = _rows(out)
    assert rows and {r["outcome"] for r in rows} == {outcome}, p.stdout[-2000:]
    assert {r.get("layer", "") for r in rows} == {layer}
    md = (out / "report.md").read_text()
    if plugin:
        assert all(r["findings"] == [FINDING] for r in rows)
        table = md[md.index("## Invalid modules from the toolchain (1 findings)") :]
        assert f"| {len(rows)} " in table or f"| {len(rows)}" in table
    else:
        assert "Invalid modules" not in md
    if layer == "toolchain":
        assert all(r["toolchain"] == "mlir-opt 22.1.8" for r in rows)
        assert "TOOLCHAIN VERDICT [layer: toolchain]" in p.stdout and "wrong result" in p.stdout
        assert "## Toolchain verdicts: the compiler erred, not device verdicts" in md
        suite = ET.parse(out / "j.xml").getroot().find("testsuite")
        assert suite.get("failures") == "0" and int(suite.get("errors")) == len(rows)
    assert p.returncode == (0 if outcome == "passed" else 1)
