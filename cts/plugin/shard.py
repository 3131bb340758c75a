"""pytest options for parallel CI sweeps: ``--shard K/N``, ``--resume
JOURNAL`` and ``--expectations FILE``.

* ``--shard K/N`` keeps the cases whose stable hash of the node id falls in
  slice K of N.  The hash (SHA-256, not Python's salted ``hash``) makes the
  split deterministic across machines and independent of collection order
  and of other cases (with ``--shard-durations``, of the other cases of the
  same test function), so N shard journals merge to exactly the unsharded
  case set.  Each shard writes journal files named ``shardKofN-*.jsonl`` and
  clears only its own, so shards can share one report folder.  Cases with
  one ``kernel_group`` (one program holds their kernels) are placed as one
  unit, by the hash of the group: a driver builds that program in one shard.
* ``--shard-durations JOURNAL`` (with ``--shard``; file or folder,
  repeatable) splits by the case durations a previous run recorded
  instead: within each test function, the costliest unit (case or kernel
  group) first onto the least loaded slice (a case the journals do not know
  counts as the median of the function's known ones).  A real driver's
  cases cost from a millisecond to a minute (a compiler that takes 30-60 s
  to fail on one module): the hash can give one slice several of the slow
  ones, while xdist's scheduler would have spread them.  Still disjoint and
  complete, and the same on every machine, as long as every slice of the
  run is given the same journals.
* ``--resume JOURNAL`` (file or folder, repeatable) deselects the cases that
  already have a verdict in it *for this run's configuration* (device
  identity and verdict-changing options, ``cts.plugin.run_ident``), so an
  interrupted sweep continues where it stopped; crashed, interrupted and
  harness-error cases run again.  The report merges old and new rows.
* ``--expectations FILE`` (repeatable) applies known failures / skips, see
  ``cts/report/expectations.py``.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections import Counter
from pathlib import Path

import pytest

from cts.errors import CaseError
from cts.plugin.keys import RESUMED, sweep_group
from cts.plugin.record import current_cfg, note, run_ident
from cts.report.atomic import write_set
from cts.report.expectations import Entry, load_expectations, match
from cts.report.record import journal_files, read_record

__all__ = [
    "parse_shard",
    "shard_of",
    "balanced_slices",
    "unit_costs",
    "durations_of",
    "read_durations_ahead",
    "newest_run",
    "balance_journals",
    "shard_prefilter",
    "DEVICE_VERDICTS",
]

# the exceptions of a device verdict (a failed check, an assertion of a conformance test, the
# driver refusing or failing a case): what an expectations entry may turn into ``xfailed``
DEVICE_VERDICTS = (AssertionError, CaseError, pytest.fail.Exception)

_ENTRIES = pytest.StashKey[list]()
_ELSEWHERE = pytest.StashKey[list]()  # names of the cases left to other shards (for stale expectations)
_DURATIONS = pytest.StashKey[dict]()  # --shard-durations: node id -> seconds
_ASSIGNED = pytest.StashKey[dict]()  # (function node id, case id) -> this slice: cases shard_prefilter kept


def pytest_addoption(parser: pytest.Parser) -> None:

    g = parser.getgroup("cts")
    internal = sweep_group(parser)
    internal.addoption(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only slice K of N (1 <= K <= N) of the selected cases; the slices of "
        "1/N .. N/N are disjoint, cover every case and are stable across machines",
    )
    internal.addoption(
        "--shard-durations",
        action="append",
        default=[],
        metavar="JOURNAL",
        help="with --shard: split by the case durations recorded in this journal file or folder "
        "(repeatable; a previous run of the sweep): the costliest case or kernel group first onto the "
        "least loaded slice, per test function; every slice of the run must be given the same journals",
    )
    g.addoption(
        "--resume",
        action="append",
        default=[],
        metavar="JOURNAL",
        help="skip the cases already recorded in this journal file, run folder or report folder "
        "(repeatable), so an interrupted sweep continues: crashed, interrupted and harness-error cases "
        "run again; the report and the exit status cover the recorded verdicts and the new ones "
        "(pytest, pytest -n and `python -m cts sweep` alike)",
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


_HASHES: dict[str, int] = {}  # node id -> its 64-bit hash (the sweep launcher's shards inherit them)


def shard_of(nodeid: str, n: int) -> int:
    """The 1-based shard of a node id among ``n`` shards."""
    h = _HASHES.get(nodeid)
    if h is None:
        h = _HASHES[nodeid] = int.from_bytes(hashlib.sha256(nodeid.encode("utf-8")).digest()[:8], "big")
    return h % n + 1


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
    if opt.shard_durations:
        if not opt.shard:
            raise pytest.UsageError(
                "--shard-durations: only with --shard K/N (it decides how the slices split)"
            )
        config.stash[_DURATIONS] = durations_of(opt.shard_durations, getattr(opt, "run_id", None))
    for p in opt.resume:
        if not Path(p).exists():
            raise pytest.UsageError(f"--resume: journal not found: {p}")
    if opt.resume:
        try:  # read once, here: an unreadable journal is a usage error, not a traceback
            rec = read_record(opt.resume)
        except OSError as e:
            raise pytest.UsageError(f"--resume: {e}") from None
        for p in rec.problems[:20]:  # bad lines: skipped, and said so
            config.issue_config_time_warning(
                pytest.PytestWarning(f"--resume: journal problem: {p}"), stacklevel=2
            )
        config.stash[RESUMED] = rec
    try:
        config.stash[_ENTRIES] = load_expectations(opt.expectations)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


# (paths, run id) -> durations the sweep launcher read before it forked (read_durations_ahead)
_READ: dict[tuple, dict[str, float]] = {}


def durations_of(paths: list[str], run_id: str | None = None) -> dict[str, float]:
    """Node id -> recorded seconds from the journals of ``--shard-durations``
    (the longest of a case's rows), leaving out the rows of run ``run_id``: a
    run whose journals go to the folder it reads must not read its own rows (its
    shards start at different times, so they would split by different
    durations: cases in two slices or in none).  A usage error where a path
    is empty, missing or unreadable or holds no case duration."""
    got = _READ.get((tuple(paths), run_id))  # what the sweep launcher read before it forked
    if got is not None:
        return got
    for p in paths:
        if not str(p).strip():
            raise pytest.UsageError("--shard-durations: empty path (name a journal file or folder)")
        if not Path(p).exists():
            raise pytest.UsageError(f"--shard-durations: journal not found: {p}")
    out: dict[str, float] = {}
    problems: list[str] = []
    tables = [p for p in paths if Path(p).name == DURATIONS_FILE]
    for p in tables:  # what a sweep wrote beside its journals: read in milliseconds, not seconds
        for nid, d in durations_table(Path(p), run_id).items():
            out[nid] = max(d, out.get(nid, 0.0))
    try:  # file by file: this run's own files are left out whole
        for f in journal_files([p for p in paths if p not in tables]):
            rec = read_record([f])
            problems += rec.problems
            _longest(rec.rows, out, but=run_id)
    except OSError as e:
        raise pytest.UsageError(f"--shard-durations: {e}") from None
    if not out:
        bad = f" ({len(problems)} journal lines rejected, first: {problems[0]})" if problems else ""
        raise pytest.UsageError(f"--shard-durations: no case duration in {' '.join(paths)}{bad}")
    return out


DURATIONS_FILE = "durations.json"


def _is_seconds(d) -> bool:
    """A recorded duration placement can use: a finite, non-negative number (not a bool)."""
    return isinstance(d, (int, float)) and not isinstance(d, bool) and 0 <= d < float("inf")


def _longest(rows: list[dict], into: dict[str, float], but: str | None = None) -> dict[str, float]:
    """``into`` with each row's duration, the longest where one node id has
    several (several configurations), rows of run ``but`` left out."""
    for r in rows:
        d = r.get("duration")
        if _is_seconds(d) and not (but and r.get("run") == but):
            into[r["nodeid"]] = max(float(d), into.get(r["nodeid"], 0.0))
    return into


def write_durations(folder: Path, run_id: str, rows: list[dict]) -> Path | None:
    """Beside a sweep's journals (``folder``): ``durations.json``, the
    recorded seconds of each case of the merged record (run ``run_id``), so
    that ``--balance`` on the next sweep reads a table in milliseconds
    rather than the journals in most of a second, on the critical path
    before the fork.  A scheduling hint only: it never decides a verdict.
    Written whole or not at all; None where it could not be written."""
    table = _longest(rows, {})  # as read from the journals
    path = folder / DURATIONS_FILE
    try:
        write_set({path: json.dumps({"kind": "durations", "run": run_id, "durations": table})})
    except OSError:
        return None
    return path


def durations_table(path: Path, run_id: str | None = None) -> dict[str, float]:
    """Node id -> seconds from a ``durations.json`` (``write_durations``);
    empty where it is run ``run_id``'s own.  A usage error where it cannot
    be read or is not such a table."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise pytest.UsageError(
            f"--shard-durations: cannot read {path}: {getattr(e, 'strerror', None) or e}"
        ) from None
    table = data.get("durations") if isinstance(data, dict) and data.get("kind") == "durations" else None
    if not isinstance(table, dict) or not all(_is_seconds(d) for d in table.values()):
        raise pytest.UsageError(f"--shard-durations: {path} is not a table of case durations")
    return {} if run_id and data.get("run") == run_id else {str(k): float(d) for k, d in table.items()}


