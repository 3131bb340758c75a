"""The state of a whole record in words: how many selected cases it lacks,
what ended early and the one command that continues it, and whether
anything was judged at all (docs/record.md, "Exit statuses").

Every path that ends a sweep (pytest, pytest -n, ``python -m cts sweep``,
``python -m cts report``) says these with the functions here; the exit
status those facts give is ``cts.report.exit_status``'s."""

from __future__ import annotations

import shlex
from pathlib import Path

from cts.argv import without
from cts.report.record import Record, RunInfo

__all__ = [
    "unfinished_lines",
    "not_judged_lines",
    "missing_line",
    "judged_line",
    "resume_command",
    "no_device",
    "resumed_record",
]

# outcomes that judged something (a skip did not)
_JUDGED = ("passed", "failed", "xfailed", "xpassed", "crash", "timeout", "error")


def resumed_record(rec: Record, cfg: str | None) -> Record:
    """The record of a resumed run in its configuration ``cfg``: the
    verdicts recorded under other configurations are left out, and a note
    says how many (``python -m cts report`` keeps them apart)."""
    other = {r.get("cfg") for r in rec.rows} - {cfg}
    if cfg is None or not other:
        return rec
    n = sum(1 for r in rec.rows if r.get("cfg") != cfg)
    mine = rec.only(cfg)
    mine.notes.append(
        {"kind": "note", "cfg": cfg, "text": f"--resume: {n} recorded verdicts of {len(other)} other "
         "configuration(s) are not part of this report (`python -m cts report` merges them, kept apart)"}
    )  # fmt: skip
    return mine


def resume_command(run: RunInfo) -> str:
    """The one command that continues ``run`` where it stopped: the
    command that started it (the ``python -m cts sweep`` launcher's, where
    the run was a sweep's shards, never one shard's own pytest line) with
    ``--resume`` of the run's journal folder added (the folders it resumed
    itself stay in the command) and its ``--run-id`` left out (the
    continuation is a run of its own, which covers this one), except for
    one shard of a CI job matrix: run again under its run id, its new
    session replaces the one that ended early."""
    heads = [h for h in run.heads if h.get("sweep")] or ([run.session] if run.session else [])
    text = str((heads[0] if heads else {}).get("sweep") or run.command or "")
    try:
        args = shlex.split(text)
    except ValueError:
        args = []
    if not args:
        args = ["pytest", "..."]
    if _is_sweep(run) or not _sharded(run):  # a run of its own, which covers this one
        args = without(args, ("--run-id",))
    # (a CI job's shard keeps the run id: its new session replaces the one that ended early)
    where = str(Path(run.files[0]).parent) if run.files else "REPORT_DIR/journal"
    return shlex.join([*args, "--resume", where])


def _sharded(run: RunInfo) -> bool:
    return any((h.get("options") or {}).get("shard") for h in run.heads)


def _is_sweep(run: RunInfo) -> bool:
    return any(h.get("sweep") for h in run.heads)


def unfinished_lines(rec: Record | None) -> list[str]:
    """The report's words for runs that ended early (Ctrl-C, killed,
    stopped) or lack a shard, each with the command that continues it."""
    out = []
    for run in rec.unfinished() if rec is not None else []:
        sel = run.selected
        judged = f"{run.results} of {sel}" if sel is not None else f"{run.results}"
        if run.missing_shards and not _is_sweep(run):
            out.append(
                f"incomplete: run {run.run} has no journal of shard(s) {', '.join(run.missing_shards)} "
                f"(the others judged {judged} cases): run each with --shard K/N --run-id {run.run}, "
                "then merge again"
            )
            continue
        status = run.status
        if run.missing_shards:  # a sweep stopped before every shard began: the sweep resumes them all
            judged = f"{run.results}"
        out.append(
            f"interrupted: run {run.run} ({status}) judged {judged} cases; resume with: {resume_command(run)}"
        )
    return out


def not_judged_lines(tot: dict) -> list[str]:
    """The report's and the CLI's words for outcomes that are not verdicts."""
    out = []
    if tot.get("error"):
        out.append(f"{tot['error']} harness errors (not device verdicts): the suite could not judge them")
    if tot.get("interrupted"):
        out.append(
            f"interrupted: {tot['interrupted']} cases were in flight when the run died (not verdicts); "
            "--resume runs them again"
        )
    return out


def missing_line(rec: Record | None, cfg: str | None = None) -> str:
    """How many cases the runs of the record selected and left without a
    row ('' when none): a run killed or stopped before its end (a
    truncated journal) judged fewer than it selected.  Counted per run
    that no later complete run covers."""
    if rec is None:
        return ""
    miss = 0
    for run in rec.unfinished():
        if cfg is not None and run.cfg != cfg:
            continue
        sel = run.selected
        if sel is not None and sel > run.results:
            miss += sel - run.results
    if not miss:
        return ""
    return f"missing: {miss} selected cases have no verdict (the run ended before them); --resume runs them"


def no_device(rec: Record | None, cfg: str | None = None) -> str:
    """Why the record judged nothing for lack of a device ('' otherwise):
    every case skipped and a session's backend found no device (its
    ``device`` names the reason: no loader, no driver, no physical
    device)."""
    if rec is None:
        return ""
    rows = [r for r in rec.rows if cfg is None or r.get("cfg") == cfg]
    if any(r.get("outcome") in _JUDGED for r in rows):
        return ""
    for s in rec.sessions:
        if cfg is not None and s.get("cfg") not in (cfg, ""):
            continue
        dev = s.get("device") or {}
        if isinstance(dev, dict) and dev.get("reason"):
            return (
                f"no case was judged: backend {s.get('backend')} found no device ({dev['reason']}); "
                f"{len(rows)} cases skipped"
            )
    return ""


def judged_line(rec: Record | None, cfg: str | None = None) -> str:
    """One line for a run that judged no case although its device exists:
    every selected case skipped because the device claims none of them
    (a clean run: the line says so), else ''."""
    if rec is None:
        return ""
    rows = [r for r in rec.rows if cfg is None or r.get("cfg") == cfg]
    if not rows or any(r.get("outcome") != "skipped" for r in rows) or no_device(rec, cfg):
        return ""
    dev = next((s.get("device") or {} for s in rec.sessions if s.get("device")), {})
    name = dev.get("name") if isinstance(dev, dict) else None
    return (
        f"no case was judged: the device{f' {name!r}' if name else ''} claims none of the "
        f"{len(rows)} selected cases (all skipped, each with its reason)"
    )
