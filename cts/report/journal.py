"""The record of a sweep: append-only JSONL journals, their format, and the
merge of many journals into one verdict per case and configuration.

README "The record of a sweep" states the rules; in short:

* **Runs.**  Every pytest run has a run id (``--run-id``, else a new one:
  UTC time + random).  Its processes (the controller and each xdist worker)
  write journals under ``<report-dir>/journal/<run id>/`` and nothing else:
  no run deletes, rewrites or appends to another run's journal.  ``--co``,
  ``--help`` and a run that selects no case write nothing.
* **Format** (``SCHEMA``).  Each journal's first line is a header
  ``{"kind": "journal", "schema": 2, "run": ..., "cfg": ..., "ident": {...}}``:
  the run and the *configuration* its verdicts belong to: the device's
  identity (backend, name, driver, version, the emulator's faults) and every
  option that changes a verdict (seed, tolerance profile, tiers, subgroups,
  preludes, assumed extensions, coop profile, ... with the content hash of
  option files).  ``cfg`` is a short hash of ``ident``.  Then one JSON
  object per line, flushed as soon as known, so a killed process loses
  nothing already recorded:

  - ``{"kind": "session", ...}``: the controller's run header (device,
    versions, command line, ``selected``: the number of cases the run
    selected, ``resumes``: the runs it continues);
  - ``{"kind": "start", "nodeid": ...}``: written *before* a case runs.  A
    start without a later result means the process ended inside that case:
    ``crash`` when the process's fault log (``X.fault`` beside ``X.jsonl``,
    Python's faulthandler) holds a fatal signal, else ``interrupted`` (the
    whole run was killed from outside: not a verdict, ``--resume`` runs it
    again); longer than the case's limit -> ``timeout``;
  - ``{"kind": "interrupted", "nodeid": ...}``: Ctrl-C inside that case
    (cancels its start marker: the case is not run);
  - ``{"kind": "note", "text": ...}``: a warning kept for the report;
  - ``{"kind": "end", "status": ..., "selected": N}``: the controller's last
    line: ``complete``, ``interrupted`` (Ctrl-C) or ``stopped: why``.  A run
    with a session header and no end line was killed;
  - case rows (no ``kind``): the outcome of one case, see ``OUTCOMES``.

  Files without a header are schema 1 (journals written before run ids):
  they are read, one configuration per folder.  A newer schema is refused
  with a problem, not guessed at.
* **Reading never trusts a journal.**  Every line is validated (JSON object,
  known kind, known outcome, field types); a bad line is a *problem* with
  ``file:line`` (``Record.problems``), shown in the report and counted,
  never a traceback and never dropped silently.  Lines longer than
  ``MAX_LINE`` bytes are problems too.
* **Merge.**  Verdicts are keyed by (configuration, node id): the rows of
  different devices or options never replace each other.  For one key the
  newest row wins; when the same case got different verdicts in the runs
  merged it is *changed*: ``changed`` holds every verdict with its count and
  ``flaky_outcome`` / ``flaky_reason`` the newest one that differs.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import secrets
import shlex
import socket
import time
import warnings
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Journal",
    "JournalWriteError",
    "Record",
    "RunInfo",
    "read_record",
    "read_journals",
    "journal_files",
    "rerun_of",
    "fault_log_of",
    "new_run_id",
    "check_run_id",
    "ident_key",
    "ident_label",
    "OUTCOMES",
    "BAD_OUTCOMES",
    "DEVICE_BAD",
    "NOT_JUDGED",
    "VERDICTS",
    "SCHEMA",
]

SCHEMA = 2
MAX_LINE = 4 << 20  # bytes: a longer journal line is a problem, not a MemoryError

# Three kinds of outcome that never mix (README "Outcomes"):
# * device verdicts: passed / failed (wrong result, or the driver refused or
#   failed a case it claims) / crash (the case's own process died by a fatal
#   signal) / timeout (the case hung past its limit); xfailed / xpassed are
#   verdicts matched against an expectations file;
# * skipped, with the reason (the device does not claim it, or the suite does
#   not realize it here);
# * not judged: error (the harness could not judge: a host tool missing or
#   failing, a suite defect, a failed set-up) and interrupted (the whole run
#   died while the case ran: SIGKILL, SIGTERM, a CI limit; ``--resume`` runs
#   it again).
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "crash", "timeout", "error", "interrupted")
DEVICE_BAD = ("failed", "crash", "timeout")
NOT_JUDGED = ("error", "interrupted")
BAD_OUTCOMES = ("failed", "crash", "timeout", "error")
VERDICTS = tuple(o for o in OUTCOMES if o not in NOT_JUDGED)
KINDS = ("journal", "session", "start", "note", "interrupted", "end")

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


def new_run_id() -> str:
    """A fresh run id: UTC start time (sorts in run order) + 6 random hex."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def check_run_id(text: str) -> str:
    """``text`` if it is a usable run id (a folder name), else ValueError."""
    if not _RUN_ID.fullmatch(str(text)):
        raise ValueError(
            f"--run-id {text!r}: use 1-80 letters, digits, '.', '_' or '-' (starting with a letter or digit)"
        )
    return str(text)