def newest_run(journal_dir: Path, but: str) -> Path | None:
    """The run folder under ``journal_dir`` (a report folder's ``journal``)
    written last, other than run ``but``, that holds a journal; None where
    there is none (``cts sweep --balance``)."""
    try:
        runs = [d for d in journal_dir.iterdir() if d.is_dir() and d.name != but]
    except OSError:
        return None
    runs = [d for d in runs if any(d.glob("*.jsonl*"))]
    return max(runs, key=lambda d: (d.stat().st_mtime, d.name), default=None)


def balance_journals(args: list[str], journal_dir: Path, run_id: str) -> tuple[list[str], Path | None]:
    """``cts sweep --balance``: ``args`` with ``--shard-durations`` of the
    newest earlier run in ``journal_dir`` (``newest_run``), and what it
    names: that run's ``durations.json`` where its sweep wrote one after its
    last journal line, else the run's folder (its journals); unchanged args
    and None where there is no earlier run."""
    if _duration_paths(args):
        raise ValueError("--balance and --shard-durations: give one (--balance picks the journals itself)")
    prev = newest_run(journal_dir, run_id)
    if prev is None:
        return list(args), None
    table = prev / DURATIONS_FILE  # its table, unless a journal there was written after it (resumed)
    try:
        newest = max(f.stat().st_mtime_ns for f in prev.glob("*.jsonl*"))
        if table.stat().st_mtime_ns >= newest:
            prev = table
    except (OSError, ValueError):
        pass
    try:  # read here, once, for the shards too (read_durations_ahead finds it)
        _READ[((str(prev),), run_id)] = durations_of([str(prev)], run_id)
    except pytest.UsageError:  # no usable duration there (e.g. a run that judged nothing): the hash
        return list(args), None
    return [*args, "--shard-durations", str(prev)], prev


