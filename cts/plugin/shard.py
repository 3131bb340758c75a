"""pytest options for parallel CI sweeps: ``--shard K/N``, ``--resume
JOURNAL`` and ``--expectations FILE`` (issue 4; peer-suites.md A.7, F.1, F.2).

* ``--shard K/N`` keeps the cases whose stable hash of the node id falls in
  slice K of N.  The hash (SHA-256, not Python's salted ``hash``) makes the
  split deterministic across machines and independent of collection order
  and of other cases, so N shard journals merge to exactly the unsharded
  case set.  Each shard writes journal files named ``shardKofN-*.jsonl`` and
  clears only its own, so shards can share one report folder.
* ``--resume JOURNAL`` (file or folder, repeatable) deselects the cases that
  already have a row in it and keeps the journal, so an interrupted sweep
  continues where it stopped; the final report merges old and new rows.
* ``--expectations FILE`` (repeatable) applies known failures / skips, see
  ``cts/report/expectations.py``.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from pathlib import Path

import pytest

from cts.report.expectations import Entry, load_expectations, match
from cts.report.journal import read_journals

__all__ = ["parse_shard", "shard_of"]

_ENTRIES = pytest.StashKey[list]()
_DONE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only slice K of N (1 <= K <= N) of the selected cases; the slices of "
        "1/N .. N/N are disjoint, cover every case and are stable across machines",
    )
    g.addoption(
        "--resume",
        action="append",
        default=[],
        metavar="JOURNAL",
        help="skip the cases already recorded in this journal file or folder (repeatable) "
        "and keep it, so an interrupted sweep continues; the report merges both",
    )
    g.addoption(
        "--expectations",
        action="append",
        default=[],
        metavar="FILE",
        help="known failures of this device/driver: 'PATTERN fail|skip URL-OR-REASON' per line "
        "(repeatable); listed failures report as xfailed, listed cases that pass as xpassed",
    )


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N); ValueError with a one-line message otherwise."""
    k, sep, n = str(text).partition("/")
    try:
        if not sep:
            raise ValueError
        K, N = int(k), int(n)
    except ValueError:
        raise ValueError(f"--shard expects K/N (e.g. 1/4), got {text!r}") from None
    if not (N >= 1 and 1 <= K <= N):
        raise ValueError(f"--shard K/N needs 1 <= K <= N, got {text!r}")
    return K, N


def shard_of(nodeid: str, n: int) -> int:
    """The 1-based shard of a node id among ``n`` shards."""
    h = hashlib.sha256(nodeid.encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") % n + 1


def pytest_configure(config: pytest.Config) -> None:
    opt = config.option
    if not hasattr(opt, "shard"):
        return
    if opt.shard:
        try:
            K, N = parse_shard(opt.shard)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
        opt.cts_shard = (K, N)
        opt.cts_journal_prefix = f"shard{K}of{N}-"
    for p in opt.resume:
        if not Path(p).exists():
            raise pytest.UsageError(f"--resume: journal not found: {p}")
    if opt.resume:
        try:  # read once, here: an unreadable journal is a usage error, not a traceback
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                # crashes and interrupted cases run again (a crash that does not recur is
                # reported as flaky); every other recorded outcome is done
                config.stash[_DONE] = {
                    r["nodeid"]: r
                    for r in read_journals(opt.resume)
                    if r.get("outcome") not in ("crash", "interrupted")
                }
        except OSError as e:
            raise pytest.UsageError(f"--resume: {e}") from None
        for w in caught[:20]:  # malformed lines: skipped, and said so
            config.issue_config_time_warning(pytest.PytestWarning(f"--resume: {w.message}"), stacklevel=2)
        jdir = Path(getattr(opt, "report_dir", "reports/latest")) / "journal"
        opt.cts_keep_journal = any(_overlaps(Path(p), jdir) for p in opt.resume)
    try:
        config.stash[_ENTRIES] = load_expectations(opt.expectations)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


def _overlaps(a: Path, b: Path) -> bool:
    """Whether one of two paths is (inside) the other: the run's own journal
    folder is kept only when ``--resume`` names it (or a file in it or its
    report folder); resuming from elsewhere starts a fresh journal here, so
    rows of an older run in the report folder never leak into the report."""
    a, b = a.resolve(), b.resolve()
    return a == b or a in b.parents or b in a.parents


def _names(item: pytest.Item) -> tuple[str, ...]:
    case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
    names = (item.nodeid, item.name)
    if case is not None and hasattr(case, "id"):
        names += (f"{getattr(case, 'family', '')}[{case.id}]", case.id)
    return names


def _note(config: pytest.Config, text: str) -> None:
    """A warning shown by pytest and kept in the journal (so the report has
    it).  Written once, by the first worker or the single process."""
    warnings.warn(pytest.PytestWarning(text), stacklevel=2)
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0" or config.option.no_report:
        return
    from cts.plugin import _journal

    j = _journal(config)
    if j is not None:
        j.append({"kind": "note", "text": text, "time": time.time()})


def _resumable(
    config: pytest.Config, recorded: dict[str, dict], collected: set[str] | None = None
) -> set[str]:
    """The recorded cases whose verdict holds for this run: recorded with the
    same backend, device, driver, seed and profile (``plugin.run_identity``).
    The others run again, and the report says how many and why."""
    if not recorded:
        return set()
    from cts.plugin import current_identity, run_identity

    now = current_identity(config)
    if now is None:
        return set(recorded)
    done, other = set(), {}
    for nid, row in recorded.items():
        ident = run_identity(row)
        if ident == now:
            done.add(nid)
        elif collected is None or nid in collected:  # only cases this run collects are rerun
            other[ident] = other.get(ident, 0) + 1
    for ident, n in sorted(other.items(), key=lambda kv: -kv[1]):
        backend, dev, driver, seed, profile = ident
        _note(
            config,
            f"--resume: {n} recorded cases are from another run configuration (backend {backend}, "
            f"device {dev!r}, driver {driver!r}, seed {seed}, profile {profile}; this run: "
            f"{', '.join(map(str, now))}) and run again",
        )
    return done


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Expectations see every collected case (before ``-k``), so an entry
    is stale only if it matches no case at all; then resume and shard
    deselect."""
    entries: list[Entry] = config.stash.get(_ENTRIES, [])
    used: set[Entry] = set()
    for item in items:
        if not entries:
            break
        e = match(entries, _names(item))
        if e is None:
            continue
        used.add(e)
        why = f"expected by {e.source}: {e.reason}"
        if e.kind == "skip":
            item.add_marker(pytest.mark.skip(reason=why))
        else:
            item.add_marker(pytest.mark.xfail(reason=why, strict=False))
    for e in entries:
        if e not in used and not any(e.matches(_names(i)) for i in items):
            _note(config, f"expectations entry {e.pattern!r} ({e.source}) matches no case: stale entry?")

    keep, drop = list(items), []
    done: set[str] = _resumable(config, config.stash.get(_DONE, {}), {i.nodeid for i in items})
    shard = getattr(config.option, "cts_shard", None)
    if done or shard:
        keep = []
        for item in items:
            if item.nodeid in done or (shard and shard_of(item.nodeid, shard[1]) != shard[0]):
                drop.append(item)
            else:
                keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if done:
        n = sum(1 for i in drop if i.nodeid in done)
        _note(config, f"--resume: {n} cases already recorded were not run again")
