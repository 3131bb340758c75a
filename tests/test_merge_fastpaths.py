"""The merge's fast paths give what the slow ones give (the merge
at the end of a sweep is on its critical path).

* ``read_record`` takes a case whose one start marker and one result come
  from one process section, and that no other section holds, as that result
  (``_Section.plain``); every other case goes through the line-by-line merge.
  Random journals (several files and processes, runs sharing a run id across
  configurations, the same case in several sections, crashes, interrupted
  lines, starts after results, start markers alone) read the same with the
  fast path turned off (``_plain`` always false: the merge as it was).
* ``markdown_report`` does not sort a record's own rows again: the record's
  order is the report's.
* ``github_table`` prints what tabulate prints, or hands the table back.
"""

from __future__ import annotations

import gzip
import json
import random
import string

import pytest
from tabulate import tabulate

import cts.report.record as record_mod
from cts.report.journal import file_header, ident_key
from cts.report.markdown import github_table, markdown_report
from cts.report.record import journal_files, read_record

OUTCOMES = ["passed", "failed", "skipped", "crash", "error", "timeout"]


def _journals(rnd: random.Random, into) -> None:
    """A few journal files, each of one or two process sections."""
    idents = [{"backend": "emulator", "device": d} for d in ("a", "b")]
    runs = ["r1", "r2", "r3"]
    ids = [f"cases/test_x.py::test_x[c{i}]" for i in range(40)]
    t = 1000.0
    for f in range(rnd.randint(1, 4)):
        lines = []
        for _section in range(rnd.randint(1, 2)):
            hdr = file_header(rnd.choice(runs), rnd.choice(idents), f"gw{f}")
            hdr["time"] = t
            lines.append(hdr)
            lines.append({"kind": "session", "time": t, "backend": "emulator", "selected": 5})
            for nid in rnd.sample(ids, rnd.randint(0, 25)):
                fam = rnd.choice(["fa", "fb", None, "(none)"])  # a null family, and none at all
                base = {"nodeid": nid, "case_id": nid[-3:]} | ({"family": fam} if fam != "(none)" else {})
                for step in rnd.choices(["start", "result", "interrupted", "pair"], k=rnd.randint(1, 3)):
                    t = rnd.choice([t + 0.5, t + 1.0, t - 0.25, float(rnd.randint(1, 4))])  # ties and
                    # lines out of order between files too
                    if step in ("start", "pair"):
                        lines.append(base | {"kind": "start", "time": t, "timeout_s": 2})
                    if step in ("result", "pair"):
                        t += 0.5
                        res = base | {"outcome": rnd.choice(OUTCOMES), "time": t, "reason": f"r{t}"}
                        if rnd.random() < 0.05:  # the reader's own fields, written by someone else
                            res |= {"_run": "stale", "_cfg": "stale", "run": "stale"}
                        lines.append(res)
                    if step == "interrupted":
                        lines.append(base | {"kind": "interrupted", "time": t})
            if rnd.random() < 0.7:
                lines.append({"kind": "end", "time": t, "status": "complete", "selected": 5})
        text = "".join(json.dumps(x) + "\n" for x in lines)
        if rnd.random() < 0.2:  # an archived journal
            (into / f"main-{f}.jsonl.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (into / f"main-{f}.jsonl").write_text(text)


def _reference(paths) -> list[dict]:
    """The merged rows as the reader made them before its section index:
    every line of every section in file order into one list per case, the
    interrupted lines applied as they come, then one merge per case."""
    runs: dict[str, str] = {}
    results: dict[tuple, list] = {}
    starts: dict[tuple, list] = {}
    for f in journal_files(paths):
        for header, rows, _line, _sec in record_mod._parse_file(f)[0]:
            cfg = str(header.get("cfg") or ident_key(header["ident"]))
            run = header["run"] if runs.get(header["run"], cfg) == cfg else f"{header['run']}~{cfg}"
            runs.setdefault(run, cfg)
            for row in rows:
                kind = row.get("kind")
                if kind in ("session", "note", "end"):
                    continue
                row = {**row, "_run": run, "_cfg": cfg}
                key = (cfg, row["nodeid"])
                if kind == "interrupted":
                    starts[key] = [
                        s
                        for s in starts.get(key, [])
                        if s["_proc"] != row["_proc"] or record_mod._t(s) > record_mod._t(row)
                    ]
                else:
                    (starts if kind == "start" else results).setdefault(key, []).append(row)
    out = []
    for key in set(results) | set(starts):
        row = record_mod._merged_row(results.get(key, []), starts.get(key, []))
        if row is not None:
            row["run"], row["cfg"] = row.pop("_run", ""), row.pop("_cfg", key[0])
            row.pop("_file", None)
            row.pop("_proc", None)
            out.append(row)
    return sorted(out, key=lambda r: (str(r.get("family", "")), r["nodeid"], r["cfg"]))


@pytest.mark.parametrize("seed", range(60))
def test_the_plain_case_path_reads_as_the_line_by_line_merge(tmp_path, monkeypatch, seed):
    _journals(random.Random(seed), tmp_path)
    assert read_record([tmp_path]).rows == _reference([tmp_path])  # the merge as it was
    if seed % 2:  # read ahead, as the sweep launcher does while other shards run
        record_mod.prime(journal_files([tmp_path]))
    fast = read_record([tmp_path])
    monkeypatch.setattr(record_mod, "_plain", lambda res, st: False)
    slow = read_record([tmp_path])
    assert fast.rows == slow.rows
    assert [list(r) for r in fast.rows] == [list(r) for r in slow.rows]  # field order too
    assert fast.sessions == slow.sessions and fast.notes == slow.notes and fast.problems == slow.problems
    assert {k: (v.cfg, v.files, v.started, v.results, v.status) for k, v in fast.runs.items()} == {
        k: (v.cfg, v.files, v.started, v.results, v.status) for k, v in slow.runs.items()
    }
    texts = [f.read_text() for f in tmp_path.glob("*.jsonl")]
    texts += [gzip.decompress(f.read_bytes()).decode() for f in tmp_path.glob("*.jsonl.gz")]
    lines = [json.loads(ln) for text in texts for ln in text.splitlines()]
    assert sum(v.started for v in fast.runs.values()) == sum(r.get("kind") == "start" for r in lines)
    assert sum(v.results for v in fast.runs.values()) == sum("outcome" in r for r in lines)


def test_a_case_of_one_section_takes_the_fast_path(tmp_path, monkeypatch):
    merged = []
    whole = record_mod._merged_row
    monkeypatch.setattr(record_mod, "_merged_row", lambda res, st: merged.append(1) or whole(res, st))
    ident = {"backend": "emulator", "device": "a"}
    nid = "cases/test_y.py::test_y[only]"
    rows = [file_header("r9", ident, "main") | {"time": 1.0}, {"kind": "start", "nodeid": nid, "time": 2.0}]
    rows.append({"nodeid": nid, "outcome": "passed", "time": 3.0, "family": "fy", "_run": "x", "_cfg": "x"})
    (tmp_path / "only.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    (row,) = read_record([tmp_path / "only.jsonl"]).rows
    assert not merged  # no line-by-line merge for it
    assert (
        row["run"] == "r9"
        and row["outcome"] == "passed"
        and not {"_run", "_cfg", "_file", "_proc"} & set(row)
    )


def test_the_fast_path_is_taken_and_cannot_hide_a_second_verdict(tmp_path, monkeypatch):
    """A case in two sections (a rerun) is never taken from one of them alone."""
    ident = {"backend": "emulator", "device": "a"}
    nid = "cases/test_x.py::test_x[c1]"
    for k, outcome in ((1, "passed"), (2, "failed")):
        hdr = file_header("r1", ident, f"gw{k}") | {"time": 10.0 * k}
        rows = [hdr, {"kind": "start", "nodeid": nid, "time": 10.0 * k + 1}]
        rows.append({"nodeid": nid, "outcome": outcome, "time": 10.0 * k + 2, "family": "fa"})
        (tmp_path / f"main-{k}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    calls = []
    plain = record_mod._plain
    monkeypatch.setattr(record_mod, "_plain", lambda res, st: calls.append(1) or plain(res, st))
    (row,) = read_record([tmp_path]).rows
    assert calls, "the sections were not indexed"
    assert row["outcome"] == "failed" and row["changed"] == {"failed": 1, "passed": 1}


def test_an_interrupted_line_cancels_its_own_processs_start_marker_only(tmp_path):
    """Ctrl-C inside a case: that case was not run (no row), but an earlier
    process's start marker of it (a run that died there) still tells."""
    ident = {"backend": "emulator", "device": "a"}
    a, b = "cases/test_x.py::test_x[a]", "cases/test_x.py::test_x[b]"
    first = [file_header("r1", ident, "main") | {"time": 1.0}, {"kind": "start", "nodeid": b, "time": 2.0}]
    second = [file_header("r2", ident, "main") | {"time": 5.0}]
    second += [{"kind": "start", "nodeid": n, "time": 6.0} for n in (a, b)]
    second += [{"kind": "interrupted", "nodeid": n, "time": 7.0} for n in (a, b)]
    for name, rows in (("main-1.jsonl", first), ("main-2.jsonl", second)):
        (tmp_path / name).write_text("".join(json.dumps(x) + "\n" for x in rows))
    (row,) = read_record([tmp_path]).rows
    assert row["nodeid"] == b and row["run"] == "r1" and row["outcome"] == "interrupted"


def test_a_records_rows_are_in_the_reports_order(tmp_path):
    _journals(random.Random(7), tmp_path)
    rec = read_record([tmp_path])
    shuffled = list(rec.rows)
    random.Random(1).shuffle(shuffled)
    assert markdown_report(rec.rows, rec.sessions, rec) == markdown_report(shuffled, rec.sessions, rec)


def _cell(rnd: random.Random):
    k = rnd.random()
    if k < 0.1:
        return None
    if k < 0.2:
        return rnd.choice([True, False])
    if k < 0.4:
        return rnd.randint(-(10**6), 10**6)
    return "".join(rnd.choice(string.printable[:95]) for _ in range(rnd.randint(0, 12)))


def test_github_table_prints_what_tabulate_prints():
    rnd = random.Random(3)
    compared = 0
    for _ in range(2000):
        n = rnd.randint(1, 6)
        rows = [[_cell(rnd) for _ in range(n)] for _ in range(rnd.randint(0, 6))]
        heads = [
            "".join(rnd.choice(string.printable[:95]) for _ in range(rnd.randint(0, 8))) for _ in range(n)
        ]
        fast = github_table(rows, heads)
        if fast is not None:
            compared += 1
            assert fast == tabulate(rows, headers=heads, tablefmt="github", disable_numparse=True)
    assert compared > 1500
    for odd in ([[1.5, "a"]], [["é", "a"]], [["a\tb", "c"]], [["a"]]):  # floats, other text, short rows
        assert github_table(odd, ["x", "y"]) is None


_APART = """
import os, random, sys
from pathlib import Path
import cts.report.html as H
import cts.report.writer as M
from cts.report.aside import one_thread
from cts.report.record import read_record
sys.path.insert(0, sys.argv[1])
from test_merge_fastpaths import _journals
here = Path(sys.argv[2])
(here / "j").mkdir()
_journals(random.Random(11), here / "j")
rec = read_record([here / "j"])
assert rec.rows and one_thread()
me, built = os.getpid(), here / "matrices-by"
real = H.family_matrices
def traced(rows):
    built.write_text(str(os.getpid()))
    return real(rows)
H.family_matrices = traced
page = H.html_report
def page_traced(*a):
    (here / "page-asked").write_text("a slot" if a[3:] == (H.MATRICES_SLOT,) else "the matrices")
    return page(*a)
H.html_report = page_traced
calls = []
M.write_record(rec, here / "inline")
M._cores = lambda: 8  # no rows: no matrices child, and the same page as in line
M.write_reports([], here / "empty-inline")
M.write_reports([], here / "empty-aside", aside=True)
print("no rows:", all((here / "empty-aside" / f).read_bytes() == (here / "empty-inline" / f).read_bytes()
                      for f in ("report.md", "report.html", "results.csv")))
def boom():
    raise KeyError("in meanwhile")
try:
    M.write_record(rec, here / "boom", aside=True, meanwhile=boom)
except KeyError:
    print("meanwhile's error raised after the reports:", (here / "boom" / "report.html").exists())
for cores in (2, 8):
    M._cores = lambda c=cores: c
    built.unlink(missing_ok=True)
    M.write_record(rec, here / f"aside{cores}", aside=True, meanwhile=lambda: calls.append(os.getpid()))
    by = "this process" if built.read_text() == str(me) else "a child"
    print(cores, "cores: the page's child built", (here / "page-asked").read_text(), "; matrices by", by)
for f in ("report.md", "report.html", "results.csv"):
    a = (here / "inline" / f).read_bytes()
    print(f, all((here / d / f).read_bytes() == a for d in ("aside2", "aside8")))
print("meanwhile here, once each:", calls == [me, me])
"""


@pytest.mark.e2e
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="forked children (POSIX)")
def test_reports_built_by_children_equal_those_built_in_line(tmp_path):
    """The sweep launcher builds the markdown and the HTML page in children,
    on 4 or more cores the page's family matrices in a child of their own
    (put into the page's slot after), and writes the CSV and its durations
    table meanwhile: the files are byte for byte those built in line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    p = subprocess.run(
        [sys.executable, "-c", _APART, str(root / "tests"), str(tmp_path)],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split("\n")[:-1] == [
        "no rows: True",
        "meanwhile's error raised after the reports: True",
        "2 cores: the page's child built the matrices ; matrices by a child",
        "8 cores: the page's child built a slot ; matrices by a child",  # a child of their own
        "report.md True",
        "report.html True",
        "results.csv True",
        "meanwhile here, once each: True",
    ], p.stdout
