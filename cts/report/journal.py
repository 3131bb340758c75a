"""The record of a sweep: append-only JSONL journals, their format, and the
merge of many journals into one verdict per case and configuration.

docs/record.md states the rules; in short:

* **Runs.**  Every pytest run has a run id (``--run-id``, else a new one:
  UTC time + random).  Its processes (the controller and each xdist worker)
  write journals under ``<report-dir>/journal/<run id>/`` and nothing else:
  no run deletes, rewrites or appends to another run's journal.  ``--co``,
  ``--help`` and a run that selects no case write nothing.
* **Format** (``SCHEMA``).  Each journal's first line is a header
  ``{"kind": "journal", "schema": 3, "run": ..., "cfg": ..., "ident": {...}}``:
  the run and the *configuration* its verdicts belong to: the device's
  identity (backend, name, driver, version, the emulator's faults) and every
  option that changes a verdict (seed, tolerance profile, tiers, subgroups,
  preludes, assumed extensions, coop profile, ... with the content hash of
  option files).  ``cfg`` is a short hash of ``ident``.  Since schema 3
  the header also carries ``defaults`` (fields every line of the file
  shares: backend, device, driver, seed, profile, worker; a line that has
  its own value keeps it) and ``rerun_tail`` (the options of every rerun
  command: a line without ``rerun`` reruns as ``pytest <nodeid><tail>``),
  so the lines of a sweep stay short to write and to read.  Then one JSON
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
* **Merge** (``cts.report.record``): verdicts are keyed by (configuration,
  node id): the rows of different devices or options never replace each
  other; runs that disagree on a case make it *changed*.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shlex
import socket
import time
from pathlib import Path

__all__ = [
    "Journal",
    "JournalWriteError",
    "rerun_of",
    "row_problem",
    "file_header",
    "with_defaults",
    "MAX_LINE",
    "fault_log_of",
    "new_run_id",
    "check_run_id",
    "ident_key",
    "ident_label",
    "legacy_ident",
    "OUTCOMES",
    "BAD_OUTCOMES",
    "DEVICE_BAD",
    "NOT_JUDGED",
    "VERDICTS",
    "SCHEMA",
    "layer_of",
    "forced_of",
]

SCHEMA = 3  # 3: header defaults + rerun_tail; 2: run ids and configurations; 1: no header
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
# outcomes that blame a layer (cts.errors.LAYERS); passed, skipped and interrupted blame none
_BLAMED = (*DEVICE_BAD, "xfailed", "xpassed", "error")


def layer_of(row: dict) -> str:
    """The layer a case row blames: its own ``layer`` field, else (a row of
    an older journal, or a crash the reader made from a start marker) the
    layer its outcome implies: a device verdict the device's, an error the
    toolchain's where a tool is named, else the suite's; '' for a pass, a
    skip or an interrupted case."""
    outcome = row.get("outcome")
    if outcome not in _BLAMED:
        return ""
    if row.get("layer"):
        return str(row["layer"])
    if outcome == "error":
        return "toolchain" if row.get("toolchain") else "suite"
    return "device"


def forced_of(row: dict) -> str:
    """What a forced case ran on (``--assume-extension``: the device does not
    list it); '' for a conformance case."""
    return str(row.get("forced") or "")


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
        parts.append(f"faults {','.join(map(str, _listish(ident['faults'])))}")
    for k in ("seed", "profile", "subgroups"):
        if ident.get(k) not in (None, ""):
            parts.append(f"{k} {ident[k]}")
    if ident.get("tiers"):
        parts.append(f"tiers {','.join(map(str, _listish(ident['tiers'])))}")
    if ident.get("options"):
        parts.append(" ".join(map(str, _listish(ident["options"]))))
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


def file_header(
    run: str, ident: dict, worker: str, defaults: dict | None = None, rerun_tail: str = ""
) -> dict:
    """The first line of a journal file.  ``defaults`` are the fields every
    line of the file shares (left out of the lines), ``rerun_tail`` the
    options of every rerun command (``pytest <nodeid><tail>``)."""
    return {
        "kind": "journal",
        "schema": SCHEMA,
        "run": run,
        "cfg": ident_key(ident),
        "ident": ident,
        "defaults": dict(defaults or {}),
        "rerun_tail": rerun_tail,
        "worker": worker,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "time": time.time(),
    }


def with_defaults(row: dict, header: dict) -> dict:
    """A line of a schema-3 file completed with its header's defaults and
    its rerun command."""
    defaults = header.get("defaults")
    out = {**defaults, **row} if defaults else row
    if "rerun" not in out and "nodeid" in out and header.get("rerun_tail") is not None:
        out["rerun"] = f"pytest {shlex.quote(out['nodeid'])}{header['rerun_tail']}"
    return out


# ------------------------------------------------------------------ format
_STR_FIELDS = (
    "nodeid", "family", "case_id", "spec_row", "tier", "reason", "backend", "device", "driver",
    "profile", "rerun", "worker", "error", "rule", "flaky_outcome", "flaky_reason", "text", "run",
    "toolchain", "layer", "forced",
)  # fmt: skip
_NUM_FIELDS = ("duration", "max_ratio", "max_error", "time", "timeout_s")
_OBJ_FIELDS = ("axes", "verdict")


_DEFAULTABLE = ("backend", "device", "driver", "seed", "profile", "worker")
_FIELD_KIND = {
    **{k: "str" for k in _STR_FIELDS},
    **{k: "num" for k in _NUM_FIELDS},
    **{k: "obj" for k in _OBJ_FIELDS},
}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _num_ok(v) -> bool:
    """None or a number a float can hold (a 400-digit integer cannot)."""
    if v is None:
        return True
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        float(v)
    except OverflowError:
        return False
    return True


def _count_ok(v) -> bool:
    return v is None or (_num_ok(v) and math.isfinite(float(v)) and 0 <= v < 1 << 53)


def _listish(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else ([] if x in (None, "") else [x])


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
        odd = [
            k for k, v in row["ident"].items() if not isinstance(v, (str, int, float, bool, list, type(None)))
        ]
        if odd:
            return f"journal header: ident field(s) {', '.join(odd)} must be plain values or lists"
        defaults, tail = row.get("defaults", {}), row.get("rerun_tail", "")
        if not isinstance(defaults, dict) or not isinstance(tail, str):
            return "journal header: 'defaults' must be an object and 'rerun_tail' a string"
        if set(defaults) - set(_DEFAULTABLE):
            return f"journal header: 'defaults' may hold only {', '.join(_DEFAULTABLE)}"
        why = _field_problem(defaults, None)
        return f"journal header defaults: {why}" if why else None
    if kind == "session":
        if not isinstance(row.get("device", {}), dict):
            return "session header: 'device' must be an object"
        if not isinstance(row.get("tiers", []), list) or not isinstance(row.get("options", {}), dict):
            return "session header: 'tiers' must be a list and 'options' an object"
        resumes = row.get("resumes", [])
        if not isinstance(resumes, list) or not all(isinstance(r, str) for r in resumes):
            return "session header: 'resumes' must be a list of run ids"
        if not _count_ok(row.get("selected")):
            return "session header: 'selected' must be a count"
    if kind in (None, "start", "interrupted") and (
        not isinstance(row.get("nodeid"), str) or not row["nodeid"]
    ):
        return "line without nodeid"
    if kind is None and row.get("outcome") not in OUTCOMES:
        return f"unknown outcome {row.get('outcome')!r} (known: {', '.join(OUTCOMES)})"
    if kind == "end" and (not isinstance(row.get("status"), str) or not _count_ok(row.get("selected"))):
        return "end line: 'status' must be a string and 'selected' a count"
    why = _field_problem(row, kind)
    if why:
        return why
    if isinstance(row.get("time"), float) and not math.isfinite(row["time"]):
        return "field 'time' must be finite"
    return None


def _field_problem(row: dict, kind) -> str | None:
    """Type problems of a line's fields, in one pass (every line of a sweep
    is checked when it is read)."""
    for k, v in row.items():
        if v is None:
            continue
        want = _FIELD_KIND.get(k)
        if isinstance(v, str):
            if not v.isascii() and _SURROGATE.search(v):
                return f"field {k!r} holds a lone UTF-16 surrogate (not text)"
            if want == "num":
                return f"field {k!r} must be a number, got {v!r:.60}"
            if want == "obj":
                return f"field {k!r} must be an object, got str"
        elif want == "str" and not (kind == "session" and k == "device"):
            return f"field {k!r} must be a string, got {type(v).__name__}"
        elif want == "num" and not _num_ok(v):
            return f"field {k!r} must be a number, got {v!r:.60}"
        elif want == "obj" and not isinstance(v, dict):
            return f"field {k!r} must be an object, got {type(v).__name__}"
    seed = row.get("seed")
    if seed is not None and (not isinstance(seed, (int, str)) or isinstance(seed, bool)):
        return "field 'seed' must be an integer or a string"
    return None


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


def legacy_ident(rows: list[dict]) -> dict:
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
