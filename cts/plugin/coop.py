"""pytest options of the cooperative-matrix family (registered in
``cts.plugin.ROOM_PLUGINS``).

* ``--coop-profile NAME``: the property table the case space is built from
  (``cts/profiles/NAME.json`` or a path to such a file).  Default: the
  entries the device reports when the backend can query them (Vulkan),
  otherwise ``h100``.
* ``--coop-api LIST``: which forms to enumerate: ``vk`` (SPIR-V for Vulkan,
  cases/test_coop_matrix.py), ``clspv`` (SPIR-V Kernel for
  cl_khr_cooperative_matrix) and ``clc`` (OpenCL C coop_mat proposal), both
  in cases/test_coop_opencl.py.  Default: what the backend runs (vk on
  Vulkan, clspv + clc on OpenCL), all three on the emulator.
* ``--assume-extension`` (the OpenCL room's option) is what lets OpenCL
  backends run kernels a device does not advertise.
"""

from __future__ import annotations

import pytest

from cts.families.coop import CoopCase, coop_cases, load_profile, profile_names

__all__ = ["coop_matrix_cases", "coop_state", "coop_ocl_table", "session_backend"]

APIS = ("vk", "clspv", "clc")
_STATE: dict = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--coop-profile",
        default=None,
        help=f"cooperative-matrix property table: {', '.join(profile_names())} or a JSON path "
        "(default: the device's own entries where the backend reports them, else h100)",
    )
    g.addoption(
        "--coop-api",
        default=None,
        help="cooperative-matrix forms to enumerate, comma-separated: vk, clspv, clc "
        "(default: vk on the vulkan backend, clspv,clc on opencl, all on the emulator)",
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config.option, "coop_profile"):
        return
    name = config.option.coop_profile
    if name is not None:
        try:
            load_profile(name)
        except (ValueError, KeyError, TypeError) as e:
            raise pytest.UsageError(f"--coop-profile: {e}") from None
    api = config.option.coop_api
    if api is not None:
        apis = tuple(a.strip() for a in api.split(",") if a.strip())
        bad = [a for a in apis if a not in APIS]
        if bad or not apis:
            raise pytest.UsageError(
                f"unknown --coop-api {', '.join(bad) or '(none)'}; known: {', '.join(APIS)}"
            )
    _STATE.clear()
    _STATE["config"] = config


def cts_rerun_args(config: pytest.Config) -> list[str]:
    out = []
    if config.option.coop_profile:
        out += ["--coop-profile", config.option.coop_profile]
    if config.option.coop_api:
        out += ["--coop-api", config.option.coop_api]
    return out


def session_backend():
    """The backend of this session (None before it is configured)."""
    config = _STATE.get("config")
    if config is None:
        return None
    from cts.plugin import HARNESS

    h = config.stash.get(HARNESS, None)
    return h.backend if h is not None else None


def coop_ocl_table(entries, sg: int):
    """The OpenCL draft table of this session's backend (variants per
    subgroup size, queries 0x107A / 0x107B; ``cts.families.coop_ocl_axes``),
    or None where the backend reports none (then the session's entries)."""
    backend = session_backend()
    fn = getattr(backend, "coop_ocl_table", None)
    return fn(entries, sg) if fn is not None else None


def coop_state() -> tuple[list, int, tuple[str, ...], str]:
    """(entries, subgroup size, apis, source) of this session."""
    config = _STATE.get("config")
    backend = session_backend()
    name = config.option.coop_profile if config is not None else None
    entries = sg = None
    source = ""
    if name is None and backend is not None and hasattr(backend, "coop_entries"):
        got = backend.coop_entries()  # None when the device cannot be queried
        if got is not None:
            entries, sg = got
            source = "device"
    if entries is None:
        prof = load_profile(name or "h100")
        entries, sg, source = list(prof.entries), prof.subgroup_size, f"profile {prof.name}"
    api = config.option.coop_api if config is not None else None
    if api:
        apis = tuple(a.strip() for a in api.split(",") if a.strip())
    else:
        apis = tuple(getattr(backend, "coop_apis", APIS))
    return entries, sg, apis, source


def coop_matrix_cases(tiers: tuple[str, ...]) -> list[CoopCase]:
    """The Vulkan form (``vk``) of the space, when this session's forms
    include it.  The OpenCL forms are the cases of ``cases/test_coop_opencl.py``
    (ids ``cl-spirv-...`` / ``cl-c-...``): enumerating them here too would
    run every OpenCL-form case twice under two ids."""
    entries, sg, apis, _ = coop_state()
    return coop_cases(entries, tiers, sg, ("vk",)) if "vk" in apis else []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Property entries the device reports with component types or scopes
    the suite cannot name get no case: the report says so (a coverage gap of
    the suite, not silence)."""
    from cts.plugin import HARNESS

    h = config.stash.get(HARNESS, None)
    lost = list(getattr(h.backend, "unexpressed", []) or []) if h is not None else []
    if lost and not hasattr(config, "workerinput"):
        from cts.plugin.record import note

        note(
            config,
            f"not realized by the suite: {len(lost)} reported cooperative-matrix entries have types or "
            f"scopes it cannot name, no case covers them: {'; '.join(lost[:8])}"
            + (" ..." if len(lost) > 8 else ""),
        )
