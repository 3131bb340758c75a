"""Append-only JSONL journal of case outcomes.

One file per process (pytest-xdist worker or controller); each line is one
complete JSON object written and flushed as soon as it is known, so a crash
of the process loses nothing already recorded (DESIGN.md "Robustness").

Line kinds:

* ``{"kind": "session", ...}``: one header per run (device, driver,
  versions, seed, command line), written by the controller.
* ``{"kind": "start", "nodeid": ...}``: written *before* a case runs.  A
  start without a later result means the process died inside that case;
  the reader turns it into a ``crash`` row (or ``timeout`` when it lasted
  longer than the per-case timeout), so a crash is never silently lost, even
  without pytest-xdist.
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

__all__ = ["Journal", "read_journals", "journal_files", "rerun_of", "OUTCOMES", "BAD_OUTCOMES"]

# passed / failed (wrong result or case error) / skipped (with reason) /
# xfailed (listed in an expectations file and failing) / xpassed (listed but
# now passing) / crash (the process died) / timeout (pytest-timeout) / error
# (the set-up of the case failed)
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "crash", "timeout", "error")
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

    def append(self, row: dict) -> None:
        self._fh.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


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
    else:
        row["outcome"] = "crash"
        row["reason"] = row.get("reason") or "the process died while running this case (no result recorded)"
    return row


def read_journals(paths: Iterable[str | os.PathLike], header: bool = False) -> list[dict]:
    """Case rows of all journals, one per node id (the newest wins).

    Malformed lines are skipped with a warning.  Cases that started but have
    no result become ``crash``/``timeout`` rows.  With ``header`` the session
    and note rows (kind "session" / "note") come first."""
    results: dict[str, dict] = {}
    starts: dict[str, dict] = {}
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
            if kind == "interrupted":  # the user stopped the sweep inside this case: not run, not a crash
                st = starts.get(nid)
                if st is not None and float(st.get("time") or 0) <= float(row.get("time") or 0):
                    del starts[nid]
                continue
            table = starts if kind == "start" else results
            old = table.get(nid)
            if old is None or float(row.get("time") or 0) >= float(old.get("time") or 0):
                table[nid] = row
    out: dict[str, dict] = {}
    for nid, row in results.items():
        st = starts.get(nid)
        if row.get("outcome") == "crash" and st is not None:
            row = _from_start(st, row)
        out[nid] = row
    for nid, st in starts.items():
        res = results.get(nid)
        if res is None or float(res.get("time") or 0) < float(st.get("time") or 0):
            out[nid] = _from_start(st, None)  # started after its last result and never ended
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
