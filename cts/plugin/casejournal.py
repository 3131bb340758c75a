"""The journal row of every case: a start marker before it runs (so a
process that dies inside it leaves a ``crash`` row), and its outcome after,
with the one distinction the suite's verdicts rest on: a failure is the
device's (``failed``) only when the device got it wrong; a host tool, a
generator bug or a harness fault is an ``error`` (harness_cause)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cts.errors import CaseError, HarnessError, ToolchainError
from cts.plugin import FIELDS, HARNESS, RECORD, Harness, fill_known_fixtures
from cts.plugin.record import journal_append, journaled
from cts.report.journal import layer_of

__all__ = ["harness_cause"]


def _case_fields(item: pytest.Item) -> dict:
    """Family, id, spec row, axes and tier of a case item (from what
    ``cts.check`` recorded, else from the ``case`` parameter, else from the
    module ``cases/test_<family>.py`` and the pytest id)."""
    rec = item.stash.get(RECORD, {})
    case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
    if not rec and getattr(case, "family", "") and getattr(case, "id", ""):  # every field from the case
        return {
            "nodeid": item.nodeid,
            "family": case.family,
            "case_id": case.id,
            "spec_row": getattr(case, "spec_row", ""),
            "axes": getattr(case, "axes", {}),
            "tier": getattr(case, "tier", ""),
        }
    return _case_fields_slow(item, rec, case)


def _case_fields_slow(item: pytest.Item, rec: dict, case) -> dict:
    module_family = Path(str(item.path)).stem.removeprefix("test_")
    own_id = item.callspec.id if hasattr(item, "callspec") else item.name
    return {
        "nodeid": item.nodeid,
        "family": rec.get("family") or getattr(case, "family", "") or module_family,
        "case_id": rec.get("case_id") or getattr(case, "id", "") or f"{item.originalname}[{own_id}]",
        "spec_row": rec.get("spec_row") or getattr(case, "spec_row", ""),
        "axes": rec.get("axes") or getattr(case, "axes", {}),
        "tier": rec.get("tier") or getattr(case, "tier", ""),
    }


def _timeout_of(item: pytest.Item, h: Harness) -> float:
    """The pytest-timeout limit of a case (marker, option, ini), 0 if none."""
    mark = item.get_closest_marker("timeout")
    if mark is not None and mark.args:
        return float(mark.args[0] or 0)
    return h.timeout_option()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Journal a start marker before the case runs: if the process dies
    inside it, the reader turns the marker into a ``crash`` row."""
    h = item.config.stash.get(HARNESS, None)
    if h is None:
        return
    h.item = item  # the case the session's ``cts`` fixture judges next
    fill_known_fixtures(item, h)
    if not journaled(item):
        return
    fields = item.stash[FIELDS] = _case_fields(item)
    journal_append(
        item.config,
        {
            "kind": "start",
            **fields,  # backend, device, driver, seed, profile, worker, rerun: in the journal's header
            "timeout_s": _timeout_of(item, h),
            "time": time.time(),
        },
        session=item.session,
    )


def _is_timeout(report) -> bool:
    """pytest-timeout (signal method) fails the case with its own message."""
    return report.failed and "from pytest-timeout" in str(report.longrepr)


def harness_cause(call) -> str | None:
    """Why a failed call is the suite's, not the device's: a ``HarnessError``
    (a host tool missing or failing, a module the suite generated that a
    tool rejects), or an exception no device verdict raises (a bug of the
    suite: TypeError, KeyError, ...).  None for a device verdict: a check
    that failed (``pytest.fail`` with the mismatches, an assertion of a
    conformance test) or a ``CaseError`` (the driver refused or failed)."""
    if call.excinfo is None:
        return None
    exc = call.excinfo.value
    if isinstance(exc, HarnessError):
        return "harness"
    if isinstance(exc, (AssertionError, CaseError, pytest.fail.Exception)):
        return None
    if isinstance(exc, Exception):
        return "suite"
    return None  # KeyboardInterrupt, pytest outcomes: not a case result


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report, config):
    """A harness error is shown as ERROR (``E``), counted with pytest's own
    errors, never as a FAILED device verdict."""
    if report.when == "call" and getattr(report, "cts_outcome", None) == "error":
        return "error", "E", ("ERROR", {"red": True})
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    _journal_report(item, call, report)
    return report


