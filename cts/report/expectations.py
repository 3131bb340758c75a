"""Expectations files: known failures (and deliberate skips) of one device or
driver, each with a mandatory tracker URL or reason.

Modelled on the dEQP waiver files and the WebGPU CTS / array-api-tests
expectation lists (peer-suites.md A.7, F.1, F.2): a listed failure is
reported as ``xfailed``; a listed case that now passes is reported as
``xpassed`` and flagged in the report ("remove the entry"); an entry that
matches no collected case is warned about (stale entry).

Format, one entry per line, ``#`` starts a comment::

    PATTERN   OUTCOME   TRACKER-URL-OR-REASON
    test_intel_mma[sg16-bf16_bf16-k16-M*-acc_bf16-rounding]  fail  https://tracker.example/123
    intel_split_mma[*]                                         skip  split pairing not wired up

PATTERN is matched against the node id, the test name (``test_x[id]``) and
``family[case id]``; only ``*`` (any run of characters) and ``?`` are
wildcards, so the brackets of pytest ids need no escaping.  OUTCOME is
``fail`` or ``skip``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Entry", "parse_expectations", "load_expectations", "match"]

KINDS = ("fail", "skip")


@dataclass(frozen=True)
class Entry:
    pattern: str
    kind: str  # "fail" | "skip"
    reason: str  # tracker URL or text, never empty
    source: str  # "FILE:LINE"

    @property
    def regex(self) -> re.Pattern:
        body = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in self.pattern)
        return re.compile(body + r"\Z")

    def matches(self, names: tuple[str, ...]) -> bool:
        rx = self.regex
        return any(rx.match(n) for n in names)


def parse_expectations(text: str, source: str = "<text>") -> list[Entry]:
    """Entries of one file.  A malformed entry raises ValueError with
    ``FILE:LINE`` and what is wrong (one line)."""
    out: list[Entry] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        parts = line.split(None, 2)
        where = f"{source}:{n}"
        if len(parts) < 2:
            raise ValueError(f"{where}: expected 'PATTERN OUTCOME TRACKER-URL-OR-REASON', got {line!r}")
        pattern, kind = parts[0], parts[1].lower()
        if kind not in KINDS:
            raise ValueError(f"{where}: outcome must be one of {', '.join(KINDS)}, got {parts[1]!r}")
        reason = parts[2].strip() if len(parts) > 2 else ""
        if not reason:
            raise ValueError(f"{where}: entry {pattern!r} needs a tracker URL or a reason")
        out.append(Entry(pattern, kind, reason, where))
    return out


def load_expectations(paths: list[str | os.PathLike]) -> list[Entry]:
    """Entries of all files; unreadable files raise ValueError (one line)."""
    out: list[Entry] = []
    for p in paths:
        p = Path(p)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot read expectations file {p}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ValueError(
                f"cannot read expectations file {p}: not UTF-8 text ({e.reason} at byte {e.start})"
            ) from None
        out.extend(parse_expectations(text, str(p)))
    return out


def match(entries: list[Entry], names: tuple[str, ...]) -> Entry | None:
    """The entry that applies to a case known by ``names``: the last matching
    entry of the files (later, more specific lines override earlier ones)."""
    hit = None
    for e in entries:
        if e.matches(names):
            hit = e
    return hit
