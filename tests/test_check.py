"""Verdict construction (cts/judge/verdict.py) and the plugin's guard against a pass
that judged nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from cts.judge import compare
from reference.dtypes import etype

ROOT = Path(__file__).resolve().parent.parent


def _where(s: int, r: int, c: int) -> tuple[int, int]:
    return c, r


def test_checked_mask_counts_and_reports_only_judged_elements():
    t = etype("i32")
    exp = np.arange(12, dtype=np.int64).reshape(1, 3, 4)
    act = exp.copy()
    act[0, 0, 0] += 1  # wrong, but not judged
    act[0, 2, 3] += 1  # wrong and judged
    ok = exp == act
    checked = np.ones_like(ok)
    checked[0, 0, :] = False
    v = compare(exp, act, t, ok, "I", _where, checked=checked)
    assert (v.passed, v.elements, v.failures) == (False, 8, 1)
    assert (v.mismatches[0].row, v.mismatches[0].col, v.mismatches[0].invocation) == (2, 3, 3)
    v_all = compare(exp, act, t, ok, "I", _where)
    assert (v_all.elements, v_all.failures) == (12, 2)
    v_none = compare(exp, act, t, ok, "I", _where, checked=np.zeros_like(ok))
    assert v_none.passed and v_none.elements == 0  # the plugin turns this into a failure


@pytest.mark.e2e
def test_plugin_fails_a_pass_that_checked_no_element(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["cts.plugin"]\n')
    (tmp_path / "test_vacuous.py").write_text(
        textwrap.dedent(
            """
            from types import SimpleNamespace
            from cts.judge import Verdict

            CASE = SimpleNamespace(family="intel_mma", id="vacuous", spec_row="", axes={}, tier="exact")

            def runner(case, backend, seed):
                return SimpleNamespace(verdict=Verdict(passed=True, elements=0, failures=0, rule="I"))

            def test_vacuous(cts):
                cts.check(CASE, runner)

            def test_real(cts):
                cts.check(CASE, lambda case, backend, seed: SimpleNamespace(
                    verdict=Verdict(passed=True, elements=4, failures=0, rule="I")))
            """
        )
    )
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-report", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert "1 failed, 1 passed" in p.stdout, p.stdout + p.stderr
    assert "vacuous verdict" in p.stdout
