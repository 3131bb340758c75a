"""What the driver self-tests share: a conformance sweep run in a subprocess
into a report folder of the test's own, and the journal rows it recorded.

A driver test runs against a real driver prepared beside the system (the
Intel CPU runtime from PyPI, or a ``scripts/*.sh`` preparation whose
``env.sh`` names an interpreter); where it is not prepared, the test skips
naming the command that prepares it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cts.report.record import read_record

ROOT = Path(__file__).resolve().parents[2]
# the on-disk cache of built OpenCL programs (--opencl-cache-dir), shared between runs when set
OPENCL_CACHE_ENV = "CTS_OPENCL_CACHE_DIR"
# a whole driver sweep (the Intel rotate sweep: 5 min on 2 idle cores, over 30 min on a loaded
# machine; PoCL's Intel MMA: 6 min cold)
SWEEP_TIMEOUT = 3600


def prepared_python(var: str, script: str, folder: str) -> str:
    """The interpreter ``. <folder>/env.sh`` exports as ``var``, or a skip
    naming the preparation to run."""
    py = os.environ.get(var)
    if not py:
        pytest.skip(
            f"{var} is not set: prepare the driver with `bash scripts/{script} {folder} .venv/bin/python`, "
            f'then `. {folder}/env.sh && "${var}" -m pytest tests/driver -m driver -k {script.removesuffix(".sh")}`'
        )
    return py


def opencl_cache() -> list[str]:
    d = os.environ.get(OPENCL_CACHE_ENV)
    return ["--opencl-cache-dir", d] if d else []


def mlir_tools_present() -> bool:
    return bool(
        os.environ.get("CTS_MLIR_TOOLS")
        or shutil.which("mlir-opt")
        or Path("/usr/lib/llvm-22/bin/mlir-opt").exists()
    )


def run(
    *args: str, python: str = sys.executable, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """``python *args`` in the checkout; the pytest variables of this run are
    left out (a sweep is a run of its own), every other variable is kept (the
    driver's env.sh set them)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    e.update(env or {})
    r = subprocess.run(
        [python, *args],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        timeout=SWEEP_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    tail = "\n".join(r.stdout.splitlines()[-2:])  # the run's summary (stderr: plugin warnings)
    print(f"$ {' '.join(args[:4])} ...: exit {r.returncode}\n{tail}")
    if check:
        assert r.returncode == 0, f"exit {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def sweep(report: Path, *args: str, python: str = sys.executable, env: dict | None = None, check=True):
    """``pytest *args --report-dir report`` (quiet, no cache), returning the
    outcome rows of its journal."""
    run(
        *("-m", "pytest", *args, "-q", "-p", "no:cacheprovider", "--report-dir", str(report)),
        python=python,
        env=env,
        check=check,
    )
    return rows(report)


def rows(report: Path) -> list[dict]:
    """The journal rows of a report folder that carry an outcome."""
    return [r for r in read_record([report / "journal"]).rows if r.get("outcome")]
