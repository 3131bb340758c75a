"""Reading a record: journals (files or folders) validated line by line and
merged into one verdict per configuration and case (README "The record of a
sweep"; the format is ``cts.report.journal``).

* Every line is checked (``journal.row_problem``); a bad one is a *problem*
  with ``file:line`` (``Record.problems``), never a traceback and never
  dropped silently.  Lines longer than ``MAX_LINE`` bytes are problems too.
  Files without a header are schema 1 (one configuration per folder); a
  newer schema is refused.
* Verdicts are keyed by (configuration, node id): different devices or
  options never replace each other.  For one key the newest row wins; a
  start without a result is ``crash`` (its process's fault log holds a fatal
  signal), ``timeout`` (longer than the case's limit) or ``interrupted``;
  when the runs merged disagree the case is *changed*: ``changed`` holds
  every verdict with its count and ``flaky_outcome`` / ``flaky_reason`` the
  newest one that differs.
* ``RunInfo`` tells how each run ended (its ``end`` line); a run that ended
  early is *unfinished* unless a later complete run of the same
  configuration resumed it.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cts.report.journal import (
    MAX_LINE,
    SCHEMA,
    VERDICTS,
    fault_log_of,
    ident_key,
    legacy_ident,
    row_problem,
    with_defaults,
)

_CASE_KINDS = (None, "start", "interrupted")  # the lines a file header's defaults complete
_READERS_OWN = ("changed", "run", "cfg", "flaky_outcome", "flaky_reason", "_run", "_cfg")  # never read

__all__ = ["Record", "RunInfo", "read_record", "read_journals", "journal_files", "prime"]


def journal_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The *.jsonl (and archived *.jsonl.gz) files named by ``paths`` (files,
    or folders searched recursively).  A missing path raises FileNotFoundError
    with its name."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted([*p.rglob("*.jsonl"), *p.rglob("*.jsonl.gz")]))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"journal not found: {p}")
    seen: set = set()
    uniq = []
    for f in out:  # a folder and a file in it both given: read once
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            uniq.append(f)
    return uniq


def _raw_lines(f: Path):
    """(line number, bytes or None if too long) of a journal file, read
    line by line (a huge journal is not loaded whole)."""
    try:
        fh = gzip.open(f, "rb") if f.name.endswith(".gz") else open(f, "rb")
        with fh:
            n = 0
            while True:
                line = fh.readline(MAX_LINE + 1)
                if not line:
                    return
                n += 1
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    while True:  # skip the rest of the over-long line
                        more = fh.readline(MAX_LINE)
                        if not more or more.endswith(b"\n"):
                            break
                    yield n, None
                    continue
                yield n, line
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        raise OSError(f"cannot read journal {f}: {getattr(e, 'strerror', None) or e}") from None


@dataclass
class RunInfo:
    """One run of the record (all journals that carry its run id)."""

    run: str
    cfg: str
    ident: dict
    files: list[str] = field(default_factory=list)
    session: dict | None = None
    end: dict | None = None
    start_time: float = 0.0
    results: int = 0  # result rows written by this run
    started: int = 0  # start markers written by this run
    schema: int = SCHEMA
    covered_by: str = ""  # a later complete run of the same configuration that resumed this one
    heads: list[dict] = field(default_factory=list)  # session headers (one per controller / shard)
    ends: list[dict] = field(default_factory=list)  # their end lines

    @property
    def selected(self) -> int | None:
        """Cases the run selected: summed over its sessions (shards given
        one --run-id are sessions of one run)."""
        got = [h.get("selected") for h in self.heads if isinstance(h.get("selected"), (int, float))]
        if not got:
            got = [e.get("selected") for e in self.ends if isinstance(e.get("selected"), (int, float))]
        return int(sum(got)) if got else None

    @property
    def status(self) -> str:
        """``complete`` only when every session of the run wrote a complete
        end line (a killed shard of a shared --run-id is not hidden by the
        others)."""
        if self.schema < 2:  # schema 1: one end line per folder, no sessions
            return (
                "complete"
                if self.end is not None and self.end.get("status") == "complete"
                else "unknown (schema-1 journal)"
            )
        if not self.heads:
            return "no session header (worker journals only)"
        ended = {e.get("_proc"): e for e in self.ends}
        statuses = []
        for h in self._last_per_shard():
            e = ended.get(h.get("_proc"))
            statuses.append("killed (no end record)" if e is None else str(e.get("status") or "complete"))
        bad = [st for st in statuses if st != "complete"]
        missing = self.missing_shards
        if missing:  # a shard of an N-way run that never wrote its session (a CI job that did not run)
            bad.insert(0, f"shard(s) {', '.join(missing)} missing")
        if not bad:
            return "complete"
        return bad[0] + (f" (in {len(bad)} of {len(statuses)} sessions)" if len(statuses) > 1 else "")

    def _last_per_shard(self) -> list[dict]:
        """The sessions that decide the status: every one, except that of
        the sessions of one shard (``--shard K/N`` given again with the
        run's ``--run-id`` and ``--resume``: a CI job run again) only the
        newest counts."""
        last: dict[str, dict] = {}
        out = []
        for h in self.heads:
            shard = str((h.get("options") or {}).get("shard") or "")
            if not shard:
                out.append(h)
            elif shard not in last or _t(h) >= _t(last[shard]):
                last[shard] = h
        return out + list(last.values())

    @property
    def missing_shards(self) -> list[str]:
        """``K/N`` of the shards of this run that left no session header,
        when its sessions say they are shards of N (``--shard K/N``)."""
        shards = {str((h.get("options") or {}).get("shard") or "") for h in self.heads}
        seen, ns = set(), set()
        for sh in shards:
            k, _, n = sh.partition("/")
            if k.isdigit() and n.isdigit():
                seen.add((int(k), int(n)))
                ns.add(int(n))
        if len(ns) != 1 or len(seen) != len(shards):  # unsharded, or shards of several splits
            return []
        (n,) = ns
        return [f"{k}/{n}" for k in range(1, n + 1) if (k, n) not in seen]

    @property
    def complete(self) -> bool:
        return self.status == "complete" or self.schema < 2

    @property
    def command(self) -> str:
        return str((self.session or {}).get("command") or "")


@dataclass
class Record:
    """The merged record: one row per (configuration, node id)."""

    rows: list[dict]  # by family, node id and configuration (``read_record``)
    sessions: list[dict]
    notes: list[dict]
    runs: dict[str, RunInfo]
    problems: list[str]
    configs: dict[str, dict]  # cfg -> ident

    def unfinished(self) -> list[RunInfo]:
        """Runs that ended early and that no later complete run resumed
        (a run that judged nothing and has no session header is not one)."""
        return [
            r for r in self.runs.values()
            if not r.complete and not r.covered_by and (r.session is not None or r.results or r.started)
        ]  # fmt: skip

    def changed(self) -> list[dict]:
        return [r for r in self.rows if r.get("changed")]

    def only(self, cfg: str | None) -> Record:
        """The part of the record that belongs to one configuration."""
        if cfg is None:
            return self
        keep = {k for k, v in self.runs.items() if v.cfg == cfg}
        return Record(
            [r for r in self.rows if r.get("cfg") == cfg],
            [s for s in self.sessions if s.get("run") in keep],
            [n for n in self.notes if n.get("cfg") in (cfg, "")],
            {k: v for k, v in self.runs.items() if k in keep},
            self.problems,
            {c: i for c, i in self.configs.items() if c == cfg},
        )


def _t(row: dict) -> float:
    v = row.get("time")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _fatal_signal(journal: str | None) -> str:
    """The fatal-error text the process of ``journal`` left, or ''."""
    if not journal:
        return ""
    try:
        text = fault_log_of(journal).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return text if "Fatal Python error" in text else ""


def _from_start(start: dict, crash: dict | None) -> dict:
    """A crash row for a case that started and never reported (or that the
    xdist controller reported as crashed), with the case fields of its start
    marker.  Longer than the case's timeout -> ``timeout``."""
    row = {k: v for k, v in start.items() if k != "kind"}
    for k, v in (crash or {}).items():  # the marker knows the case better than a guess from the id
        if v not in (None, "") and (k in ("outcome", "reason", "time", "worker") or not row.get(k)):
            row[k] = v
    end = (crash or {}).get("time")
    limit = start.get("timeout_s") or 0
    ran = (end - start["time"]) if end and start.get("time") else None
    row["duration"] = round(ran, 6) if ran is not None else None
    if limit and ran is not None and ran >= limit:
        row["outcome"] = "timeout"
        row["reason"] = f"killed after {ran:.1f} s (per-case timeout {limit} s); " + str(
            row.get("reason") or "process died"
        )
    elif crash is not None:
        row["outcome"] = "crash"
        row["reason"] = row.get("reason") or "the process died while running this case (no result recorded)"
    elif fatal := _fatal_signal(start.get("_file")):
        row["outcome"] = "crash"
        row["reason"] = f"the case's process died by a fatal signal while running it: {fatal[:3000]}"
    else:
        row["outcome"] = "interrupted"
        row["reason"] = (
            "in flight when the whole run ended from outside (killed, SIGTERM, a time limit): "
            "not a verdict; --resume runs it again"
        )
    return row


def _parse_file(f: Path) -> tuple[list[tuple[dict | None, list[dict], int, _Section]], list[str]]:
    """One journal file: its sections (header or None for schema 1, its
    lines completed with the header's defaults, the header's line number, the
    lines by case: ``_Section``)
    and the problems of its lines.  A pure function of the file, so a
    finished shard's journal can be read while the others run (``prime``)."""
    problems: list[str] = []
    sections: list[tuple[dict | None, list[dict], int]] = [(None, [], 1)]  # (header, rows, first line)
    name = str(f)
    loads = json.loads
    for n, raw in _raw_lines(f):
        if raw is None:
            problems.append(f"{name}:{n}: line longer than {MAX_LINE} bytes skipped")
            continue
        try:
            row = loads(raw)  # bytes: no decode and strip of its own (almost every line)
        except ValueError:
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                row = loads(text)
            except ValueError as e:
                problems.append(
                    f"{name}:{n}: not JSON ({str(e)[:80]}); a line cut by a killed process or a bad copy"
                )
                continue
        why = row_problem(row)
        if why:
            problems.append(f"{name}:{n}: {why}")
            continue
        if row.get("kind") == "journal":  # a new process's journal (files may be concatenated)
            if sections[-1][0] is None and not sections[-1][1]:
                sections[-1] = (row, [], n)
            else:
                sections.append((row, [], n))
            continue
        for k in _READERS_OWN:
            row.pop(k, None)
        row["_file"] = name  # its process's fault log lies beside it
        row["_proc"] = f"{name}#{len(sections)}"  # the process that wrote it
        sections[-1][1].append(row)
    out = []
    for header, rows, line in sections:
        if header is not None and header["schema"] > SCHEMA:
            problems.append(
                f"{name}:{line}: journal schema {header['schema']} is newer than this suite reads ({SCHEMA}); "
                f"skipped ({len(rows)} lines): update the suite to read it"
            )
            continue
        if header is not None and (header.get("defaults") or header.get("rerun_tail") is not None):
            rows = [with_defaults(r, header) if r.get("kind") in _CASE_KINDS else r for r in rows]
        out.append((header, rows, line, _Section(rows)))
    return out, problems


class _Section:
    """One process's section of a journal by case: start markers (less those an
    ``interrupted`` line cancels) and results per node id, the other lines in
    order, and the *plain* cases (``_plain``: the result is the merged row
    unless another section holds the case).  Made with the parse (in a sweep
    while the other shards run), so the merge at the end only joins."""

    __slots__ = ("starts", "results", "others", "plain", "keys", "n_started", "n_results")

    def __init__(self, rows: list[dict]):
        self.starts: dict[str, list[dict]] = {}
        self.results: dict[str, list[dict]] = {}
        self.others: list[dict] = []
        self.n_started = 0  # start markers written (a cancelled one too)
        for row in rows:
            kind = row.get("kind")
            if kind in ("session", "note", "end"):
                self.others.append(row)
            elif kind == "interrupted":  # the user stopped the sweep inside this case: not run, not a
                # crash; it cancels the start markers of its own process only
                nid = row["nodeid"]
                self.starts[nid] = [
                    s
                    for s in self.starts.get(nid, [])
                    if s.get("_proc") != row.get("_proc") or _t(s) > _t(row)
                ]
            elif kind == "start":
                self.starts.setdefault(row["nodeid"], []).append(row)
                self.n_started += 1
            else:
                self.results.setdefault(row["nodeid"], []).append(row)
        self.n_results = sum(map(len, self.results.values()))
        self.keys = self.starts.keys() | self.results.keys()  # (an interrupted case: in ``starts``)
        one = {nid: st[0] for nid, st in self.starts.items() if len(st) == 1}
        self.plain = {
            nid: r[0] for nid, r in self.results.items() if len(r) == 1 and _plain(r[0], one.get(nid))
        }


_PARSED: dict[str, tuple[tuple[int, int], tuple]] = {}  # path -> (size, mtime), _parse_file(path)


def prime(paths: Iterable[str | os.PathLike]) -> int:
    """Read journal files ahead of ``read_record`` (e.g. a finished shard's
    while the others still run): kept with their size and modification
    time, so a file that changed after is read again.  The number of files
    read."""
    n = 0
    for f in journal_files(paths):
        key, st = str(f.resolve()), f.stat()
        _PARSED[key] = ((st.st_size, st.st_mtime_ns), _parse_file(f))
        n += 1
    return n


def _parsed(f: Path) -> tuple:
    """``_parse_file(f)``, from ``prime`` when the file is unchanged since."""
    got = _PARSED.pop(str(f.resolve()), None)
    if got is not None:
        try:
            st = f.stat()
        except OSError:
            st = None
        if st is not None and got[0] == (st.st_size, st.st_mtime_ns):
            return got[1]
    return _parse_file(f)


def read_record(paths: Iterable[str | os.PathLike]) -> Record:
    """Read, validate and merge journals (files or folders)."""
    problems: list[str] = []
    runs: dict[str, RunInfo] = {}
    sessions: list[dict] = []
    notes: list[dict] = []
    legacy: dict[str, list[tuple[Path, list[dict]]]] = {}
    parsed: list[tuple[RunInfo, Path, list[dict]]] = []
    files = journal_files(paths)
    for f in files:
        sections, bad = _parsed(f)
        problems.extend(bad)
        for header, rows, _line, sec in sections:
            if header is None:
                if rows:  # schema 1: one configuration per folder
                    legacy.setdefault(str(f.parent), []).append((f, rows, sec))
                continue
            cfg = str(header.get("cfg") or ident_key(header["ident"]))
            run = header["run"]
            if run in runs and runs[run].cfg != cfg:  # one --run-id given to two configurations:
                run = f"{run}~{cfg}"  # two runs, kept apart (never one dropped)
            info = runs.setdefault(run, RunInfo(run, cfg, header["ident"]))
            parsed.append((info, f, sec))
    for folder, files in legacy.items():
        ident = legacy_ident([r for _, rows, _ in files for r in rows])
        run = "schema1:" + folder
        info = runs.setdefault(run, RunInfo(run, ident_key(ident), ident, schema=1))
        for f, _rows, sec in files:
            parsed.append((info, f, sec))

    seen: dict[str, set] = {}  # configuration -> the node ids of the sections so far
    shared: dict[str, set] = {}  # configuration -> node ids that more than one section holds
    for info, f, sec in parsed:
        if str(f) not in info.files:
            info.files.append(str(f))
        for row in sec.others:
            row["_run"], row["_cfg"] = info.run, info.cfg
            kind = row.get("kind")
            if kind == "session":
                row["run"] = info.run
                sessions.append(row)
                info.session = info.session or row
                info.heads.append(row)
            elif kind == "note":
                row["run"] = info.run
                notes.append(row)
            else:
                info.end = row
                info.ends.append(row)
        info.started += sec.n_started
        info.results += sec.n_results
        ids = seen.setdefault(info.cfg, set())
        shared.setdefault(info.cfg, set()).update(ids & sec.keys)
        ids |= sec.keys
    for info in runs.values():
        times = [_t(info.session)] if info.session else []
        info.start_time = min(times) if times else 0.0

    out: list[tuple] = []  # (family, node id, configuration, row): the order of the reports
    results: dict[tuple, list[dict]] = {}
    starts: dict[tuple, list[dict]] = {}
    for info, _f, sec in parsed:
        run, cfg = info.run, info.cfg
        alone = sec.plain.keys() - shared[cfg]
        for nid in alone:  # its one start and its own result: the row itself, no history
            row = dict(sec.plain[nid])
            del row["_file"], row["_proc"]
            row["run"], row["cfg"] = run, cfg
            out.append((_family(row), nid, cfg, row))
        for nid in sec.keys - alone:  # every other case: merged line by line over all sections
            key = (cfg, nid)
            for bucket, got in ((starts, sec.starts), (results, sec.results)):
                lst = bucket.setdefault(key, [])
                for r in got.get(nid, ()):
                    r["_run"], r["_cfg"] = run, cfg
                    lst.append(r)
    for key in starts:
        row = _merged_row(results[key], starts[key])
        if row is None:  # stopped by the user (Ctrl-C) before any result: not run
            continue
        row["run"] = row.pop("_run", "")
        row["cfg"] = row.pop("_cfg", key[0])
        row.pop("_file", None)
        row.pop("_proc", None)
        out.append((_family(row), row["nodeid"], row["cfg"], row))

    _cover(runs)
    configs = {i.cfg: i.ident for i in sorted(runs.values(), key=lambda i: (i.start_time, i.run))}
    for s in (*sessions, *notes):
        s.pop("_file", None)  # (a session keeps ``_proc``: it pairs it with its end line)
        s["cfg"] = s.pop("_cfg", "")
        s.pop("_run", None)
    # the order of the reports (``markdown_report`` relies on it where no family is null)
    out.sort(key=lambda t: t[:3])  # (family, node id, configuration) is one case: no tie
    return Record([t[3] for t in out], sessions, notes, runs, problems, configs)


def _family(row: dict) -> str:
    """The family a row is sorted by (a missing one first; a null one as the text "None")."""
    return str(row.get("family", ""))


def _merged_row(res_rows: list[dict], st_rows: list[dict]) -> dict | None:
    """The one row of a case in one configuration from its result rows and
    start markers (with ``changed`` / ``flaky_*`` where its verdicts
    differ), or None when it never got past a cancelled start."""
    if len(res_rows) == 1 and len(st_rows) == 1 and _plain(res_rows[0], st_rows[0]):
        return dict(res_rows[0])  # one start and its own result: the row itself, no history
    res = max(res_rows, key=_t, default=None)
    st = max(st_rows, key=_t, default=None)
    if res is None and st is None:
        return None
    if res is not None and (st is None or _t(res) >= _t(st)):
        row = _from_start(st, res) if res.get("outcome") == "crash" and st is not None else dict(res)
    else:
        row = _from_start(st, None)  # started after its last result and never ended
    history = _history(res_rows, st_rows)
    counts = Counter(h.get("outcome") for h in history if h.get("outcome") in VERDICTS)
    if len(counts) > 1:
        row["changed"] = dict(sorted(counts.items()))
        before = [h for h in history if h.get("outcome") in VERDICTS and h.get("outcome") != row["outcome"]]
        if before:
            last = max(before, key=_t)
            first = str(last.get("reason") or "").strip().splitlines()
            row["flaky_outcome"] = last.get("outcome")
            row["flaky_reason"] = first[0][:300] if first else ""
    return row


def _plain(res: dict, st: dict | None) -> bool:
    """A case's only result and only start marker, from one process, the
    result after the start and not a crash: what the general path makes of
    it is the result row itself (a history of one verdict)."""
    return (
        st is not None
        and res.get("outcome") != "crash"
        and res.get("_proc") is not None
        and res.get("_proc") == st.get("_proc")
        and _t(res) >= _t(st)
    )


def _history(results: list[dict], starts: list[dict]) -> list[dict]:
    """Every verdict of one case in one configuration: its result rows
    (crash rows completed from their start marker) and the start markers
    whose process died by a fatal signal before any result of its own."""
    out = []
    for r in results:
        if r.get("outcome") == "crash":
            mine = [s for s in starts if s.get("_run") == r.get("_run") and _t(s) <= _t(r)]
            st = max(mine, key=_t, default=None)
            out.append(_from_start(st, r) if st is not None else r)
        else:
            out.append(r)
    for s in starts:
        ended = any(r.get("_proc") == s.get("_proc") and _t(r) >= _t(s) for r in results)
        recorded = any(  # the xdist controller's crash row of the same run is the same crash
            r.get("_run") == s.get("_run") and r.get("outcome") in ("crash", "timeout") and _t(r) >= _t(s)
            for r in results
        )
        if not ended and not recorded and _fatal_signal(s.get("_file")):
            out.append(_from_start(s, None))
    return out


def _cover(runs: dict[str, RunInfo]) -> None:
    """Mark the unfinished runs that a later complete run of the same
    configuration resumed (directly or through a chain of resumed runs)."""
    resumed_by: dict[str, list[RunInfo]] = {}
    for info in runs.values():
        for prev in (info.session or {}).get("resumes") or []:
            resumed_by.setdefault(str(prev), []).append(info)

    def cover(run: str, seen: set) -> str:
        for nxt in resumed_by.get(run, []):
            if nxt.run in seen or nxt.cfg != runs[run].cfg:
                continue
            if nxt.complete:
                return nxt.run
            got = cover(nxt.run, seen | {nxt.run})
            if got:
                return got
        return ""

    for info in runs.values():
        if not info.complete:
            info.covered_by = cover(info.run, {info.run})


def read_journals(paths: Iterable[str | os.PathLike], header: bool = False) -> list[dict]:
    """Case rows of all journals (``read_record``), one per configuration
    and node id.  Problems are issued as warnings.  With ``header`` the
    session and note rows come first."""
    rec = read_record(paths)
    for p in rec.problems:
        warnings.warn(f"journal problem: {p}", stacklevel=2)
    return [*rec.sessions, *rec.notes, *rec.rows] if header else rec.rows
