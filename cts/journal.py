"""Append-only JSONL journal of case outcomes.

One file per process (pytest-xdist worker or controller); each line is one
complete JSON object written and flushed as soon as the case ends, so a
crash of the process loses nothing already recorded.  Journals from workers
and from separate shards are merged by ``read_journals``; the last row of a
case id wins (a resumed or rerun case replaces its earlier row).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

__all__ = ["Journal", "read_journals", "OUTCOMES"]

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "crashed", "timeout", "error")


class Journal:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")

    def append(self, row: dict) -> None:
        self._fh.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def _journal_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(p.glob("*.jsonl")))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"journal not found: {p}")
    return out


def read_journals(paths: Iterable[str | os.PathLike], header: bool = False) -> list[dict]:
    """Rows of all journals (files or folders of *.jsonl), de-duplicated by
    node id (last wins).  Malformed lines are skipped with a warning.
    ``header`` rows (kind == "session") are returned only when asked."""
    rows: dict[str, dict] = {}
    sessions: list[dict] = []
    for f in _journal_files(paths):
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise OSError(f"cannot read journal {f}: {e.strerror}") from None
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                warnings.warn(f"{f}:{n}: malformed journal line skipped ({e})", stacklevel=2)
                continue
            if row.get("kind") == "session":
                sessions.append(row)
            elif "nodeid" in row:
                rows[row["nodeid"]] = row
            else:
                warnings.warn(f"{f}:{n}: journal line without nodeid skipped", stacklevel=2)
    out = list(rows.values())
    if header:
        return sessions + out
    return out
