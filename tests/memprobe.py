"""A pytest plugin for tests/test_memory.py (``-p tests.memprobe``): keeps a
weak reference to every numpy array of every case result and, at the end of
the session, prints how many are still alive (nothing of a finished case
may stay referenced: memory must stay flat in the number of cases)."""

from __future__ import annotations

import dataclasses
import gc
import weakref

import numpy as np

import cts.plugin as plugin

REFS: list[weakref.ref] = []
_check = plugin.CaseRunner.check


def _arrays(obj, depth: int = 0):
    if isinstance(obj, np.ndarray):
        yield obj
    elif depth < 3 and isinstance(obj, dict):
        for v in obj.values():
            yield from _arrays(v, depth + 1)
    elif depth < 3 and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _arrays(getattr(obj, f.name), depth + 1)


def check(self, case, runner, via=None, **kwargs):
    result = _check(self, case, runner, via=via, **kwargs)
    REFS.extend(weakref.ref(a) for a in _arrays(result))
    return result


plugin.CaseRunner.check = check


def pytest_sessionfinish(session):
    gc.collect()
    alive = sum(1 for r in REFS if r() is not None)
    print(f"\nMEMPROBE arrays={len(REFS)} alive={alive}")
