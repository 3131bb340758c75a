"""What the command line prints about a merged record beyond its totals:
the short summary of the cases that are not clean (``cts sweep``,
``python -m cts report``), safe for a terminal whatever a driver wrote."""

from __future__ import annotations

import unicodedata

from cts.report.journal import BAD_OUTCOMES, DEVICE_BAD, layer_of
from cts.report.record import Record
from cts.report.summary import config_names

__all__ = ["failure_lines"]

# what makes a record not clean (``record_status``), device verdicts first; pytest's word for each
_ORDER = (*DEVICE_BAD, "xpassed", *(o for o in BAD_OUTCOMES if o not in DEVICE_BAD), "interrupted")
_SHORT = {o: "XPASS" if o == "xpassed" else o.upper() for o in _ORDER}
_RANK = {o: i for i, o in enumerate(_SHORT)}


def _terminal_text(x, cap: int) -> str:
    """``x`` for one terminal line: control, format (bidi overrides, zero
    width) and line/paragraph separator characters as ``?`` (a driver's log
    or a node id may hold terminal escapes), at most ``cap`` characters."""
    t = "".join(
        "?" if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in str(x)[: cap + 1]
    )
    return t if len(t) <= cap else t[: cap - 3] + "..."


def failure_lines(rows: list[dict], limit: int = 20, record: Record | None = None) -> list[str]:
    """A terminal's short summary of what is not clean (as pytest's):
    device verdicts first (failed, crash, timeout, unexpected pass), then
    what the suite could not judge (error, interrupted); per case the node
    id (and its configuration's name where the merged ``record`` holds
    several) and the first line of its reason (``_terminal_text``); the
    first ``limit``, then how many more."""
    bad = sorted((r for r in rows if r.get("outcome") in _RANK), key=lambda r: _RANK[r["outcome"]])
    names = config_names(record, rows) if bad else {}
    out = []
    for r in bad[:limit]:
        why = _terminal_text(str(r.get("reason") or "").strip().split("\n", 1)[0], 160)
        cfg = names.get(r.get("cfg"), "")
        out.append(
            f"{_SHORT[r['outcome']]} {_terminal_text(r.get('nodeid'), 200)}"
            + (f" [layer: {layer_of(r)}]" if layer_of(r) else "")
            + (" [FORCED]" if r.get("forced") else "")
            + (f" (config {cfg})" if cfg else "")
            + (f" - {why}" if why else "")
        )
    if len(bad) > limit:
        out.append(f"... {len(bad) - limit} more not clean: report.md lists each with its rerun command")
    return out
