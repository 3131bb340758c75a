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
with automatic collection paused (it makes no cyclic garbage).  At
unconfigure everything is handed back (``gc.unfreeze``): a process that
runs pytest again (the sweep launcher's warm-up, pytester) frees what its
sessions left.  ``CTS_GC_FREEZE=0`` leaves the collector alone.
"""

from __future__ import annotations

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


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_FROZE, False):
        gc.unfreeze()
        config.stash[_FROZE] = False
