"""Where a sweep's shards place the cases: kernel groups (the
cases one program holds stay in one shard, so a driver builds each program
once) and ``--shard-durations`` (slices balanced by a previous run's
recorded seconds).  Every split must stay disjoint and complete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cts.plugin.shard import durations_of, shard_of
from cts.report.journal import Journal, file_header
from cts.report.record import read_record
from tests.test_launch import INTEL, SMALL, _ids, sweep
from tests.test_sweep import ROOT, run_cts


# ------------------------------------------------- --shard-durations (balanced slices)
def test_balanced_slices_spread_the_slow_cases_that_the_hash_would_pile_up():
    from cts.plugin.shard import balanced_slices

    base = "cases/t.py::t"
    nids = [f"{base}[c{i}]" for i in range(400)]
    # three slow cases (a compiler that takes a minute to fail), chosen so that the hash puts them
    # all on one slice of three: what the durations must undo
    slow = [i for i in nids if shard_of(i, 3) == 1][:3]
    cost = [60.0 if i in slow else 0.01 for i in nids]
    hashed = [0.0] * 3
    for nid, c in zip(nids, cost):
        hashed[shard_of(nid, 3) - 1] += c
    assert max(hashed) > 180  # the hash: one slice gets the three minutes
    got = balanced_slices(cost, 3, base)
    assert sorted(k for i, k in zip(nids, got) if i in slow) == [1, 2, 3]  # one slow case a slice
    loads = [0.0] * 3
    for k, c in zip(got, cost):
        loads[k - 1] += c
    assert max(loads) - min(loads) <= 0.011  # the fast ones fill around them
    assert got == balanced_slices(list(cost), 3, base)  # a pure function: every slice agrees
    counts = [got.count(k) for k in (1, 2, 3)]
    assert max(counts) - min(counts) <= 2


def test_a_case_without_a_duration_costs_the_median_and_ties_rotate():
    from cts.plugin.shard import balanced_slices, unit_costs

    nids = ["f[a]", "f[b]", "f[c]", "f[new]", "f[b2]"]
    units = ["f[a]", "f[g]", "f[c]", "f[new]", "f[g]"]  # b and b2: one program (a kernel group)
    durations = {"f[a]": 1.0, "f[b]": 2.0, "f[c]": 9.0, "f[b2]": 0.5}  # f[new]: the (upper) median, 2.0
    assert unit_costs(nids, units, durations) == {"f[a]": 1.0, "f[g]": 2.5, "f[c]": 9.0, "f[new]": 2.0}
    assert unit_costs(["x[1]"], ["x[1]"], {}) == {"x[1]": 1.0}
    # equal costs: the split is even, and the odd one out goes to a slice the function decides
    extra = {balanced_slices([1.0, 1.0, 1.0], 2, f"fn{i}").count(1) for i in range(12)}
    assert extra == {1, 2}
    for n in (3, 4, 8):  # a function's costliest unit: not always slice 1
        assert {balanced_slices([5.0, 1.0], n, f"fn{i}")[0] for i in range(60)} == set(range(1, n + 1))


def test_a_kernel_group_is_exactly_the_cases_of_one_program(monkeypatch):
    """The rotate family's placement hint names the cases whose kernels
    one program holds on the OpenCL backend: the same group, the same
    program (what the backend's own ``kernel_source`` gives, on a device
    with every subgroup size; the assembler stubbed: the text is the key)."""
    from types import SimpleNamespace

    import cts.backends.opencl_rotate as orot
    from cts.families.rotate import SUBGROUP_SIZES, rotate_cases
    from reference.data import TIERS

    class Device(orot.RotateOpenCL):
        def with_prelude(self, text):
            return text

        def describe(self):
            return SimpleNamespace(subgroup_sizes=SUBGROUP_SIZES)

        def has_extension(self, name):  # cl_intel_required_subgroup_size: every size, pinned
            return True

    monkeypatch.setattr(orot, "assemble_spv13", lambda text: text.encode())
    dev = Device()
    cases = rotate_cases(TIERS)
    by_group: dict[str, set] = {}
    by_program: dict[tuple, set] = {}
    for c in cases:
        ks = dev.kernel_source_subgroup_rotate(c)
        by_group.setdefault(c.kernel_group, set()).add(c.id)
        by_program.setdefault((ks.source, ks.il, ks.options), set()).add(c.id)
    assert sorted(map(sorted, by_group.values())) == sorted(map(sorted, by_program.values()))
    assert len(by_group) < len(cases) / 3  # groups, not single cases


def test_an_intel_kernel_group_is_exactly_the_cases_of_one_program():
    from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
    from cts.kernels.opencl_c import intel_mma_kernel, intel_split_kernel, tf32_convert_kernel
    from reference.data import TIERS

    for cases, kernel in (
        (intel_mma_cases(TIERS), lambda c: intel_mma_kernel(c, 32, "/* prelude */")),
        (intel_split_cases(TIERS), lambda c: intel_split_kernel(c, 32, "/* prelude */")),
        (tf32_convert_cases(TIERS), lambda c: tf32_convert_kernel(c, 64, "/* prelude */")),
    ):
        by_group: dict[str, set] = {}
        by_text: dict[tuple, set] = {}
        for c in cases:
            ks = kernel(c)
            by_group.setdefault(c.kernel_group, set()).add(c.id)
            by_text.setdefault((ks.source, ks.options, ks.entry), set()).add(c.id)
        assert sorted(map(sorted, by_group.values())) == sorted(map(sorted, by_text.values()))
        assert len(by_group) <= len(cases) / 3


@pytest.mark.e2e
def test_shards_keep_a_kernel_group_together_and_every_case_once():
    from cts.families.rotate import rotate_cases
    from reference.data import TIERS

    group = {c.id: c.kernel_group for c in rotate_cases(TIERS)}
    rot = "cases/test_subgroup_rotate.py"
    everything = _ids(run_cts(rot, "--co", "-q"))
    parts = [_ids(run_cts(rot, "--co", "-q", "--shard", f"{k}/3")) for k in (1, 2, 3)]
    assert len(everything) == len(group) and sorted(everything) == sorted(i for p in parts for i in p)
    where: dict[str, set] = {}
    for k, p in enumerate(parts):
        for nid in p:
            where.setdefault(group[nid.split("[", 1)[1][:-1]], set()).add(k)
    assert all(len(s) == 1 for s in where.values())  # a group in one slice only
    assert all(len(p) > len(everything) / 6 for p in parts)  # still spread


@pytest.mark.e2e
def test_balanced_shards_keep_a_kernel_group_together_too(tmp_path):
    """With --shard-durations a group is placed as one unit (its cost the
    sum of its cases'): what makes each program built once."""
    from cts.families.rotate import rotate_cases
    from reference.data import TIERS

    group = {c.id: c.kernel_group for c in rotate_cases(TIERS)}
    rot = "cases/test_subgroup_rotate.py"
    everything = _ids(run_cts(rot, "--co", "-q"))
    j = Journal(tmp_path / "old" / "main-1.jsonl", file_header("old", {"backend": "emulator"}, "main"))
    for i, nid in enumerate(everything):  # costs that differ inside a group (the first case builds)
        j.append({"nodeid": nid, "family": "f", "case_id": str(i), "outcome": "passed", "time": 1.0 + i,
                  "duration": 0.5 + (i % 7) * 0.3})  # fmt: skip
    j.close()
    opts = ("--shard-durations", str(tmp_path / "old"))
    parts = [_ids(run_cts(rot, "--co", "-q", "--shard", f"{k}/3", *opts)) for k in (1, 2, 3)]
    assert sorted(everything) == sorted(i for p in parts for i in p)
    where: dict[str, set] = {}
    for k, p in enumerate(parts):
        for nid in p:
            where.setdefault(group[nid.split("[", 1)[1][:-1]], set()).add(k)
    assert all(len(s) == 1 for s in where.values())


def test_shard_durations_leave_out_the_rows_of_the_run_itself(tmp_path):
    """A run whose journals go to the folder it reads durations from: its
    shards start at different times, so its own rows would make them split
    differently (cases in two slices or none)."""
    from cts.plugin.shard import durations_of

    for run, d in (("old", 1.0), ("now", 99.0)):
        j = Journal(tmp_path / run / "main-1.jsonl", file_header(run, {"backend": "emulator"}, "main"))
        j.append({"nodeid": "cases/t.py::t[a]", "family": "f", "case_id": "a", "outcome": "passed",
                  "time": 5.0 if run == "now" else 1.0, "duration": d})  # fmt: skip
        j.close()
    assert durations_of([str(tmp_path)], "now") == {"cases/t.py::t[a]": 1.0}
    assert durations_of([str(tmp_path)], None) == {"cases/t.py::t[a]": 99.0}  # the latest row


@pytest.mark.e2e
def test_shard_durations_give_disjoint_complete_balanced_slices_through_the_launcher(tmp_path):
    everything = _ids(run_cts(INTEL, "--co", "-q", "-k", SMALL))
    assert len(everything) == 56
    slow = [i for i in everything if shard_of(i, 3) == 2][:3]  # the hash piles them on slice 2
    assert len(slow) == 3
    hdr = file_header("old", {"backend": "emulator"}, "main")
    j = Journal(tmp_path / "old" / "main-1.jsonl", hdr)
    for i, nid in enumerate(everything):
        j.append({"nodeid": nid, "family": "f", "case_id": str(i), "outcome": "passed", "time": 1.0 + i,
                  "duration": 30.0 if nid in slow else 0.01})  # fmt: skip
    j.close()
    parts = [
        _ids(run_cts(INTEL, "--co", "-q", "-k", SMALL, "--shard", f"{k}/3", "--shard-durations", str(tmp_path / "old")))
        for k in (1, 2, 3)
    ]  # fmt: skip
    assert sorted(everything) == sorted(i for p in parts for i in p)  # disjoint and complete
    assert [sum(s in p for s in slow) for p in parts] == [1, 1, 1]  # one slow case per slice
    p = sweep("-j", "3", INTEL, "-k", SMALL, "--report-dir", str(tmp_path / "s"),
              "--shard-durations", str(tmp_path / "old"))  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rec = read_record([tmp_path / "s" / "journal"])
    assert sorted(r["nodeid"] for r in rec.rows) == sorted(everything)
    where = {r["nodeid"]: Path(r["file"]).name[:9] for r in _rows_with_files(tmp_path / "s" / "journal")}
    assert sorted(where[s] for s in slow) == ["shard1of3", "shard2of3", "shard3of3"]


def _rows_with_files(folder: Path) -> list[dict]:
    out = []
    for f in folder.rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("outcome"):
                out.append({"nodeid": row["nodeid"], "file": str(f)})
    return out


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args, message",
    [
        (["--shard-durations", "tests"], "--shard-durations: only with --shard K/N"),
        (["--shard", "1/2", "--shard-durations", "no/such/journal"], "--shard-durations: journal not found"),
        (["--shard", "1/2", "--shard-durations", "cases"], "--shard-durations: no case duration in cases"),
        (["--shard", "1/2", "--shard-durations="], "--shard-durations: empty path"),
    ],
)
def test_shard_durations_bad_input_is_one_usage_line(args, message):
    p = run_cts(INTEL, "--co", "-q", *args)
    assert p.returncode == 4, p.stdout[-1500:] + p.stderr[-1500:]
    assert message in p.stderr, p.stderr[-1500:]
    assert "Traceback" not in p.stdout + p.stderr


