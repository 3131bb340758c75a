"""pytest options of the OpenCL backend (registered through ROOM_PLUGINS).

* ``--opencl-prelude FILE|builtin``: OpenCL C prepended to every kernel, for
  testing a layered implementation of the built-ins on a device without them;
  ``builtin`` is the shipped ``cts/kernels/intel_mma_prelude.cl``.  The
  extensions a prelude declares (``//! cts-provides: ...``) count as present.
* ``--assume-extension NAME`` (repeatable): treat NAME as present.
* ``--opencl-cache-dir DIR|off``: on-disk program cache (default
  ``$XDG_CACHE_HOME/subgroup-matrix-cts/opencl-programs``).

With ``--backend opencl`` and a report dir, each process writes its build/run
statistics to ``<report-dir>/opencl-stats/<run id>/<worker>.json`` (scripts/bench.py
reads them for the build vs run split).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cts.errors import CaseError


def _registered(parser: pytest.Parser, name: str) -> bool:
    """Whether another room's plugin already declared option ``name`` (the
    cooperative-matrix room declares ``--assume-extension`` as a flag; then
    that flag means "every extension a case needs" here too)."""
    groups = [*getattr(parser, "_groups", ()), getattr(parser, "_anonymous", None)]
    return any(name in opt.names() for g in groups if g is not None for opt in g.options)


def assumed_extensions(config: pytest.Config) -> tuple[str, ...]:
    """``--assume-extension`` values as names; ``*`` = every extension."""
    v = getattr(config.option, "assume_extension", None)
    if v is True:
        return ("*",)
    if not v:
        return ()
    return tuple(v)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--opencl-prelude",
        default=None,
        metavar="FILE|builtin",
        help="OpenCL C prepended to every OpenCL kernel (a layered implementation of the "
        "built-ins); 'builtin' = the shipped prelude implementing the three Intel "
        "subgroup-MMA extensions with subgroup broadcasts",
    )
    if not _registered(parser, "--assume-extension"):
        g.addoption(
            "--assume-extension",
            action="append",
            nargs="?",
            const="*",
            default=[],
            metavar="NAME",
            help="treat OpenCL extension NAME as supported by the device (repeatable); "
            "without NAME: every extension a case needs",
        )
    g.addoption(
        "--opencl-cache-dir",
        default=None,
        metavar="DIR|off",
        help="on-disk cache of built OpenCL programs (default ~/.cache/subgroup-matrix-cts/opencl-programs)",
    )


def _given(config: pytest.Config) -> bool:
    o = config.option
    return bool(o.opencl_prelude or o.opencl_cache_dir or assumed_extensions(config))


def cts_backend_options(config: pytest.Config) -> dict:
    o = config.option
    if _given(config) and o.backend != "opencl":
        raise pytest.UsageError(
            "--opencl-prelude / --assume-extension / --opencl-cache-dir need --backend opencl"
        )
    if o.backend != "opencl":
        return {}
    return {
        "opencl_prelude": o.opencl_prelude,
        "opencl_assume_extensions": assumed_extensions(config),
        "opencl_cache_dir": o.opencl_cache_dir,
    }


def cts_rerun_args(config: pytest.Config) -> list[str]:
    o = config.option
    if o.backend != "opencl":
        return []
    out: list[str] = []
    if o.opencl_prelude:
        out += ["--opencl-prelude", o.opencl_prelude]
    if isinstance(o.assume_extension, list):  # a flag form is re-added by its owner
        for e in o.assume_extension:
            out += ["--assume-extension"] if e == "*" else ["--assume-extension", e]
    return out


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """The child-process limit of assumed-extension kernels is checked
    before any case runs: a malformed or too short one is a usage error,
    never a hung-kernel verdict."""
    if getattr(config.option, "backend", None) != "opencl":
        return
    from cts.backends.opencl_coop import child_timeout_s

    try:
        child_timeout_s()
    except CaseError as e:
        raise pytest.UsageError(str(e)) from None


def _stats_dir(config: pytest.Config) -> Path | None:
    """``<report-dir>/opencl-stats/<run id>/``: each run its own (no run
    deletes another's files)."""
    from cts.plugin.record import run_state

    st = run_state(config)
    return Path(config.option.report_dir) / "opencl-stats" / st.run_id if st is not None else None


def pytest_unconfigure(config: pytest.Config) -> None:
    from cts.plugin import HARNESS

    h = config.stash.get(HARNESS, None)
    stats = getattr(getattr(h, "backend", None), "stats", None)
    if stats is None or config.option.no_report or not stats.launches + stats.compiled + stats.disk_hits:
        return
    d = _stats_dir(config)
    if d is None:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    try:
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{worker}-{os.getpid()}.json").write_text(json.dumps(stats.as_dict()))
    except OSError:  # statistics only: a full disk is reported by the journal, not here
        pass
