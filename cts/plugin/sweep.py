"""Sweep-level behaviour of the plugin: crashed xdist workers are journaled
as ``crash`` rows by the controller, and the reports are written at the end
of a run (controller only, from the journals of all workers, plus the
journals given to ``--resume``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cts.report.journal import BAD_OUTCOMES, read_journals
from cts.report.markdown import write_reports

_CRASH_PLUGIN = "cts-crash-recorder"


class _CrashRecorder:
    """Controller-side: pytest-xdist reports a dead worker's in-flight case
    through ``pytest_handlecrashitem``; the worker could not journal it, so
    the controller does (the reader fills the case fields from the worker's
    start marker).  The sweep goes on: xdist restarts the worker."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report, sched) -> None:
        from cts.plugin import HARNESS, _journal

        j = _journal(self.config)
        if j is None:
            return
        name = crashitem.split("::")[-1]
        test, _, rest = name.partition("[")
        h = self.config.stash.get(HARNESS, None)
        j.append(
            {
                "nodeid": crashitem,
                "family": test.removeprefix("test_"),
                "case_id": rest[:-1] if rest.endswith("]") else "",
                "outcome": "crash",
                "reason": str(report.longrepr),
                "backend": h.backend.name if h else "",
                "worker": "controller",
                "time": time.time(),
            }
        )


# pytest-xdist stops scheduling after 4 x workers crashes; a driver that
# crashes on a whole family must not end the sweep, so the default is higher.
MAX_WORKER_RESTARTS = 500


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not hasattr(config.option, "backend"):
        return
    if hasattr(config.option, "maxworkerrestart") and config.option.maxworkerrestart is None:
        config.option.maxworkerrestart = str(MAX_WORKER_RESTARTS)
    if not config.pluginmanager.has_plugin(_CRASH_PLUGIN):
        config.pluginmanager.register(_CrashRecorder(config), _CRASH_PLUGIN)
    if not getattr(config.option, "no_report", True):
        if not str(config.option.report_dir).strip():
            raise pytest.UsageError("--report-dir: empty path (name a folder, or give --no-report)")
        jdir = Path(config.option.report_dir) / "journal"
        try:  # a report folder that cannot be written is a usage error now, not an INTERNALERROR later
            jdir.mkdir(parents=True, exist_ok=True)
            if not os.access(jdir, os.W_OK):
                raise PermissionError(13, "not writable")
        except OSError as e:
            raise pytest.UsageError(
                f"--report-dir: cannot write the journal to {jdir}: {e.strerror or e}"
            ) from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """A sweep interrupted by the user (Ctrl-C: KeyboardInterrupt inside a
    case) is not a crash of that case: an ``interrupted`` line cancels its
    start marker, so ``--resume`` runs it again.  (A process killed outright
    leaves only the start marker: that is recorded as ``crash``.)"""
    try:
        return (yield)
    except KeyboardInterrupt:
        from cts.plugin import _journal, _journaled

        j = _journal(item.config) if _journaled(item) else None
        if j is not None:
            j.append({"kind": "interrupted", "nodeid": item.nodeid, "time": time.time()})
        raise


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    config = session.config
    if hasattr(config, "workerinput") or getattr(config.option, "no_report", True):
        return
    if not hasattr(config.option, "backend"):
        return
    d = Path(config.option.report_dir)
    jdir = d / "journal"
    if not jdir.exists():
        return
    sources = [jdir] + [p for p in getattr(config.option, "resume", []) if os.path.exists(p)]
    rows = read_journals(sources, header=True)
    sessions = [r for r in rows if r.get("kind")]
    cases = [r for r in rows if not r.get("kind")]
    if not cases:
        return
    paths = write_reports(cases, d, sessions)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        for p in paths:
            tr.write_line(f"cts report: {p}")
    # a resumed sweep's exit status covers the whole sweep, not only this part
    bad = sum(1 for r in cases if r.get("outcome") in BAD_OUTCOMES)
    if getattr(config.option, "resume", None) and bad and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if tr is not None:
            tr.write_line(f"cts: {bad} cases recorded as failed/crash/timeout earlier in this resumed sweep")


def _harness_errors(tr) -> int:
    return sum(1 for r in tr.stats.get("error", []) if getattr(r, "when", "") in ("setup", "call"))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Harness errors are said apart from device verdicts, in one line."""
    n = _harness_errors(terminalreporter)
    if n:
        terminalreporter.write_line(
            f"cts: {n} harness errors (not device verdicts): the suite could not judge these cases "
            "(a host tool missing or failing, a suite defect); see the ERRORS section",
            red=True,
        )


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """JUnit (``--junitxml``): a harness error of the call phase is an
    ``<error>``, like pytest's own set-up errors, not a ``<failure>`` of the
    device (pytest's writer files every failed call as a failure; the
    testcase carries the property ``cts_outcome=error``)."""
    path = getattr(config.option, "xmlpath", None)
    if not path or hasattr(config, "workerinput") or not os.path.exists(path):
        return
    import xml.etree.ElementTree as ET

    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError):
        return
    moved: dict = {}
    for suite in tree.getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            fail = case.find("failure")
            if props.get("cts_outcome") == "error" and fail is not None:
                fail.tag = "error"
                moved[suite] = moved.get(suite, 0) + 1
    if not moved:
        return
    for suite, n in moved.items():
        suite.set("failures", str(int(suite.get("failures", "0")) - n))
        suite.set("errors", str(int(suite.get("errors", "0")) + n))
    tree.write(path, encoding="utf-8", xml_declaration=True)