def read_durations_ahead(args: list[str], run_id: str) -> None:
    """For the sweep launcher, before it forks its shards: read the journals
    of ``--shard-durations`` in ``args`` once into the memo the shards find
    them in (the same paths and run id), instead of in every shard.  Errors
    are left to the shards, which say them in one line."""
    paths = _duration_paths(args)
    if paths:
        try:
            _READ[(tuple(paths), run_id)] = durations_of(paths, run_id)
        except (pytest.UsageError, OSError, ValueError):
            pass


def _duration_paths(args: list[str]) -> list[str]:
    """The values of ``--shard-durations`` in command-line ``args``, in order."""
    out = []
    for a, b in zip(args, [*args[1:], ""]):
        if a.startswith("--shard-durations="):
            out.append(a.split("=", 1)[1])
        elif a == "--shard-durations":
            out.append(b)
    return out


def unit_costs(nids: list[str], units: list[str], durations: dict[str, float]) -> dict[str, float]:
    """The cost of each unit of placement: the recorded seconds of its cases,
    a case the journals do not know counted as the median of the known ones
    among ``nids`` (one test function's cases; 1.0 where none is known)."""
    known = sorted(durations[n] for n in nids if n in durations)
    fill = known[len(known) // 2] if known else 1.0
    cost: dict[str, float] = {}
    for u, n in zip(units, nids):
        cost[u] = cost.get(u, 0.0) + durations.get(n, fill)
    return cost


def balanced_slices(costs: list[float], n: int, salt: str) -> list[int]:
    """The 1-based slice of each unit of work (a case, or a group of cases
    one program holds) given its cost: longest first onto the least loaded
    slice.  Ties go to the slice after a start that ``salt`` (the test
    function) decides, so the functions' remainders do not all land on slice
    1.  A pure function of its arguments: every slice process computes the
    same split."""
    start = int.from_bytes(hashlib.sha256(salt.encode("utf-8")).digest()[:4], "big") % n
    heap = [(0.0, (s - start) % n, s) for s in range(n)]  # (load, tie rank, slice)
    heapq.heapify(heap)
    out = [0] * len(costs)
    for j in sorted(range(len(costs)), key=lambda j: -costs[j]):  # stable: equal costs keep their order
        load, rank, s = heapq.heappop(heap)
        out[j] = s + 1
        heapq.heappush(heap, (load + costs[j], rank, s))
    return out


def shard_prefilter(metafunc: pytest.Metafunc, cases: list) -> list:
    """The cases of this shard, chosen before pytest makes an item of each:
    a shard of N collects ~1/N of the items, so N shard processes scale
    (every shard collecting every case costs each of them seconds).  The
    node id is the one pytest will give (``<function>[<id>]``); where pytest
    could change an id (non-ASCII, a backslash, duplicates) nothing is pre-filtered and
    the shard is chosen after collection by the hash of the node id; a case
    chosen here keeps that choice after collection.  So the slices stay
    disjoint and complete.  Cases with the same ``kernel_group`` (one
    program holds their kernels) go to one slice together."""
    shard = getattr(metafunc.config.option, "cts_shard", None)
    if not shard or not cases:
        return cases
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids) or not all(
        i and i.isascii() and i.isprintable() and "\\" not in i for i in ids
    ):
        return cases
    K, N = shard
    base = metafunc.definition.nodeid
    nids = [f"{base}[{c.id}]" for c in cases]
    # the unit of placement: the case, or the group of cases one program holds (kept together, so
    # each program is built by one slice only): hashed as a node id would be
    units = [f"{base}[{g}]" if (g := getattr(c, "kernel_group", None)) else n for c, n in zip(cases, nids)]
    durations = metafunc.config.stash.get(_DURATIONS, None)
    if durations is None:
        where = {u: shard_of(u, N) for u in units}
    else:  # --shard-durations
        cost = unit_costs(nids, units, durations)
        order = sorted(cost)
        where = dict(zip(order, balanced_slices([cost[u] for u in order], N, base)))
    mine = metafunc.config.stash.setdefault(_ASSIGNED, {})
    keep, other = [], []
    for c, u in zip(cases, units):
        if where[u] == K:
            keep.append(c)
            mine[(base, c.id)] = K
        else:
            other.append(c)
    if metafunc.config.stash.get(_ENTRIES, None) and other:  # expectations must see every case
        name = metafunc.definition.name
        metafunc.config.stash.setdefault(_ELSEWHERE, []).extend(
            (f"{base}[{c.id}]", f"{name}[{c.id}]", f"{getattr(c, 'family', '')}[{c.id}]", c.id) for c in other
        )
    return keep