EXTRA_CONFTEST = 'pytest_plugins = ["cts.plugin"]\n'
EXTRA_CASES = """
import pytest
from types import SimpleNamespace as NS

def six(tiers):
    return [NS(id=f"c{i}", family="demo", kernel_group=f"g{i // 2}") for i in range(6)]

@pytest.mark.parametrize("extra", ["x", "y"])
@pytest.mark.cts_cases.with_args(six)
def test_demo(case, extra, cts):
    pass
"""


@pytest.mark.e2e
def test_a_case_keeps_its_slice_when_another_parametrization_changes_its_node_id(tmp_path):
    """The node id of a case item is not always ``<function>[<case id>]``
    (here a second parametrization adds ``-x`` / ``-y``): the slice the
    prefilter chose is found by function and case, so no case is lost."""
    (tmp_path / "conftest.py").write_text(EXTRA_CONFTEST)
    (tmp_path / "test_demo.py").write_text(EXTRA_CASES)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    env["PYTHONPATH"] = str(ROOT)

    def ids(*args):
        p = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
                            "-p", "no:xdist", "--no-report", *args], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        return [ln for ln in p.stdout.splitlines() if "::" in ln]

    everything = ids()
    assert len(everything) == 12, everything
    for n in (2, 3):
        parts = [ids("--shard", f"{k}/{n}") for k in range(1, n + 1)]
        assert sorted(everything) == sorted(i for p in parts for i in p), parts
        for p in parts:  # a case's two variants and its kernel group stay together
            groups = {i.split("[", 1)[1].split("-")[0].replace("x", "").replace("y", "") for i in p}
            assert all(f"c{2 * (int(c[1]) // 2)}" in groups and f"c{2 * (int(c[1]) // 2) + 1}" in groups
                       for c in groups), p  # fmt: skip