def ident_key(ident: dict) -> str:
    """The short, stable key of a configuration (``ident``)."""
    blob = json.dumps(ident, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def ident_label(ident: dict) -> str:
    """One line naming a configuration for a person."""
    if not ident:
        return "(no configuration recorded)"
    dev = ident.get("device") or "?"
    parts = [f"{ident.get('backend') or '?'} / {dev}"]
    if ident.get("driver"):
        parts.append(f"driver {ident['driver']}")
    if ident.get("version"):
        parts.append(f"version {ident['version']}")
    if ident.get("faults"):
        parts.append(f"faults {','.join(map(str, ident['faults']))}")
    for k in ("seed", "profile", "subgroups"):
        if ident.get(k) not in (None, ""):
            parts.append(f"{k} {ident[k]}")
    if ident.get("tiers"):
        parts.append(f"tiers {','.join(map(str, ident['tiers']))}")
    if ident.get("options"):
        parts.append(" ".join(map(str, ident["options"])))
    if ident.get("schema") == 1:
        parts.append("(schema-1 journal)")
    return ", ".join(parts)


# ------------------------------------------------------------------ writing
class JournalWriteError(OSError):
    """A journal line could not be written (disk full, file-size limit, the
    folder removed): the run stops with this one-line message; every line
    written before stays."""


class Journal:
    """One process's journal file of one run (flushed per row).

    ``header`` (the ``kind: journal`` line) is written first when the file
    is new.  Nothing is created before the first ``append``."""

    def __init__(self, path: str | os.PathLike, header: dict | None = None):
        self.path = Path(path)
        self.header = header
        self._fh = None
        self._fault = None

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
            if self._fh.tell() > 0:  # appending to a file a killed process left mid-line: end that line
                with open(self.path, "rb") as f:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        self._fh.write("\n")
            elif self.header is not None:
                self._fh.write(_dumps(self.header) + "\n")
            self._fh.flush()
        except OSError as e:
            raise JournalWriteError(f"cannot write the journal {self.path}: {e.strerror or e}") from None

    def watch_fatal_signals(self) -> None:
        """Keep this process's fatal-signal traceback (faulthandler) in its
        fault log, so the reader can tell a case that crashed its process
        from a run killed from outside (``_from_start``)."""
        import faulthandler

        if self._fault is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fault = open(fault_log_of(self.path), "a", encoding="utf-8")
        except OSError as e:
            raise JournalWriteError(
                f"cannot write the fault log beside {self.path}: {e.strerror or e}"
            ) from None
        faulthandler.enable(file=self._fault, all_threads=True)

    def append(self, row: dict) -> None:
        if self._fh is None:
            self._open()
        try:
            self._fh.write(_dumps(row) + "\n")
            self._fh.flush()
        except OSError as e:
            raise JournalWriteError(f"cannot write the journal {self.path}: {e.strerror or e}") from None

    @property
    def opened(self) -> bool:
        return self._fh is not None

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
            self._fh = None
        fault = self._fault
        if fault is not None:
            import faulthandler

            faulthandler.disable()
            fault.close()
            self._fault = None
            log = fault_log_of(self.path)
            if log.exists() and log.stat().st_size == 0:
                log.unlink()


def _dumps(row: dict) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def fault_log_of(journal: str | os.PathLike) -> Path:
    """The faulthandler log of the process that writes ``journal``."""
    p = Path(journal)
    return p.with_name(p.name.removesuffix(".gz").removesuffix(".jsonl") + ".fault")


def file_header(run: str, ident: dict, worker: str) -> dict:
    return {
        "kind": "journal",
        "schema": SCHEMA,
        "run": run,
        "cfg": ident_key(ident),
        "ident": ident,
        "worker": worker,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "time": time.time(),
    }


# ------------------------------------------------------------------ reading
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


_STR_FIELDS = (
    "nodeid", "family", "case_id", "spec_row", "tier", "reason", "backend", "device", "driver",
    "profile", "rerun", "worker", "error", "rule", "flaky_outcome", "flaky_reason", "text", "run",
)  # fmt: skip
_NUM_FIELDS = ("duration", "max_ratio", "max_error", "time", "timeout_s")
_OBJ_FIELDS = ("axes", "verdict")


def _num_ok(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def row_problem(row) -> str | None:
    """Why a parsed journal line cannot be used, or None."""
    if not isinstance(row, dict):
        return f"not a JSON object ({type(row).__name__})"
    kind = row.get("kind")
    if kind is not None and kind not in KINDS:
        return f"unknown line kind {kind!r}"
    if kind == "journal":
        if not isinstance(row.get("schema"), int) or isinstance(row.get("schema"), bool):
            return "journal header without an integer schema"
        if not isinstance(row.get("run"), str) or not isinstance(row.get("ident"), dict):
            return "journal header without run id or ident object"
        return None
    if kind == "session":
        if not isinstance(row.get("device", {}), dict):
            return "session header: 'device' must be an object"
        if not isinstance(row.get("tiers", []), list) or not isinstance(row.get("options", {}), dict):
            return "session header: 'tiers' must be a list and 'options' an object"
        if not isinstance(row.get("resumes", []), list) or not _num_ok(row.get("selected")):
            return "session header: 'resumes' must be a list and 'selected' a number"
    if kind in (None, "start", "interrupted") and (
        not isinstance(row.get("nodeid"), str) or not row["nodeid"]
    ):
        return "line without nodeid"
    if kind is None and row.get("outcome") not in OUTCOMES:
        return f"unknown outcome {row.get('outcome')!r} (known: {', '.join(OUTCOMES)})"
    if kind == "end" and (not isinstance(row.get("status"), str) or not _num_ok(row.get("selected"))):
        return "end line: 'status' must be a string and 'selected' a number"
    for k in _STR_FIELDS:
        v = row.get(k)
        if kind == "session" and k == "device":
            continue
        if v is not None and not isinstance(v, str):
            return f"field {k!r} must be a string, got {type(v).__name__}"
    for k in _NUM_FIELDS:
        if not _num_ok(row.get(k)):
            return f"field {k!r} must be a number, got {row.get(k)!r:.60}"
    for k in _OBJ_FIELDS:
        v = row.get(k)
        if v is not None and not isinstance(v, dict):
            return f"field {k!r} must be an object, got {type(v).__name__}"
    if not isinstance(row.get("seed", 0), (int, str)) or isinstance(row.get("seed"), bool):
        return "field 'seed' must be an integer or a string"
    if isinstance(row.get("time"), float) and not math.isfinite(row["time"]):
        return "field 'time' must be finite"
    return None


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
    schema: int = SCHEMA
    covered_by: str = ""  # a later complete run of the same configuration that resumed this one

    @property
    def selected(self) -> int | None:
        for src in (self.end, self.session):
            if src and isinstance(src.get("selected"), (int, float)):
                return int(src["selected"])
        return None

    @property
    def status(self) -> str:
        if self.end is not None:
            return str(self.end.get("status") or "complete")
        if self.schema < SCHEMA:
            return "unknown (schema-1 journal)"
        if self.session is None:
            return "no session header (worker journals only)"
        return "killed (no end record)"

    @property
    def complete(self) -> bool:
        return self.status == "complete" or self.schema < SCHEMA

    @property
    def command(self) -> str:
        return str((self.session or {}).get("command") or "")


@dataclass
class Record:
    """The merged record: one row per (configuration, node id)."""

    rows: list[dict]
    sessions: list[dict]
    notes: list[dict]
    runs: dict[str, RunInfo]
    problems: list[str]
    configs: dict[str, dict]  # cfg -> ident

    def unfinished(self) -> list[RunInfo]:
        """Runs that ended early and that no later complete run resumed."""
        return [r for r in self.runs.values() if not r.complete and not r.covered_by]

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


def _legacy_ident(rows: list[dict]) -> dict:
    """The configuration of a schema-1 folder: from its session header, else
    from its first case row that names a device."""
    for r in rows:
        if r.get("kind") == "session":
            dev = r.get("device") or {}
            return {
                "schema": 1, "backend": r.get("backend"), "device": dev.get("name"),
                "driver": dev.get("driver"), "version": dev.get("version"),
                "seed": str(r.get("seed")), "profile": r.get("profile") or "default",
            }  # fmt: skip
    for r in rows:
        if r.get("device"):
            return {
                "schema": 1, "backend": r.get("backend"), "device": r.get("device"),
                "driver": r.get("driver"), "seed": str(r.get("seed")), "profile": r.get("profile") or "default",
            }  # fmt: skip
    return {"schema": 1}


def read_record(paths: Iterable[str | os.PathLike]) -> Record:
    """Read, validate and merge journals (files or folders)."""
    problems: list[str] = []
    runs: dict[str, RunInfo] = {}
    sessions: list[dict] = []
    notes: list[dict] = []
    legacy: dict[str, list[tuple[Path, list[dict]]]] = {}
    parsed: list[tuple[RunInfo, Path, list[dict]]] = []
    for f in journal_files(paths):
        rows: list[dict] = []
        header = None
        for n, raw in _raw_lines(f):
            where = f"{f}:{n}"
            if raw is None:
                problems.append(f"{where}: line longer than {MAX_LINE} bytes skipped")
                continue
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                row = json.loads(text)
            except ValueError as e:
                problems.append(
                    f"{where}: not JSON ({str(e)[:80]}); a line cut by a killed process or a bad copy"
                )
                continue
            why = row_problem(row)
            if why:
                problems.append(f"{where}: {why}")
                continue
            if row.get("kind") == "journal":
                if header is None and not rows:
                    header = row
                else:
                    problems.append(f"{where}: a second journal header inside one file")
                continue
            row["_file"] = str(f)
            rows.append(row)
        if header is not None and header["schema"] > SCHEMA:
            problems.append(
                f"{f}: journal schema {header['schema']} is newer than this suite reads ({SCHEMA}); "
                f"file skipped ({len(rows)} lines): update the suite to read it"
            )
            continue
        if header is None:  # schema 1: one configuration per folder
            legacy.setdefault(str(f.parent), []).append((f, rows))
            continue
        info = runs.setdefault(
            header["run"],
            RunInfo(header["run"], str(header.get("cfg") or ident_key(header["ident"])), header["ident"]),
        )
        if info.cfg != str(header.get("cfg") or ident_key(header["ident"])):
            problems.append(f"{f}: run {header['run']} is recorded under two configurations; file skipped")
            continue
        parsed.append((info, f, rows))
    for folder, files in legacy.items():
        ident = _legacy_ident([r for _, rows in files for r in rows])
        run = "schema1:" + folder
        info = runs.setdefault(run, RunInfo(run, ident_key(ident), ident, schema=1))
        for f, rows in files:
            parsed.append((info, f, rows))

    results: dict[tuple, list[dict]] = {}
    starts: dict[tuple, list[dict]] = {}
    for info, f, rows in parsed:
        info.files.append(str(f))
        for row in rows:
            kind = row.get("kind")
            row["_run"], row["_cfg"] = info.run, info.cfg
            if kind == "session":
                row["run"] = info.run
                sessions.append(row)
                info.session = info.session or row
                continue
            if kind == "note":
                notes.append(row)
                continue
            if kind == "end":
                info.end = row
                continue
            key = (info.cfg, row["nodeid"])
            if kind == "interrupted":  # the user stopped the sweep inside this case: not run, not a crash
                starts[key] = [s for s in starts.get(key, []) if _t(s) > _t(row)]
                continue
            if kind == "start":
                starts.setdefault(key, []).append(row)
            else:
                results.setdefault(key, []).append(row)
                info.results += 1
    for info in runs.values():
        times = [_t(info.session)] if info.session else []
        info.start_time = min(times) if times else 0.0

    out: list[dict] = []
    for key in set(results) | set(starts):
        res_rows, st_rows = results.get(key, []), starts.get(key, [])
        res = max(res_rows, key=_t, default=None)
        st = max(st_rows, key=_t, default=None)
        if res is None and st is None:  # stopped by the user (Ctrl-C) before any result: not run
            continue
        if res is not None and (st is None or _t(res) >= _t(st)):
            row = _from_start(st, res) if res.get("outcome") == "crash" and st is not None else dict(res)
        else:
            row = _from_start(st, None)  # started after its last result and never ended
        history = _history(res_rows, st_rows)
        counts = Counter(h.get("outcome") for h in history if h.get("outcome") in VERDICTS)
        if len(counts) > 1:
            row["changed"] = dict(sorted(counts.items()))
            before = [
                h for h in history if h.get("outcome") in VERDICTS and h.get("outcome") != row["outcome"]
            ]
            if before:
                last = max(before, key=_t)
                first = str(last.get("reason") or "").strip().splitlines()
                row["flaky_outcome"] = last.get("outcome")
                row["flaky_reason"] = first[0][:300] if first else ""
        row["run"] = row.pop("_run", "")
        row["cfg"] = row.pop("_cfg", key[0])
        row.pop("_file", None)
        out.append(row)

    _cover(runs)
    configs = {i.cfg: i.ident for i in sorted(runs.values(), key=lambda i: (i.start_time, i.run))}
    for s in (*sessions, *notes):
        s.pop("_file", None)
        s["cfg"] = s.pop("_cfg", "")
        s.pop("_run", None)
    out.sort(key=lambda r: (str(r.get("family", "")), r["nodeid"], r["cfg"]))
    return Record(out, sessions, notes, runs, problems, configs)


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
        ended = any(r.get("_file") == s.get("_file") and _t(r) >= _t(s) for r in results)
        if not ended and _fatal_signal(s.get("_file")):
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


def rerun_of(row: dict) -> str:
    """The rerun command of a case row: the one recorded by the plugin, else
    (a row written without it, e.g. by the xdist controller for a case
    whose start marker was lost) one rebuilt from the node id, backend,
    device and seed, so every failure of a report can be rerun."""
    if row.get("rerun"):
        return str(row["rerun"])
    parts = ["pytest", str(row.get("nodeid", ""))]
    for opt, key in (("--backend", "backend"), ("--device", "device"), ("--seed", "seed")):
        if row.get(key) not in (None, "") and not (key == "device" and row.get("backend") == "emulator"):
            parts += [opt, str(row[key])]
    return " ".join(shlex.quote(p) for p in parts)
