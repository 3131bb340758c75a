"""Memory stays flat in the number of cases: nothing of a
finished case (operands, expected and actual arrays) stays referenced once
its journal row is written."""

from __future__ import annotations

import re

import pytest

from tests.test_sweep import run_cts


@pytest.mark.e2e
def test_a_finished_cases_arrays_are_freed(tmp_path):
    p = run_cts(
        "cases/test_intel_mma.py", "-q", "-p", "no:randomly", "-p", "no:xdist", "-p", "tests.memprobe",
        "-k", "sg8 and (i8_i8 or bf16_bf16)", "--report-dir", str(tmp_path), "-s",
    )  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:]
    m = re.search(r"MEMPROBE arrays=(\d+) alive=(\d+)", p.stdout)
    assert m, p.stdout[-2000:]
    arrays, alive = int(m[1]), int(m[2])
    assert arrays > 100  # the probe saw the cases' arrays
    assert alive == 0, f"{alive} of {arrays} result arrays of finished cases are still referenced"