def _journal_report(item: pytest.Item, call, report) -> None:
    """The journal row of a finished phase (call, or a setup that did not pass)."""
    h = item.config.stash.get(HARNESS, None)
    if h is None or not journaled(item):
        return
    phase_done = report.when == "call" or (report.when == "setup" and not report.passed)
    if not phase_done:
        return
    rec = item.stash.get(RECORD, {})
    if report.skipped and hasattr(report, "wasxfail"):
        outcome_name = "xfailed"
    elif report.passed and hasattr(report, "wasxfail"):
        outcome_name = "xpassed"
    elif report.skipped:
        outcome_name = "skipped"
    elif _is_timeout(report) or (report.failed and rec.get("timeout")):
        outcome_name = "timeout"
    elif report.failed and report.when == "call" and (cause := harness_cause(call)):
        outcome_name = "error"
        report.cts_outcome = "error"  # read by pytest_report_teststatus (also on the xdist controller)
        if cause == "harness":  # the message says it all; a traceback adds nothing
            tool = isinstance(call.excinfo.value, ToolchainError)
            what = "TOOLCHAIN VERDICT [layer: toolchain]" if tool else "HARNESS ERROR [layer: suite]"
            report.longrepr = f"{what} (not a device verdict): {call.excinfo.value}"
        else:  # a suite defect (an exception no verdict raises): the traceback is the evidence
            report.sections.append(("cts", "[layer: suite] a defect of the suite, not a device verdict"))
    elif report.failed:
        outcome_name = "failed" if report.when == "call" else "error"
    else:
        outcome_name = "passed"
    reason = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    elif hasattr(report, "wasxfail"):
        reason = report.wasxfail
    elif report.failed:
        reason = str(report.longrepr)[:4000]
    verdict = rec.get("verdict") or {}
    fields = item.stash.get(FIELDS, None)
    if fields is None or (rec and (rec["family"], rec["case_id"]) != (fields["family"], fields["case_id"])):
        fields = _case_fields(item)  # what cts.check recorded names the case better than its parameter
    row = {
        **fields,
        "outcome": outcome_name,
        "reason": reason,
        "duration": round(report.duration, 6),
        "max_ratio": rec.get("max_ratio"),
        "max_error": rec.get("max_error"),
        "rule": verdict.get("rule"),
        "verdict": rec.get("verdict"),
        "error": rec.get("error"),
        "time": time.time(),
        **({"toolchain": rec["toolchain"]} if rec.get("toolchain") else {}),
        **({"forced": rec["forced"]} if rec.get("forced") else {}),
        **({"findings": rec["findings"]} if rec.get("findings") else {}),
    }
    layer = layer_of(row)  # device, toolchain or suite on every non-pass (cts.errors.LAYERS)
    if layer:
        row["layer"] = layer
    if rec.get("forced"):
        report.cts_forced = rec["forced"]  # read by pytest_sessionfinish (also on the xdist controller)
    # JUnit XML (--junitxml) carries these as <property> of the test case
    # (junitxml reads the item's properties from the teardown report)
    if getattr(item.config.option, "xmlpath", None):  # only for --junitxml: every report carries them
        props = {**h.row_base, **row}
        for key in (
            "family",
            "case_id",
            "outcome",
            "layer",
            "toolchain",
            "forced",
            "max_ratio",
            "seed",
            "device",
        ):
            if props.get(key) not in (None, ""):
                item.user_properties.append((f"cts_{key}", str(props[key])))
    journal_append(item.config, row, session=item.session)
    for key in (RECORD, FIELDS):  # journaled: nothing of the case stays with its item
        if key in item.stash:
            del item.stash[key]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """Forced cases (run only because of ``--assume-extension``: the device
    does not list what they need) are not conformance verdicts: when they
    are the only failures, the run's exit status is that of its
    conformance cases (the sweep's end, run after this, reads the record
    the same way)."""
    config = session.config
    if hasattr(config, "workerinput") or session.exitstatus != pytest.ExitCode.TESTS_FAILED:
        return
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    bad = [r for k in ("failed", "error") for r in tr.stats.get(k, []) if getattr(r, "when", "") != "collect"]
    if bad and all(getattr(r, "cts_forced", None) for r in bad):
        session.exitstatus = pytest.ExitCode.OK
