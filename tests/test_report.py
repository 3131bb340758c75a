"""Journal merging, the markdown/HTML reports, `python -m cts report` and
`python -m cts repro`."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from cts.report.html import html_report, matrix_axes
from cts.report.journal import Journal
from cts.report.markdown import markdown_report
from cts.report.record import read_journals
from cts.report.repro import find_case, write_bundle
from cts.report.writer import write_reports

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def row(nodeid: str, outcome: str = "passed", t: float = 1.0, **kw) -> dict:
    cid = nodeid.split("[")[-1].rstrip("]")
    return {"nodeid": nodeid, "family": "intel_mma", "case_id": cid, "outcome": outcome, "time": t, **kw}


def test_bad_journal_lines_are_problems_with_file_and_line_never_dropped_silently(tmp_path):
    from cts.report.record import read_record

    f = tmp_path / "gw0-1.jsonl"
    good = json.dumps(row("t::test_intel_mma[a]"))
    f.write_text(good + "\n{not json\n[1, 2]\n" + '{"outcome": "passed"}\n' + good[: len(good) // 2] + "\n")
    rec = read_record([tmp_path])
    assert [r["nodeid"] for r in rec.rows] == ["t::test_intel_mma[a]"]
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in rec.problems] == ["2", "3", "4", "5"]
    assert sum("not JSON" in p for p in rec.problems) == 2  # bad JSON, cut line
    assert ":3: not a JSON object" in rec.problems[1] and ":4: line without nodeid" in rec.problems[2]
    with pytest.warns(UserWarning, match="journal problem"):  # the compatibility reader warns
        read_journals([tmp_path])


@pytest.mark.e2e
def test_unreadable_or_missing_journals_are_one_line_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="journal not found"):
        read_journals([tmp_path / "nope.jsonl"])
    p = subprocess.run(
        [sys.executable, "-m", "cts", "report", str(tmp_path / "nope"), "--out", str(tmp_path / "o")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "journal not found" in p.stderr
    (tmp_path / "empty.jsonl").write_text("")
    p = subprocess.run(
        [sys.executable, "-m", "cts", "report", str(tmp_path / "empty.jsonl"), "--out", str(tmp_path / "o")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and "no case rows" in p.stderr


@pytest.mark.e2e
def test_archived_gzip_journals_merge_with_plain_ones_and_a_corrupt_one_is_a_one_line_error(tmp_path):
    import gzip

    (tmp_path / "a.jsonl").write_text(json.dumps(row("t::test_x[a]")) + "\n")
    (tmp_path / "b.jsonl.gz").write_bytes(
        gzip.compress((json.dumps(row("t::test_x[b]", "failed")) + "\n").encode())
    )
    rows = {r["nodeid"]: r["outcome"] for r in read_journals([tmp_path])}
    assert rows == {"t::test_x[a]": "passed", "t::test_x[b]": "failed"}
    bad = tmp_path / "c.jsonl.gz"
    bad.write_bytes(b"not gzip")
    p = subprocess.run(
        [sys.executable, "-m", "cts", "report", str(bad), "--out", str(tmp_path / "o")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "cannot read journal" in p.stderr


def test_a_start_marker_is_a_crash_only_when_its_process_died_by_a_fatal_signal(tmp_path):
    """SIGSEGV / SIGABRT inside the case leave faulthandler's text in the
    process's fault log: a device crash.  SIGKILL of the run leaves nothing:
    interrupted, not a verdict."""
    from cts.report.journal import fault_log_of

    for name, fatal in (("main-1", True), ("main-2", False)):
        j = Journal(tmp_path / f"{name}.jsonl")
        j.append({"kind": "start", **row(f"t::test_x[{name}]", t=1)})
        j.close()
        if fatal:
            fault_log_of(j.path).write_text(
                "Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
            )
    rows = {r["nodeid"]: r for r in read_journals([tmp_path])}
    assert (
        rows["t::test_x[main-1]"]["outcome"] == "crash" and "Aborted" in rows["t::test_x[main-1]"]["reason"]
    )
    assert rows["t::test_x[main-2]"]["outcome"] == "interrupted"
    # run again later (resume), the crashed case passes: flaky, with the first outcome kept
    j = Journal(tmp_path / "main-3.jsonl")
    j.append(row("t::test_x[main-1]", "passed", t=5))
    j.close()
    again = {r["nodeid"]: r for r in read_journals([tmp_path])}["t::test_x[main-1]"]
    assert (
        again["outcome"] == "passed"
        and again["flaky_outcome"] == "crash"
        and "Aborted" in again["flaky_reason"]
    )


def test_merge_newest_row_wins_and_started_cases_without_result_are_crashes(tmp_path):
    j1, j2 = Journal(tmp_path / "gw0-1.jsonl"), Journal(tmp_path / "gw1-2.jsonl")
    j1.append(row("t::test_x[a]", "failed", t=1))
    j2.append(row("t::test_x[a]", "passed", t=2))  # rerun later: replaces the failure
    j1.append({"kind": "start", **row("t::test_x[b]", t=3), "spec_row": "builtin b", "timeout_s": 0})
    j2.append({"kind": "start", **row("t::test_x[c]", t=3), "timeout_s": 5.0})
    j2.append({"nodeid": "t::test_x[c]", "outcome": "crash", "reason": "worker 'gw1' crashed", "time": 9.5})
    j1.append({"kind": "start", **row("t::test_x[d]", t=4), "family": "joint_matrix", "timeout_s": 60})
    j1.append(
        {
            "nodeid": "t::test_x[d]",
            "family": "x",
            "outcome": "crash",
            "reason": "worker 'gw0' crashed",
            "time": 5,
        }
    )
    j1.close()
    j2.close()
    rows = {r["nodeid"]: r for r in read_journals([tmp_path])}
    assert rows["t::test_x[a]"]["outcome"] == "passed"
    # b started and never ended, and its process left no fatal signal: the run was killed from outside
    assert (
        rows["t::test_x[b]"]["outcome"] == "interrupted" and rows["t::test_x[b]"]["spec_row"] == "builtin b"
    )
    assert rows["t::test_x[c]"]["outcome"] == "timeout"  # died after its 5 s limit
    assert rows["t::test_x[d]"]["outcome"] == "crash" and "gw0" in rows["t::test_x[d]"]["reason"]
    assert rows["t::test_x[d]"]["family"] == "joint_matrix"  # not the controller's guess from the test name


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _hostile_rows() -> tuple[list[dict], list[dict]]:
    axes = {"types": "bf16_bf16", "M": 2, "acc": "f32", "tier": "random"}
    rows = [
        row(
            "t::test_intel_mma[ok]", "passed", axes=axes | {"M": 1}, rule="F", max_ratio=0.02, max_error=1e-6
        ),
        row(
            "t::test_intel_mma[zero]", "passed", axes=axes | {"M": 4}, rule="F", max_ratio=0.0, max_error=0.0
        ),
        row(
            f"t::test_intel_mma[{HOSTILE}]",
            "failed",
            axes=axes,
            rule="F",
            max_ratio=7.5,
            reason="build log: " + HOSTILE,
            rerun="pytest 't::x' --device '" + HOSTILE + "'",
            spec_row=HOSTILE,
        ),  # fmt: skip
        row(
            "t::test_intel_mma[xp]",
            "xpassed",
            axes=axes | {"M": 8},
            reason="expected by e.txt:1: https://t/1",
        ),
    ]
    sess = [
        {
            "kind": "session",
            "backend": "opencl",
            "device": {"name": HOSTILE, "driver": HOSTILE},
            "command": HOSTILE,
        },
        {"kind": "note", "text": "stale entry " + HOSTILE},
    ]
    return rows, sess


def test_html_is_self_contained_and_escapes_driver_strings():
    rows, sess = _hostile_rows()
    page = html_report(rows, sess)
    p = _Tags()
    p.feed(page)
    names = [t for t, _ in p.tags]
    assert names.count("script") == 1 and "img" not in names  # only the page's own sorting script
    links = [a for _, at in p.tags for k, a in at.items() if k in ("src", "href") or k.startswith("on")]
    assert links and all(re.fullmatch(r"#[a-z-]+", a) for a in links), links  # in-page anchors only
    assert not re.search(r"url\(|@import", page, re.I) and "link" not in names and "iframe" not in names
    assert "http" not in page.replace("https://t/1", "")  # the only URL is a tracker link given as text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "svg" in names and "circle" in names  # the error plot is inline
    assert page.count("<circle") == 3  # the three Rule F cases


def test_html_report_has_matrix_plot_failures_and_environment():
    rows, sess = _hostile_rows()
    page = html_report(rows, sess)
    assert "<h3>intel_mma</h3>" in page and "M=1" in page and "M=8" in page  # matrix columns
    assert '<h2 id="device-verdicts">' in page and "remove the entry" in page
    assert "bound</text>" in page  # the bound line of the plot
    assert matrix_axes(rows) == ("M", ["types", "acc"])
    md = markdown_report(rows, sess)
    assert "Failures: device verdicts (2)" in md and "remove the entry" in md and "stale entry" in md


def test_a_family_with_many_axes_gets_a_matrix_a_person_can_read():
    """coop_matrix-like: 15 ops x 7 types x 3 uses x 3 apis x 2 layouts x 5
    tiers; columns are the type, rows at most MAX_ROWS, the rest folded."""
    from cts.report.html import MAX_ROWS

    rows = []
    for i, (op, ty, use, api, lay, tier) in enumerate(
        (op, ty, use, api, lay, tier)
        for op in [f"op{j}" for j in range(15)]
        for ty in ["bf16", "f16", "f32", "i32", "i8", "u32", "u8"]
        for use in "ABC"
        for api in ("vk", "cl", "spv")
        for lay in ("row", "col")
        for tier in ("exact", "onehot", "random", "special", "rounding")
    ):
        bad = op == "op3" and ty == "i8" and lay == "col" and tier == "random"
        axes = {"op": op, "type": ty, "use": use, "api": api, "layout": lay, "tier": tier}
        rows.append(row(f"t::test_coop[{i}]", "failed" if bad else "passed", axes=axes, family="coop_matrix"))
    col, row_axes = matrix_axes(rows)
    assert col == "type" and row_axes[:2] == ["op", "use"]
    page = html_report(rows, [])
    body = page.split("<h3>coop_matrix</h3>")[1].split("</table>")[0]
    assert 15 <= body.count("<tr>") - 1 <= MAX_ROWS
    assert (
        "folded into each cell: " in body and "tier" in body.split("folded into each cell: ")[1].split("<")[0]
    )
    red = re.findall(r'<td class="cell" style="background:#d12f2f" title="([^"]*)">(\d+)/(\d+)<', body)
    assert red and all("failed" in t for t, _, _ in red)  # the failure is not folded away
    assert sum(int(n) - int(g) for _, g, n in red) == 3 * 3  # 3 uses x 3 apis of op3 x i8, col layout, random


def test_plot_says_so_when_there_are_no_float_cases():
    page = html_report([row("t::test_x[a]", axes={"M": 1})], [])
    assert "No float cases" in page and "<svg" not in page


def test_write_reports_and_results_csv_is_sorted(tmp_path):
    rows, sess = _hostile_rows()
    paths = write_reports(list(reversed(rows)), tmp_path, sess)
    assert [p.name for p in paths] == ["report.md", "report.html", "results.csv"]
    lines = (tmp_path / "results.csv").read_text().splitlines()[1:]
    assert lines == sorted(lines) and len(lines) == 4


def test_every_failure_has_a_rerun_command_even_without_a_recorded_one():
    from cts.report.journal import rerun_of

    crash = row("cases/t.py::test_x[b c]", "crash", backend="opencl", device="Intel CPU", seed=3)
    assert (
        rerun_of(crash) == "pytest 'cases/t.py::test_x[b c]' --backend opencl --device 'Intel CPU' --seed 3"
    )
    emu = row("cases/t.py::test_x[a]", "crash", backend="emulator", device="numpy emulator", seed=1)
    assert rerun_of(emu) == "pytest 'cases/t.py::test_x[a]' --backend emulator --seed 1"
    assert rerun_of(emu | {"rerun": "pytest x --seed 9"}) == "pytest x --seed 9"
    assert "--backend opencl --device &#x27;Intel CPU&#x27; --seed 3" in html_report([crash], [])
    assert "```sh\n  pytest 'cases/t.py::test_x[b c]' --backend opencl" in markdown_report([crash], [])
    bare = {"nodeid": "cases/t.py::test_x[z]", "outcome": "crash", "time": 2.0}  # no family/backend/device
    assert "```sh\n  pytest 'cases/t.py::test_x[z]'\n  ```" in markdown_report([crash, bare], [])
    assert '<code class="rerun">pytest &#x27;cases/t.py::test_x[z]&#x27;</code>' in html_report(
        [bare, crash], []
    )


def test_html_opens_in_headless_chromium_without_errors_or_network(tmp_path):
    """The page opens in headless Chromium with no
    console message and no network request, and shows the matrices and the
    error plot; the same check catches a page with a script error and an
    external resource.  Skipped where no Chromium is installed."""
    from cts.report.browser import find_chromium, open_in_chromium

    if not find_chromium():
        pytest.skip("no Chromium here (Debian package chromium, or set CTS_CHROMIUM)")
    rows, sess = _hostile_rows()
    write_reports(rows, tmp_path, sess)
    v = open_in_chromium(tmp_path / "report.html", screenshot=tmp_path / "shot.png", size=(800, 600))
    assert v.console == [] and v.requests == [], (v.console, v.requests)
    assert "<h3>intel_mma</h3>" in v.dom and v.dom.count("<circle") == 3 and "bound</text>" in v.dom
    assert (tmp_path / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<p>x</p><img src="http://example.invalid/a.png"><script>nope();</script>', encoding="utf-8"
    )
    v = open_in_chromium(bad)
    assert any("nope is not defined" in m for m in v.console) and v.requests == [
        "http://example.invalid/a.png"
    ]


# ------------------------------------------------------------------ repro
def test_find_case_accepts_node_ids_test_names_family_names_and_bare_ids():
    cid = "sg8-i8_u8-k32-M1-acc_i32-random"  # M1: intel_mma only (split has M >= 2)
    for text in (
        f"cases/test_intel_mma.py::test_intel_mma[{cid}]",
        f"test_intel_mma[{cid}]",
        f"intel_mma[{cid}]",
        cid,
    ):
        fam, case, _ = find_case(text)
        assert fam == "intel_mma" and case.id == cid
    with pytest.raises(ValueError, match="no case"):
        find_case("intel_mma[sg9-nothing]")
    with pytest.raises(ValueError, match="exists in intel_mma, intel_split_mma"):
        find_case("sg8-i8_u8-k32-M2-acc_i32-random")
    # a real case of a family without bundles says so, not "no case"
    with pytest.raises(ValueError, match="no repro bundle support for 'test_coop_matrix'"):
        find_case("cases/test_coop_matrix.py::test_coop_matrix[anything]")


@pytest.mark.e2e
@pytest.mark.parametrize(
    "cid, rule",
    [
        ("intel_mma[sg16-f16_f16-k16-M4-acc_f32-special]", "F"),
        ("intel_split_mma[sg8-u8_i8-k32-M4-acc_i32-random]", "I"),
    ],
)
def test_repro_bundle_reruns_alone_and_catches_a_wrong_result(tmp_path, cid, rule):
    d = write_bundle(cid, tmp_path / "b", seed=3, subgroups=4)
    meta = json.loads((d / "case.json").read_text())
    assert meta["rule"] == rule and meta["seed"] == 3
    for f in (
        "A.npy",
        "B.npy",
        "C.npy",
        "a_regs.npy",
        "b_regs.npy",
        "c_regs.npy",
        "expected_bits.npy",
        "run_case.py",
    ):
        assert (d / f).exists(), f
    script = (d / "run_case.py").read_text()
    imported = {
        (n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
        for n in ast.walk(ast.parse(script))
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    assert imported <= {"argparse", "json", "sys", "pathlib", "numpy", "pyopencl"}, imported
    run = [sys.executable, str(d / "run_case.py")]
    p = subprocess.run([*run, "--bundled"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout + p.stderr
    bad = np.load(d / "expected_bits.npy").copy()
    bad[1, 0, 2] ^= np.uint64(0x400000 if rule == "F" else 0x10)  # one wrong element
    np.save(tmp_path / "bad.npy", bad)
    p = subprocess.run(
        [*run, "--actual", str(tmp_path / "bad.npy")], cwd=tmp_path, capture_output=True, text=True
    )
    assert p.returncode == 1 and "FAIL" in p.stdout and "sg 1 D[0,2] (invocation 2, component 0)" in p.stdout


@pytest.mark.e2e
def test_repro_cli_one_line_error_for_an_unknown_case(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "cts", "repro", "intel_mma[nope]", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no case" in p.stderr


def _intel_cpu_vendors() -> str | None:
    """OCL_ICD_VENDORS for the pip-installed Intel CPU runtime, if present."""
    try:
        from cts.backends.icd import register_intel_cpu_runtime

        register_intel_cpu_runtime()
    except Exception:
        return None
    import os

    return os.environ.get("OCL_ICD_VENDORS")


@pytest.mark.e2e
def test_repro_bundle_runs_on_a_real_opencl_device_with_only_pyopencl_and_numpy(tmp_path):
    """The bundled kernel (with the shipped prelude for a device without the
    built-in) rebuilt and launched by run_case.py alone on the Intel CPU
    runtime; skipped where that runtime is not installed."""
    vendors = _intel_cpu_vendors()
    if not vendors:
        pytest.skip("the Intel CPU OpenCL runtime (intel-opencl-rt) is not installed here")
    prelude = str(ROOT / "cts" / "kernels" / "intel_mma_prelude.cl")
    d = tmp_path / "b"
    p = subprocess.run(
        [sys.executable, "-m", "cts", "repro", "intel_mma[sg8-i4_u4-k64-M2-acc_i32-onehot]", "--out", str(d),
         "--subgroups", "4", "--opencl-prelude", prelude],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    meta = json.loads((d / "case.json").read_text())
    assert meta["kernel"]["entry"] and "/* --opencl-prelude" in (d / "kernel.cl").read_text()
    env = {"OCL_ICD_VENDORS": vendors, "PATH": "/usr/bin:/bin"}
    p = subprocess.run(
        [sys.executable, str(d / "run_case.py")], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    if "no OpenCL platform" in p.stderr:
        pytest.skip("no OpenCL platform loads here: " + p.stderr.strip())
    assert p.returncode == 0 and "PASS" in p.stdout and "subgroup sizes seen: [8]" in p.stdout, (
        p.stdout + p.stderr
    )


@pytest.mark.e2e
def test_repro_bundle_applies_rule_r_as_the_suite_does(tmp_path):
    """Rounding tier, default profile: the bundle accepts the value on either
    side of the exact sum (here: truncation) and nothing beyond it."""
    from reference.dtypes import etype
    from reference.mma import mma_float
    from reference.tolerance import rounding_bracket

    d = write_bundle(
        "intel_mma[sg16-bf16_bf16-k16-M4-acc_bf16-rounding]", tmp_path / "b", seed=3, subgroups=4
    )
    assert json.loads((d / "case.json").read_text())["rule"] == "R"
    t = etype("bf16")
    near, other = rounding_bracket(
        t, mma_float(np.load(d / "A.npy"), np.load(d / "B.npy"), np.load(d / "C.npy")).value
    )
    regs = np.load(d / "expected_bits.npy")  # (S, M, N) bits of the RNE result, as --actual takes them

    def verdict(values):
        bits = t.encode(values).astype(regs.dtype)
        np.save(tmp_path / "x.npy", bits)
        p = subprocess.run([sys.executable, str(d / "run_case.py"), "--actual", str(tmp_path / "x.npy")],
                           cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
        return p.returncode, p.stdout

    assert verdict(near)[0] == 0
    assert verdict(other)[0] == 0  # the other neighbour (e.g. truncation) is legal under default
    beyond = near + 2 * (other - near)  # one more step past the other neighbour
    beyond = np.where(other == near, near + t.ulp(near), beyond)
    rc, out = verdict(beyond)
    assert rc == 1 and "FAIL" in out, out[-800:]


def test_error_plot_survives_a_device_wrong_by_hundreds_of_orders_of_magnitude():
    """A wrong device's error / bound can be ~1e308 (found with the
    joint_stride_ignored fault: the report crashed with OverflowError and
    results.csv was not written)."""
    from cts.report.html import error_plot

    rows = [
        {"rule": "F", "max_ratio": r, "family": "f", "case_id": str(i), "outcome": "failed"}
        for i, r in enumerate([1.7e308, 3e-7, 0.0, float("inf"), 0.5])
    ]
    svg = error_plot(rows)
    assert svg.startswith("<svg") and svg.count("<circle") == 5
    assert 3 <= svg.count('font-size="11"') <= 14  # a dozen tick labels at most


def test_the_terminal_summary_lists_what_is_not_clean_device_verdicts_first_escapes_shown_as_question_marks():
    """``cts sweep`` and ``cts report`` print pytest's kind of short summary
    before their totals (``failure_lines``): one line per case that is not
    clean, device verdicts before what the suite could not judge, the
    reason's first line, a driver's terminal escapes never passed through."""
    from cts.report.terminal import failure_lines

    rows = [
        row("t::x[ok]"),
        row("t::x[err]", "error", reason="HARNESS ERROR (not a device verdict): spirv-as missing"),
        row("t::x[bad]", "failed", reason="D[0,1] = 3 != 4\nsecond line"),
        row("t::x[hang\x1b[2J]", "timeout", reason="\x1b[31mred\x07 " + "y" * 300),
        row("t::x[skip]", "skipped", reason="not supported"),
        row("t::x[xp]", "xpassed", reason="listed in expectations"),
        row("t::x[cut]", "interrupted"),
        row("t::x[boom]", "crash", reason=""),
    ]
    lines = failure_lines(rows)
    assert [ln.split(" ", 1)[0] for ln in lines] == [
        "FAILED",
        "CRASH",
        "TIMEOUT",
        "XPASS",
        "ERROR",
        "INTERRUPTED",
    ]
    assert lines[0] == "FAILED t::x[bad] [layer: device] - D[0,1] = 3 != 4"
    assert lines[1] == "CRASH t::x[boom] [layer: device]" and lines[5] == "INTERRUPTED t::x[cut]"
    assert lines[2].startswith("TIMEOUT t::x[hang?[2J] [layer: device] - ?[31mred? yyy") and lines[
        2
    ].endswith("...")
    assert len(lines[2].split(" - ", 1)[1]) == 160 and not any("\x1b" in ln or "\x07" in ln for ln in lines)
    assert failure_lines([row("t::x[ok]"), row("t::x[s]", "skipped")]) == []
    odd = failure_lines(
        [row("t::x[\u202eevil\u200b\u2028]", "failed", reason=None), row("t::" + "z" * 500, "crash")]
    )
    assert odd[0] == "FAILED t::x[?evil??] [layer: device]"
    assert len(odd[1]) == len("CRASH  [layer: device]") + 200 and "z..." in odd[1]
    from types import SimpleNamespace

    two = [row("t::x[a]", "failed", cfg="c1"), row("t::x[a]", "failed", cfg="c2"), row("t::x[b]", cfg="c1")]
    named = failure_lines(two, record=SimpleNamespace(configs=["c1", "c2"]))
    assert named == [
        "FAILED t::x[a] [layer: device] (config A)",
        "FAILED t::x[a] [layer: device] (config B)",
    ], named  # as the report names them
    assert failure_lines(two[:1], record=SimpleNamespace(configs=["c1"])) == [
        "FAILED t::x[a] [layer: device]"
    ]
    many = failure_lines([row(f"t::x[{i}]", "failed") for i in range(25)], limit=20)
    assert len(many) == 21 and many[-1].startswith("... 5 more not clean: report.md lists each")
