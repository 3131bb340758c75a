"""The exit-status policy: which exit status a run or a merged record gives
(README "Exit statuses").  Every path that ends a sweep (pytest, pytest -n,
``python -m cts sweep``, ``python -m cts report``) takes its status from
here; ``cts.report.status`` says the same facts in words.

* 0 ``CLEAN``: every selected case judged, none failed, the runs agree.
* 1 ``NOT_CLEAN``: ``record_status`` names why (a device verdict that is no
  pass, a case not judged, verdicts that changed between runs, a run that
  ended early or lacks a shard, a rejected journal line).
* 2 ``INTERRUPTED``: the run was interrupted (Ctrl-C, a usage error).
* 3 ``INTERNAL_ERROR``: the harness itself failed (a shard died, a journal
  or report could not be written).
* 5 ``NOTHING_JUDGED``: no case was judged because the backend found no
  device (pytest's "no tests" status).
"""

from __future__ import annotations

from collections import Counter

from cts.report.journal import BAD_OUTCOMES
from cts.report.record import Record
from cts.report.status import no_device

__all__ = [
    "CLEAN",
    "NOT_CLEAN",
    "INTERRUPTED",
    "INTERNAL_ERROR",
    "NOTHING_JUDGED",
    "record_status",
    "record_exit_status",
    "shards_exit_status",
    "unrecorded_exit_status",
]

CLEAN = 0
NOT_CLEAN = 1
INTERRUPTED = 2
INTERNAL_ERROR = 3
# the exit status of a run in which no case was judged because the backend found no device (its
# loader or driver missing): pytest's "no tests" status, said in one line
NOTHING_JUDGED = 5


def record_status(rec: Record, cfg: str | None = None) -> tuple[bool, str]:
    """(bad, why) of a merged record: bad when any final verdict is a
    failure, crash, timeout, unexpected pass or not judged (error,
    interrupted), when runs disagree on a verdict (changed), when a run
    ended early or lacks a shard and no later run completed it, or when
    journal lines were rejected.  ``cfg`` limits the verdicts to one
    configuration."""
    # forced cases (--assume-extension) are no conformance verdicts: not in the exit status
    rows = [r for r in rec.rows if (cfg is None or r.get("cfg") == cfg) and not r.get("forced")]
    tot = Counter(r.get("outcome") for r in rows)
    why = [f"{k} {tot[k]}" for k in (*BAD_OUTCOMES, "xpassed", "interrupted") if tot.get(k)]
    changed = sum(1 for r in rows if r.get("changed"))
    if changed:
        why.append(f"{changed} cases changed verdict between runs")
    unfinished = [r for r in rec.unfinished() if cfg is None or r.cfg == cfg]
    lacking = [r for r in unfinished if r.missing_shards]
    for r in lacking:
        why.append(f"run {r.run} has no journal of shard(s) {', '.join(r.missing_shards)}")
    ended = len(unfinished) - len(lacking)
    if ended:
        why.append(f"{ended} run{'s' if ended > 1 else ''} ended early")
    if rec.problems:
        why.append(f"{len(rec.problems)} journal lines rejected")
    return bool(why), ", ".join(why)


def record_exit_status(rec: Record) -> int:
    """The exit status of a merged record: non-zero when anything is not a
    pass (``record_status``), and when nothing was judged for lack of a
    device."""
    bad, _ = record_status(rec)
    if bad:
        return NOT_CLEAN
    return NOTHING_JUDGED if no_device(rec) else CLEAN


def shards_exit_status(codes: list[int | None], interrupted: bool) -> int | None:
    """The exit status the shards of ``python -m cts sweep`` decide on their
    own, before the record is read: ``INTERRUPTED`` when the sweep or a
    shard was interrupted, ``INTERNAL_ERROR`` when a shard died (``None``, a
    signal) or hit an internal error; ``None`` when the record decides."""
    if interrupted or INTERRUPTED in codes:
        return INTERRUPTED
    if INTERNAL_ERROR in codes or any(c is None or c < 0 for c in codes):
        return INTERNAL_ERROR
    return None


def unrecorded_exit_status(codes: list[int | None], interrupted: bool) -> int:
    """The exit status of a sweep whose shards recorded no case at all:
    ``INTERRUPTED``, ``NOTHING_JUDGED`` when every shard found no device,
    else ``INTERNAL_ERROR``."""
    if interrupted:
        return INTERRUPTED
    return NOTHING_JUDGED if set(codes) <= {NOTHING_JUDGED} else INTERNAL_ERROR
