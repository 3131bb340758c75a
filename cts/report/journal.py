"""Append-only JSONL journal of case outcomes.

One file per process (pytest-xdist worker or controller); each line is one
complete JSON object written and flushed as soon as it is known, so a crash
of the process loses nothing already recorded (DESIGN.md "Robustness").

Line kinds:

* ``{"kind": "session", ...}``: one header per run (device, driver,
  versions, seed, command line), written by the controller.
* ``{"kind": "start", "nodeid": ...}``: written *before* a case runs.  A
  start without a later result means the process ended inside that case.
  Each process also keeps a fault log beside its journal (``X.fault`` for
  ``X.jsonl``, Python's faulthandler): when it holds a fatal signal
  (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE) the case crashed its own
  process and the reader makes it a ``crash`` row with that text; when it is
  empty the whole run was killed from outside (SIGKILL, SIGTERM, a CI limit)
  and the case is ``interrupted``: not a verdict, ``--resume`` runs it
  again.  A crash the xdist controller saw (a worker died) is a ``crash``
  row of its own, or a ``timeout`` when it lasted longer than the case's
  limit.
* ``{"kind": "note", "text": ...}``: a warning of the run worth keeping in
  the report (stale expectations entry, resumed cases).
* ``{"kind": "interrupted", "nodeid": ...}``: the user interrupted the sweep
  (Ctrl-C) inside that case; it cancels the case's start marker, so the case
  is neither a crash nor done and ``--resume`` runs it again.
* case rows (no ``kind``): the outcome of one case, see ``OUTCOMES``.

Journals from xdist workers and from separate shards are merged by
``read_journals``; for one node id the newest result row wins (a resumed or
rerun case replaces its earlier row).
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import warnings
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "Journal",
    "read_journals",
    "journal_files",
    "rerun_of",
    "fault_log_of",
    "OUTCOMES",
    "BAD_OUTCOMES",
    "DEVICE_BAD",
    "NOT_JUDGED",
]

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


class Journal:
    """One process's journal file (line-buffered, flushed per row)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        if self._fh.tell() > 0:  # appending to a file a killed process left mid-line: end that line first
            with open(self.path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    self._fh.write("\n")
                    self._fh.flush()

    def watch_fatal_signals(self) -> None:
        """Keep this process's fatal-signal traceback (faulthandler) in its
        fault log, so the reader can tell a case that crashed its process
        from a run killed from outside (``_from_start``)."""
        import faulthandler

        self._fault = open(fault_log_of(self.path), "a", encoding="utf-8")
        faulthandler.enable(file=self._fault, all_threads=True)

    def append(self, row: dict) -> None:
        self._fh.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
        fault = getattr(self, "_fault", None)
        if fault is not None:
            import faulthandler

            faulthandler.disable()
            fault.close()
            self._fault = None
            log = fault_log_of(self.path)
            if log.exists() and log.stat().st_size == 0:
                log.unlink()


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
    return out


def _lines(f: Path):
    try:
        if f.name.endswith(".gz"):
            text = gzip.decompress(f.read_bytes()).decode("utf-8", errors="replace")
        else:
            text = f.read_text(encoding="utf-8", errors="replace")
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise OSError(f"cannot read journal {f}: {getattr(e, 'strerror', None) or e}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            warnings.warn(f"{f}:{n}: malformed journal line skipped ({e})", stacklevel=3)
            continue
        if row.get("kind") not in ("session", "start", "note", "interrupted") and not isinstance(
            row.get("nodeid"), str
        ):
            warnings.warn(f"{f}:{n}: journal line without nodeid skipped", stacklevel=3)
            continue
        yield row


def fault_log_of(journal: str | os.PathLike) -> Path:
    """The faulthandler log of the process that writes ``journal``."""
    p = Path(journal)
    return p.with_name(p.name.removesuffix(".gz").removesuffix(".jsonl") + ".fault")


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


def _t(row: dict) -> float:
    try:
        return float(row.get("time") or 0)
    except (TypeError, ValueError):
        return 0.0


def _earlier_crash(final: dict, results: list[dict], starts: list[dict]) -> dict | None:
    """The newest crash (or hang) of this case before its final row: a crash
    row, or a start marker whose process died by a fatal signal before any
    result of that process.  None when there is none."""
    found = [
        r
        for r in results
        if r is not final and _t(r) <= _t(final) and r.get("outcome") in ("crash", "timeout")
    ]
    for s in starts:
        if _t(s) < _t(final) and not any(
            r.get("_file") == s.get("_file") and _t(r) >= _t(s) for r in results
        ):
            if _fatal_signal(s.get("_file")):
                found.append(_from_start(s, None))
    return max(found, key=_t) if found else None


def read_journals(paths: Iterable[str | os.PathLike], header: bool = False) -> list[dict]:
    """Case rows of all journals, one per node id (the newest wins).

    Malformed lines are skipped with a warning.  Cases that started but have
    no result become ``crash`` / ``timeout`` / ``interrupted`` rows
    (``_from_start``).  A case that crashed or hung and gave another outcome
    when run again keeps the earlier one in ``flaky_outcome`` /
    ``flaky_reason``.  With ``header`` the session and note rows (kind
    "session" / "note") come first."""
    results: dict[str, list[dict]] = {}
    starts: dict[str, list[dict]] = {}
    sessions: list[dict] = []
    for f in journal_files(paths):
        for row in _lines(f):
            kind = row.get("kind")
            if kind in ("session", "note"):
                sessions.append(row)
                continue
            nid = row.get("nodeid")
            if not isinstance(nid, str):
                continue
            row["_file"] = str(f)
            if kind == "interrupted":  # the user stopped the sweep inside this case: not run, not a crash
                starts[nid] = [s for s in starts.get(nid, []) if _t(s) > _t(row)]
                continue
            (starts if kind == "start" else results).setdefault(nid, []).append(row)
    out: dict[str, dict] = {}
    for nid in set(results) | set(starts):
        res = max(results.get(nid, []), key=_t, default=None)
        st = max(starts.get(nid, []), key=_t, default=None)
        if res is None and st is None:  # stopped by the user (Ctrl-C) before any result: not run
            continue
        if res is not None and (st is None or _t(res) >= _t(st)):
            row = _from_start(st, res) if res.get("outcome") == "crash" and st is not None else dict(res)
            before = _earlier_crash(res, results.get(nid, []), starts.get(nid, []))
            if before is not None and before.get("outcome") != row.get("outcome"):
                first = str(before.get("reason") or "").strip().splitlines()
                row["flaky_outcome"] = before.get("outcome")
                row["flaky_reason"] = first[0][:300] if first else ""
        else:
            row = _from_start(st, None)  # started after its last result and never ended
        row.pop("_file", None)
        out[nid] = row
    rows = sorted(out.values(), key=lambda r: (str(r.get("family", "")), r["nodeid"]))
    return sessions + rows if header else rows


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
