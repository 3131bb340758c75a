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

def pytest_unconfigure(config):  # after the plugin's (tryfirst), before pytest's end-of-session collections
    import gc
    print(f"UNCONFIGURE frozen={gc.get_freeze_count()} unfrozen={len(gc.get_objects())}")
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
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_demo.py").write_text(CASES)
    (tmp_path / "test_override.py").write_text(OVERRIDE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CTS_"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(env_extra or {})
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:xdist", "-p", "no:cacheprovider",
           "--no-report", "--rootdir", str(tmp_path), str(tmp_path), *extra]  # fmt: skip
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    return p.stdout


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


def test_setup_show_still_shows_the_fixtures(tmp_path):
    out = _run(tmp_path, "--setup-show", "-k", "demo")
    assert "SETUP    S cts" in out and "SETUP    F case" in out, out[-2000:]
    checks = re.findall(r"CHECK .*", out)
    assert checks and all("[] same=True" in c for c in checks), checks  # nothing filled: pytest did it


def test_collection_is_frozen_out_of_the_cyclic_collector(tmp_path):
    """cts/plugin/gcpolicy.py: what collection built is frozen while cases
    run; CTS_GC_FREEZE=0 leaves the collector alone."""
    out = _run(tmp_path, "-k", "demo")
    frozen = [int(x) for x in re.findall(r"CHECK .* frozen=(\d+)", out)]
    assert len(frozen) == 3 and min(frozen) > 1000, frozen
    # and before pytest's own end-of-session collections, what the run left alive too (they walk
    # nothing of it); a collection of the young generations first
    end = re.findall(r"UNCONFIGURE frozen=(\d+) unfrozen=(\d+)", out)
    assert len(end) == 1 and int(end[0][0]) > max(frozen) and int(end[0][1]) < 200, end
    out = _run(tmp_path, "-k", "demo", env_extra={"CTS_GC_FREEZE": "0"})
    off = [int(x) for x in re.findall(r" frozen=(\d+)", out)]
    assert off == [0, 0, 0, 0], off
