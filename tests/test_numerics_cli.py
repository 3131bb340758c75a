"""``python -m cts numerics``: the fingerprint table with evidence, JSON and
markdown for the report, one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _cli(*args: str, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "cts", "numerics", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.mark.e2e
def test_fingerprint_of_a_modelled_emulator(tmp_path):
    p = _cli(
        "--emulator-model", "trunc_b8_e3", "--targets", "f16:f32", "--tiles", "20", "--out", str(tmp_path)
    )
    assert p.returncode == 0, p.stderr
    rec = json.loads((tmp_path / "fingerprint.json").read_text())[0]
    assert rec["findings"]["block_structure"]["value"]["block"] == 8
    assert rec["findings"]["window"]["value"]["extra_bits"] == 3
    assert rec["model_tier"]["tiles_bit_exact"] == 20
    md = (tmp_path / "fingerprint.md").read_text()
    assert "| block_structure" in md and "deciding input" in md and "`C=2^30, p0=-2^30, p8=2^-28`" in md
    assert "8 per step, forward, C first" in p.stdout


@pytest.mark.e2e
def test_bad_input_is_one_line(tmp_path):
    for args, words in (
        (("--targets", "f16:f64"), "not offered"),
        (("--emulator-model", "nope"), "unknown --emulator-model"),
        (("--backend", "metal"), "unknown backend"),
        (("--backend", "cuda", "--targets", "f16:f32:16x8x8"), "no joint_matrix CUDA row"),
        (("--backend", "cuda", "--emulator-model", "trunc_b8_e3"), "needs --backend emulator"),
        (("--targets", "f16:f32", "--dist", "gauss", "--tiles", "2"), "unknown --dist"),
        (("--targets", "f16:f32", "--emulator-fault", "nope"), "unknown --emulator-fault"),
        (("--backend", "vulkan", "--emulator-fault", "numerics_order_drift"), "needs --backend emulator"),
    ):
        p = _cli(*args, "--out", str(tmp_path))
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and words in lines[0], (args, p.stderr)


@pytest.mark.e2e
def test_intel_builtins_through_register_images(tmp_path):
    """The Intel adapter: tiles packed into the spec's register images, run
    through the emulator's intel_mma (operand decoding and all) with a
    model, fingerprinted and recovered (the path an OpenCL device takes)."""
    p = _cli(
        "--backend", "emulator-intel", "--emulator-model", "floor_b8_e2", "--targets", "bf16:bf16",
        "--tiles", "10", "--out", str(tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads((tmp_path / "fingerprint.json").read_text())[0]
    assert "intel_sub_group_bf16_bf16_matrix_mad_k16" in rec["device"]
    m = rec["model"]
    assert (m["block"], m["extra_bits"], m["align"], m["acc_rounding"]) == (8, 2, "rd", "rd")
    assert rec["model_tier"]["tiles_bit_exact"] == 10


@pytest.mark.e2e
def test_sweep_report_gets_the_fingerprint_section(tmp_path):
    """The CLI's default folder is beside the sweep report;
    report.md / report.html then carry the fingerprint table and link the
    evidence.  Without a fingerprint the report is unchanged."""
    from cts.report.writer import write_reports

    rows = [{"nodeid": "cases/t.py::test_x[a]", "family": "float_mma", "case_id": "a", "outcome": "passed"}]
    md, page, _ = write_reports(rows, tmp_path / "plain")
    assert "Numerics fingerprint" not in md.read_text() + page.read_text()
    p = _cli(
        "--emulator-model",
        "trunc_b8_e3",
        "--targets",
        "f16:f32",
        "--tiles",
        "8",
        "--out",
        str(tmp_path / "rep" / "numerics"),
    )
    assert p.returncode == 0, p.stderr
    md, page, _ = write_reports(rows, tmp_path / "rep")
    text, html = md.read_text(), page.read_text()
    assert "## Numerics fingerprint" in text and "(numerics/fingerprint.md)" in text
    assert "| block_structure" in text and "8 per step, forward, C first" in text
    assert "random tiles bit-exact" in text and "8/8" in text
    assert '<section id="numerics">' in html and "8 per step, forward, C first" in html


@pytest.mark.e2e
def test_a_device_no_model_explains_is_said_not_modelled(tmp_path):
    """Every other tile summed in another order is a device no single
    model explains; random tiles refute the probe-inferred model and the
    fingerprint says "no model explains this device" instead of a model."""
    p = _cli(
        "--emulator-model", "trunc_b8_e3", "--emulator-fault", "numerics_order_drift",
        "--targets", "f16:f32", "--tiles", "40", "--out", str(tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads((tmp_path / "fingerprint.json").read_text())[0]
    assert rec["status"] == "unexplained", rec.get("status")
    assert rec["selection"]["candidates"] and all(
        int(c["evidence_tiles"].split("/")[0]) < 0.999 * int(c["evidence_tiles"].split("/")[1])
        for c in rec["selection"]["candidates"]
    )
    md = (tmp_path / "fingerprint.md").read_text()
    assert "No model explains this device" in md and "Best candidates" in md
    assert "unexplained" in p.stdout


@pytest.mark.e2e
def test_a_correct_model_stands(tmp_path):
    p = _cli("--emulator-model", "prod_p11", "--targets", "f16:f32", "--tiles", "40", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    rec = json.loads((tmp_path / "fingerprint.json").read_text())[0]
    assert rec["status"] in ("model", "selected"), rec.get("status")
    checks = [rec["model_tier"]] + rec["model_tier"].get("more", [])
    assert {c["dist"] for c in checks} == {"mixed", "wide", "cancel"}
    assert all(c["tiles_bit_exact"] == c["tiles"] == 40 for c in checks)
