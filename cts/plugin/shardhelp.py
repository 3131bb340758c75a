"""Shards of one sweep that help each other finish (``--shard-help DIR``,
set by ``python -m cts sweep``).

Sixteen shards of equal work do not end together on a shared machine: on
the GPU machine's 16-core host their case loops took 1.05 to 1.56 s, and
the sweep waits for the slowest (on a real device a few slow compiles in
one slice do the same).  With ``--shard K/N --shard-help DIR``, shard K
also collects the next shards' slices (K+1, K+2: ``cts.plugin.shard.HELPED``;
N's next is 1) and, once its own cases are done, takes each of those
shards' cases from the end of its list while that shard takes them from
the front, until they meet.  Measured there: the shards' ends within
0.12 s of each other instead of 0.5 s, the sweep 2.43 s against 2.53 s.

Every case runs exactly once: each slice has a claim file in DIR (written
by the slice's own shard before it runs anything) that holds the slice's
size, a fingerprint of its ordered node ids and two counters, the next
index from the front (its own shard) and from the back (its helpers); a
case is taken under an exclusive ``fcntl`` lock of that file, so no index
is handed out twice.  A helper that finds no claim file (its neighbour
did not start, or died before its collection), or another size or
fingerprint (another selection or order), does not help that slice.  Each
case's journal rows are written by the process that ran it; the session
header's ``selected`` counts the shard's own slice only, so the shards of
a run still sum to its selection.  One case ahead is taken before the
current one runs (pytest tears a case down knowing the next); a shard
stopped early (``-x``, Ctrl-C, killed) leaves that one unrun, as it leaves
the rest of its slice, and the record says the run is incomplete.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

import pytest

from cts.plugin.shard import helped_slices, shard_of

__all__ = ["own_items", "SliceClaims"]

_HELPED = pytest.StashKey[dict]()  # slice -> cases of it this shard ran
_FMT = "<8sqqq"  # fingerprint, size, next from the front, next from the back
_SIZE = struct.calcsize(_FMT)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("cts").addoption(
        "--shard-help",
        default=None,
        metavar="DIR",
        help="with --shard K/N: also collect shard K+1's slice and, once this shard's own cases are "
        "done, run those that shard has not started (claims kept in DIR; `python -m cts sweep` sets it)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "shard_help", None) and not getattr(config.option, "shard", None):
        raise pytest.UsageError("--shard-help needs --shard K/N")


def own_items(config: pytest.Config, items: list) -> list:
    """The items of this shard's own slice (all of them without help)."""
    if not helped_slices(config):
        return list(items)
    k, n = config.option.cts_shard
    return [it for it in items if shard_of(it.nodeid, n) == k]


def _fingerprint(items: list) -> bytes:
    return hashlib.sha256("\n".join(it.nodeid for it in items).encode("utf-8", "surrogatepass")).digest()[:8]


class SliceClaims:
    """The claim file of one slice: its own shard takes indices from the
    front, its helper from the back, each under an exclusive lock."""

    def __init__(self, path: Path, fd: int, size: int):
        self.path, self.fd, self.size = path, fd, size

    @classmethod
    def create(cls, folder: Path, k: int, items: list) -> SliceClaims:
        """The slice's own shard, before it runs anything."""
        import fcntl

        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"slice{k}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            os.pwrite(fd, struct.pack(_FMT, _fingerprint(items), len(items), 0, len(items) - 1), 0)
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        return cls(path, fd, len(items))

    @classmethod
    def join(cls, folder: Path, k: int, items: list) -> SliceClaims | None:
        """The helper: the slice's claims, or None where they are missing
        or describe another list of cases."""
        import fcntl

        try:
            fd = os.open(folder / f"slice{k}", os.O_RDWR)
        except OSError:
            return None
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            data = os.pread(fd, _SIZE, 0)
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        if len(data) != _SIZE or struct.unpack(_FMT, data)[:2] != (_fingerprint(items), len(items)):
            os.close(fd)
            return None
        return cls(folder / f"slice{k}", fd, len(items))

    def take(self, front: bool) -> int | None:
        """The next index from the front or the back; None when the two
        ends have met."""
        import fcntl

        fcntl.lockf(self.fd, fcntl.LOCK_EX)
        try:
            fp, size, lo, hi = struct.unpack(_FMT, os.pread(self.fd, _SIZE, 0))
            if lo > hi:
                return None
            got = lo if front else hi
            lo, hi = (lo + 1, hi) if front else (lo, hi - 1)
            os.pwrite(self.fd, struct.pack(_FMT, fp, size, lo, hi), 0)
            return got
        finally:
            fcntl.lockf(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)


class _Plan:
    """This shard's cases in the order it takes them: its own slice from
    the front, then each helped slice from the back, in turn."""

    def __init__(self, own: list, own_claims: SliceClaims, others: list[tuple[int, list]], folder: Path):
        self.own, self.own_claims, self.others, self.folder = own, own_claims, list(others), folder
        self.current: tuple[int, list, SliceClaims | None] | None = None
        self.helping = False
        self.helped: dict[int, int] = {}

    def take(self):
        if not self.helping:
            i = self.own_claims.take(front=True)
            if i is not None:
                return self.own[i]
            self.helping = True
        while True:
            if self.current is None:
                if not self.others:
                    return None
                k, items = self.others.pop(0)
                self.current = (k, items, SliceClaims.join(self.folder, k, items) if items else None)
            k, items, claims = self.current
            i = claims.take(front=False) if claims is not None else None
            if i is not None:
                self.helped[k] = self.helped.get(k, 0) + 1
                return items[i]
            if claims is not None:
                claims.close()
            self.current = None

    def close(self) -> None:
        self.own_claims.close()
        if self.current is not None and self.current[2] is not None:
            self.current[2].close()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session):
    """pytest's own loop, over the cases this shard takes (``_Plan``)."""
    config = session.config
    helped = helped_slices(config)
    if not helped or config.option.collectonly:
        return None  # pytest's own loop
    if session.testsfailed and not config.option.continue_on_collection_errors:
        raise session.Interrupted(
            f"{session.testsfailed} error{'s' if session.testsfailed != 1 else ''} during collection"
        )
    k, n = config.option.cts_shard
    folder = Path(config.option.shard_help)
    own = [it for it in session.items if shard_of(it.nodeid, n) == k]
    others = [(h, [it for it in session.items if shard_of(it.nodeid, n) == h]) for h in helped]
    plan = _Plan(own, SliceClaims.create(folder, k, own), others, folder)
    try:
        item = plan.take()
        while item is not None:
            after = plan.take()
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=after)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
            item = after
    finally:
        plan.close()
        config.stash[_HELPED] = plan.helped
    return True


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    n = getattr(config.option, "cts_shard", (0, 0))[1]
    helped = config.stash.get(_HELPED, {})
    for h, count in helped.items():
        terminalreporter.write_line(f"cts: ran {count} cases of shard {h}/{n} (it had not started them)")
    if getattr(config.option, "shard_help", None):
        terminalreporter.write_line(
            "cts: this shard collected the slices it may help too: the progress percentage counts them"
        )
