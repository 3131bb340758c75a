"""The garbage collector in a sweep process.

What collection builds (every item, every case of every case space, the
parametrization behind them) lives until the session ends, and there are
a few hundred thousand such objects.  Python's cyclic collector walks all
of them again at every full collection: a few tenths of a second a sweep,
during the run and again while the report is built (reading the journal
back makes tens of thousands of rows, which triggers full collections of
everything).  So, after collection, those objects are moved out of the
collector's sight (``gc.freeze``: they are not collected, which they would
not have been anyway before the session ends), and the report is built
with automatic collection paused (it makes no cyclic garbage).  After
pytest's first end-of-session collection what the run left alive is frozen
too, so its second walks none of it; after them everything is handed back
(``gc.unfreeze``): a process that runs pytest again (the sweep launcher's
warm-up, pytester) frees what its sessions left.  At interpreter exit everything is frozen (pytest_configure says why).
``CTS_GC_FREEZE=0`` leaves the collector alone.

Rules this rests on: every resource a session opens (a device, a file, a
child process) is closed explicitly (the backend's ``close`` and the
journal at unconfigure), never by a finalizer of cyclic garbage, which the
frozen exit does not run; and freezing is process-wide and does not nest
(a session run inside another one's process hands back the outer one's
objects too: only speed is lost).  Objects built at collection are outside
pytest's end-of-session collections, so a ``__del__`` error of one of them
is not reported as an unraisable-exception warning; the run's own garbage
is still finalized (and such an error reported) by pytest's first one.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os

import pytest

__all__ = ["paused_collection"]

_FROZE = pytest.StashKey[bool]()


@contextlib.contextmanager
def paused_collection():
    """Automatic cyclic collection off inside the block (back as it was after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    from cts.plugin import HARNESS

    config = session.config
    if os.environ.get("CTS_GC_FREEZE", "1") == "0" or config.stash.get(HARNESS, None) is None:
        return
    if not config.stash.get(_FROZE, False):
        gc.freeze()
        config.stash[_FROZE] = True


_AT_EXIT: list[bool] = []


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Hand the frozen objects back in a clean-up registered before pytest's
    own (clean-ups run last-in first-out): pytest's end-of-session
    collections then skip what collection built.  And once per process,
    at interpreter exit, freeze everything: the collector's last pass
    would only tear down, object by object, memory the system takes back
    whole (0.6 s of a 14 s emulator sweep).  Devices and files are closed
    before that, explicitly (backend.close and the journal at
    unconfigure), not by the collector."""
    if os.environ.get("CTS_GC_FREEZE", "1") == "0":
        return
    config.add_cleanup(lambda: _thaw(config))
    if not _AT_EXIT:
        atexit.register(gc.freeze)
        _AT_EXIT.append(True)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After pytest's own first end-of-session collection (the unraisable-
    exception plugin's, at unconfigure: it finalizes the run's garbage and
    reports a failing ``__del__``), what the run left alive (every report
    of every case, the terminal's statistics) is frozen too, so that
    plugin's second full collection, at clean-up, walks none of it (0.08 s
    of a 10652-case serial sweep: 165k objects).  Handed back at clean-up
    with the rest (``_thaw``).  In every process of the suite: an xdist
    controller, which collects nothing, holds every worker's reports."""
    from cts.plugin import HARNESS

    if os.environ.get("CTS_GC_FREEZE", "1") == "0" or config.stash.get(HARNESS, None) is None:
        return
    gc.freeze()
    config.stash[_FROZE] = True


def _thaw(config: pytest.Config) -> None:
    if config.stash.get(_FROZE, False):
        gc.unfreeze()
        config.stash[_FROZE] = False
