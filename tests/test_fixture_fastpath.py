"""The plugin fills a case item's ``case``, ``cts``, ``pytestconfig`` and
``request`` itself (cts.plugin.fill_known_fixtures: pytest would resolve
them again for every item).  These tests prove the values are the ones
pytest's own fixture resolution gives, that a module's own definition of
such a fixture is left to pytest, and that --setup-show still shows them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
import pytest
from _pytest.fixtures import TopRequest
pytest_plugins = ["cts.plugin"]
BEFORE = {}  # nodeid -> what was in funcargs when pytest's fixture filling began
_fill = TopRequest._fillfixtures

def _record(self):
    BEFORE[self._pyfuncitem.nodeid] = dict(self._pyfuncitem.funcargs)
    return _fill(self)

TopRequest._fillfixtures = _record

@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    it = pyfuncitem
    if "case" not in it.fixturenames:
        return None
    filled = BEFORE[it.nodeid]
    # pytest's own resolution of each, asked for now (what it would have put there)
    own = {k: it._request.getfixturevalue(k) for k in filled}
    same = all(filled[k] is own[k] for k in filled)
    import gc
    frozen = gc.get_freeze_count()
    print(f"CHECK {it.name} {sorted(filled)} same={same} case={it.funcargs['case'].id} frozen={frozen}")
    return None

import atexit, gc
FULL = []  # freeze counts at pytest's end-of-session full collections (after the last case)

def _full(phase, info):
    if phase == "start" and info["generation"] == 2:
        FULL.append(gc.get_freeze_count())

@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    gc.callbacks.append(_full)
    atexit.register(lambda: print("END-COLLECTIONS", FULL))
"""

OLD_GARBAGE = """
import gc, os
import pytest

class Holder:  # a cycle with a finalizer, old (in the oldest generation) when it is dropped
    def __init__(self):
        self.me = self
    def __del__(self):
        open(os.environ["CTS_TEST_MARK"], "w").write("finalized")
        raise RuntimeError("boom in __del__")

@pytest.fixture(scope="session")
def holder():
    h = Holder()
    gc.collect()
    gc.collect()
    yield h

def test_old_garbage(holder):
    assert holder.me is holder
"""

CASES = """
import pytest
from types import SimpleNamespace as NS

def three(tiers):
    return [NS(id=f"c{i}", family="demo", value=i) for i in range(3)]

@pytest.mark.cts_cases.with_args(three)
def test_demo(case, cts):
    assert case.value in (0, 1, 2) and hasattr(cts, "check")
"""

OVERRIDE = """
import pytest
from types import SimpleNamespace as NS

@pytest.fixture
def cts():
    return "the module's own"

def two(tiers):
    return [NS(id=f"o{i}", family="demo", value=i) for i in range(2)]

@pytest.mark.cts_cases.with_args(two)
def test_override(case, cts):
    assert cts == "the module's own"
"""


def _run(tmp_path: Path, *extra: str, env_extra: dict | None = None) -> str:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_demo.py").write_text(CASES)
    (tmp_path / "test_override.py").write_text(OVERRIDE)
    (tmp_path / "test_old_garbage.py").write_text(OLD_GARBAGE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(env_extra or {})
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:xdist", "-p", "no:cacheprovider",
           "--no-report", "--rootdir", str(tmp_path), str(tmp_path), *extra]  # fmt: skip
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    return p.stdout + p.stderr  # (an unraisable-exception warning at unconfigure goes to stderr)


@pytest.mark.e2e
def test_filled_values_are_pytests_own(tmp_path):
    out = _run(tmp_path)
    checks = re.findall(r"CHECK .*", out)
    assert len(checks) == 5, out[-2000:]
    demo = [c for c in checks if "test_demo" in c]
    assert len(demo) == 3
    for c in demo:  # all four filled by the plugin, each the very object pytest resolves
        assert "['case', 'cts', 'pytestconfig', 'request'] same=True" in c, c
    assert {c.split("case=")[1].split()[0] for c in demo} == {"c0", "c1", "c2"}
    for c in checks:
        if "test_override" in c:  # the module's own ``cts``: left to pytest (its test asserts the value)
            assert "'cts'" not in c and "same=True" in c, c


@pytest.mark.e2e
def test_setup_show_still_shows_the_fixtures(tmp_path):
    out = _run(tmp_path, "--setup-show", "-k", "demo")
    assert "SETUP    S cts" in out and "SETUP    F case" in out, out[-2000:]
    checks = re.findall(r"CHECK .*", out)
    assert checks and all("[] same=True" in c for c in checks), checks  # nothing filled: pytest did it


@pytest.mark.e2e
def test_collection_is_frozen_out_of_the_cyclic_collector(tmp_path):
    """cts/plugin/gcpolicy.py: what collection built is frozen while cases
    run; after pytest's first end-of-session full collection, what the run
    left alive too (its second walks none of it), never before it: the
    run's old cyclic garbage is still finalized and a failing ``__del__``
    still reported.  CTS_GC_FREEZE=0 leaves the collector alone."""
    mark = tmp_path / "finalized"
    out = _run(tmp_path / "on", "-k", "demo or old_garbage", env_extra={"CTS_TEST_MARK": str(mark)})
    frozen = [int(x) for x in re.findall(r"CHECK .* frozen=(\d+)", out)]
    assert len(frozen) == 3 and min(frozen) > 1000, frozen
    assert mark.read_text() == "finalized" and "boom in __del__" in out, out[-2000:]
    end = [int(x) for x in re.search(r"END-COLLECTIONS \[(.*)\]", out).group(1).split(",")]
    assert len(end) == 2 and end[0] < end[1], end  # the run's objects frozen between the two
    mark.unlink()
    out = _run(
        tmp_path / "off",
        "-k",
        "demo or old_garbage",
        env_extra={"CTS_GC_FREEZE": "0", "CTS_TEST_MARK": str(mark)},
    )
    off = [int(x) for x in re.findall(r" frozen=(\d+)", out)]
    assert off == [0, 0, 0], off
    assert mark.read_text() == "finalized"