def test_the_launcher_reads_the_durations_once_for_its_shards(tmp_path):
    """``cts sweep`` reads ``--shard-durations`` before it forks; a shard asks
    with the option's values and the run id it was given, and gets the same
    table without reading the journals again."""
    from cts.launch import _joined
    from cts.plugin.shard import _READ, durations_of, read_durations_ahead

    j = Journal(tmp_path / "old" / "main-1.jsonl", file_header("old", {"backend": "emulator"}, "main"))
    j.append({"nodeid": "cases/t.py::t[a]", "family": "f", "case_id": "a", "outcome": "passed",
              "time": 1.0, "duration": 3.0})  # fmt: skip
    j.close()
    args = _joined(
        ["cases", "--shard-durations", str(tmp_path / "old"), "--run-id", "R1"], {"--shard-durations"}
    )
    _READ.clear()
    durations_of([str(tmp_path / "old")], "R1")
    assert not _READ  # a plain shard reads for itself and keeps nothing (a later session reads afresh)
    read_durations_ahead(args, "R1")
    assert len(_READ) == 1
    got = next(iter(_READ.values()))
    (tmp_path / "old" / "main-1.jsonl").unlink()  # a shard that read the files again would fail now
    assert durations_of([str(tmp_path / "old")], "R1") is got == {"cases/t.py::t[a]": 3.0}
    _READ.clear()