def _placed(item: pytest.Item, assigned: dict) -> int | None:
    """The slice ``shard_prefilter`` chose for the item's case, found by its
    test function and case id (not by the node id: another parametrization
    of the same function, a plugin's or the file's own, changes the node id
    but not the case); None where the prefilter did not choose (then the
    hash of the node id decides, the same in every slice)."""
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec is not None else None
    if case is None or not hasattr(case, "id") or item.parent is None:
        return None
    return assigned.get((f"{item.parent.nodeid}::{getattr(item, 'originalname', item.name)}", case.id))


def _names(item: pytest.Item) -> tuple[str, ...]:
    case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
    names = (item.nodeid, item.name)
    if case is not None and hasattr(case, "id"):
        names += (f"{getattr(case, 'family', '')}[{case.id}]", case.id)
    return names


# recorded outcomes that --resume runs again: not verdicts (interrupted, a harness error) and
# crashes (a crash that does not recur is reported as changed)
RUN_AGAIN = ("crash", "interrupted", "error")


def _resumable(config: pytest.Config, rec, collected: set[str] | None = None) -> set[str]:
    """The recorded cases whose verdict holds for this run: recorded under
    the same configuration (``cts.plugin.run_ident``).  The others run
    again, and the report says how many and why."""
    if rec is None:
        return set()
    from cts.report.journal import ident_label

    now = current_cfg(config)
    done: set[str] = set()
    other: Counter = Counter()
    mine_recorded: set[str] = set()
    for r in rec.rows:
        if r.get("cfg") == now:
            mine_recorded.add(r["nodeid"])
            if r.get("outcome") not in RUN_AGAIN:
                done.add(r["nodeid"])
    for r in rec.rows:
        nid = r["nodeid"]
        if r.get("cfg") != now and nid not in mine_recorded and (collected is None or nid in collected):
            other[r.get("cfg")] += 1
    for cfg, n in other.most_common():
        note(
            config,
            f"--resume: {n} recorded cases are from another configuration ({ident_label(rec.configs.get(cfg, {}))}; "
            f"this run: {ident_label(run_ident(config))}) and run again",
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
            # only a device verdict can be the expected failure: a harness error or a toolchain
            # verdict under an entry stays an error (an entry must not hide what the suite could not judge)
            item.add_marker(pytest.mark.xfail(reason=why, strict=False, raises=DEVICE_VERDICTS))
    for e in entries:
        if (
            e not in used
            and not any(e.matches(_names(i)) for i in items)
            and not any(e.matches(n) for n in config.stash.get(_ELSEWHERE, []))
        ):
            note(config, f"expectations entry {e.pattern!r} ({e.source}) matches no case: stale entry?")

    keep, drop = list(items), []
    done: set[str] = _resumable(config, config.stash.get(RESUMED, None), {i.nodeid for i in items})
    shard = getattr(config.option, "cts_shard", None)
    if done or shard:
        keep = []
        assigned = config.stash.get(_ASSIGNED, {})
        for item in items:
            if item.nodeid in done or (
                shard and (_placed(item, assigned) or shard_of(item.nodeid, shard[1])) != shard[0]
            ):
                drop.append(item)
            else:
                keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if done:
        n = sum(1 for i in drop if i.nodeid in done)
        note(config, f"--resume: {n} cases already recorded were not run again")
