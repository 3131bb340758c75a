"""pytest option of the joint_matrix device path (registered in
``cts.plugin.ROOM_PLUGINS``).

* ``--joint-lowering spec|intel-cpu``: the form of the
  SPIR-V modules joint_matrix cases hand an OpenCL device
  (``cts.kernels.joint_spv``).  ``spec`` (default) is the spec-valid module:
  a device refusing it fails the case with its own words.  ``intel-cpu`` drops
  the declarations Intel's CPU runtime refuses: a deviation from the spec, recorded in the run's configuration (so their verdicts never merge
  with spec-form verdicts) and named in the report's notes.
"""

from __future__ import annotations

import pytest

from cts.kernels.joint_spv import LOWERINGS

__all__ = ["DEFAULT"]

DEFAULT = "spec"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--joint-lowering",
        default=DEFAULT,
        metavar="|".join(LOWERINGS),
        help="form of the joint_matrix SPIR-V modules on --backend opencl: spec (default, spec-valid); "
        "intel-cpu (without capabilities PackedCooperativeMatrixINTEL and "
        "CooperativeMatrixCheckedInstructionsINTEL, which Intel's CPU runtime refuses: a deviation the "
        "report names)",
    )


def _lowering(config: pytest.Config) -> str:
    return getattr(config.option, "joint_lowering", DEFAULT) or DEFAULT


def cts_backend_options(config: pytest.Config) -> dict:
    low = _lowering(config)
    if low not in LOWERINGS:
        raise pytest.UsageError(f"unknown --joint-lowering {low!r}; known: {', '.join(LOWERINGS)}")
    if config.option.backend != "opencl":
        if low != DEFAULT:
            raise pytest.UsageError("--joint-lowering needs --backend opencl")
        return {}
    return {"joint_lowering": low}


def cts_rerun_args(config: pytest.Config) -> list[str]:
    low = _lowering(config)
    return [] if low == DEFAULT else ["--joint-lowering", low]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """The deviation, once, in the run's notes (the report header)."""
    low = _lowering(config)
    if low == DEFAULT:
        return
    cases = (getattr(getattr(it, "callspec", None), "params", {}).get("case") for it in items)
    if not any(getattr(c, "family", "") == "joint_matrix" for c in cases):
        return
    from cts.plugin.record import note

    note(
        config,
        f"deviation: --joint-lowering {low}: joint_matrix {LOWERINGS[low].deviation}; "
        "these verdicts judge that module, not the spec-valid one",
    )