@pytest.mark.e2e
def test_sweep_balance_splits_by_the_newest_earlier_run_of_the_folder(tmp_path):
    out = tmp_path / "r"
    first = sweep("-j", "2", "--balance", INTEL, "-k", SMALL, "--report-dir", str(out))
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert "no earlier run here, split by hash" in first.stdout.splitlines()[0]
    (earlier,) = [d for d in (out / "journal").iterdir()]
    second = sweep("-j", "3", "--balance", INTEL, "-k", SMALL, "--report-dir", str(out))
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    table = earlier / "durations.json"  # the first sweep's table, read instead of its journals
    assert f"balanced by {table}" in second.stdout.splitlines()[0]
    rec = read_record([out / "journal"])
    now = [s for s in rec.sessions if s.get("run") != earlier.name]
    assert len(now) == 3 and all(s["options"]["shard_durations"] == [str(table)] for s in now)
    assert durations_of([str(table)]) == durations_of([str(earlier)])  # the same seconds as the journals
    assert len(rec.rows) == 56  # every case, once: the second run's rows replace the first's
    both = sweep("-j", "2", "--balance", "--shard-durations", str(earlier), INTEL, "--report-dir", str(out))
    assert both.returncode == 2 and "--balance and --shard-durations: give one" in both.stderr
    assert "Traceback" not in both.stderr


def test_a_durations_table_is_checked_and_a_stale_one_is_not_used(tmp_path):
    from cts.plugin.shard import _READ, DURATIONS_FILE, balance_journals, durations_table, write_durations

    run = tmp_path / "journal" / "R1"
    run.mkdir(parents=True)
    ident = {"backend": "emulator", "device": "a"}
    lines = [file_header("R1", ident, "main"), {"nodeid": "t[a]", "outcome": "passed", "duration": 7.0}]
    (run / "main-1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    rows = [{"nodeid": "t[a]", "duration": 2.0}, {"nodeid": "t[b]", "duration": None}, {"nodeid": "t[c]"}]
    path = write_durations(run, "R1", rows)
    assert path == run / DURATIONS_FILE and durations_table(path) == {"t[a]": 2.0}
    assert durations_table(path, "R1") == {}  # a run never balances by its own rows
    (tmp_path / "busy" / DURATIONS_FILE).mkdir(parents=True)  # cannot be written: None, nothing left
    assert write_durations(tmp_path / "busy", "R1", rows) is None
    assert write_durations(tmp_path / "missing", "R1", rows) is None and not (tmp_path / "missing").exists()
    assert [p.name for p in (tmp_path / "busy").iterdir()] == [DURATIONS_FILE]
    args, used = balance_journals(["cases"], tmp_path / "journal", "R2")
    assert used == path and args == ["cases", "--shard-durations", str(path)]
    (run / "main-2.jsonl").write_text("{}\n")  # a resumed run wrote after the table: its journals count
    later = path.stat().st_mtime + 5
    os.utime(run / "main-2.jsonl", (later, later))
    assert balance_journals(["cases"], tmp_path / "journal", "R2")[1] == run
    _READ.clear()  # (what the launcher read ahead for its shards)
    (run / "main-1.jsonl").write_text("{}\n")  # an earlier run that recorded no duration: split by hash
    assert balance_journals(["cases"], tmp_path / "journal", "R2") == (["cases"], None)
    _READ.clear()
    for text in ("{", '{"kind": "durations", "durations": {"t[a]": -1}}', '{"durations": {}}', "[]"):
        path.write_text(text)
        with pytest.raises(pytest.UsageError, match="--shard-durations: .*durations.json"):
            durations_table(path)
