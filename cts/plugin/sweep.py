"""Sweep-level behaviour of the plugin: the run id handed to xdist workers,
crashed xdist workers journaled as ``crash`` rows by the controller, the
controller's end line, and the reports written at the end of a run
(controller only, from this run's journals plus those given to
``--resume``; docs/record.md)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cts.plugin.gcpolicy import paused_collection
from cts.report.exit_status import NOTHING_JUDGED, record_status
from cts.report.journal import check_run_id
from cts.report.record import read_record
from cts.report.status import missing_line, resumed_record, unfinished_lines
from cts.report.writer import write_record

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
        from cts.plugin import HARNESS
        from cts.plugin.record import journal_append

        name = crashitem.split("::")[-1]
        test, _, rest = name.partition("[")
        h = self.config.stash.get(HARNESS, None)
        journal_append(
            self.config,
            {
                "nodeid": crashitem,
                "family": test.removeprefix("test_"),
                "case_id": rest[:-1] if rest.endswith("]") else "",
                "outcome": "crash",
                "reason": str(report.longrepr),
                "backend": h.backend.name if h else "",
                "worker": "controller",
                "time": time.time(),
            },
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """Every worker journals under the controller's run id."""
        from cts.plugin.record import run_state

        st = run_state(self.config)
        if st is not None:
            node.workerinput["cts_run_id"] = st.run_id

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        """The controller learns the selection from the first worker that
        collected (after -k, --shard, --resume): the run's session header."""
        from cts.plugin.record import start_record

        start_record(self.config, len(ids))


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
    if getattr(config.option, "run_id", None) is not None:
        try:
            check_run_id(config.option.run_id)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
    if not getattr(config.option, "no_report", True):
        if not str(config.option.report_dir).strip():
            raise pytest.UsageError("--report-dir: empty path (name a folder, or give --no-report)")
        jdir = Path(config.option.report_dir) / "journal"
        try:  # a report folder that cannot be written is a usage error now, not an INTERNALERROR later
            if jdir.exists() and not jdir.is_dir():
                raise NotADirectoryError(20, "not a folder")
            probe = jdir if jdir.exists() else next(p for p in jdir.parents if p.exists())
            if not probe.is_dir() or not os.access(probe, os.W_OK):
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
        from cts.plugin.record import journal_append, journaled

        if journaled(item):
            journal_append(item.config, {"kind": "interrupted", "nodeid": item.nodeid, "time": time.time()})
        raise


def _stop_reason(session: pytest.Session) -> str:
    """Why the run stopped early: its own or (xdist) a worker's reason."""
    dsession = session.config.pluginmanager.get_plugin("dsession")
    return f"{session.shouldstop or ''} {getattr(dsession, 'shouldstop', '') or ''}".strip()


def _journal_failed(session: pytest.Session) -> bool:
    """A journal write failed in this process or (xdist) in a worker."""
    from cts.plugin.record import RUN

    st = session.config.stash.get(RUN, None)
    return bool(st is not None and st.write_error) or "cannot write the journal" in _stop_reason(session)


def _end_status(session: pytest.Session, exitstatus) -> str:
    from cts.plugin.record import RUN

    st = session.config.stash.get(RUN, None)
    if st is not None and st.write_error:
        return "stopped: " + st.write_error.removeprefix("cts: ")
    if "cannot write the journal" in _stop_reason(session):
        return "stopped: " + _stop_reason(session).removeprefix("cts: ")
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    if session.shouldfail or session.shouldstop:
        return f"stopped: {session.shouldfail or session.shouldstop}"
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        return "complete"
    return f"stopped: pytest exit status {int(exitstatus)}"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """Controller: the end line of the run, the reports (this run and the
    journals it resumed) and the exit status of the whole sweep."""
    config = session.config
    if hasattr(config, "workerinput") or not hasattr(config.option, "backend"):
        return
    from cts.plugin.record import journal_append, run_state

    tr = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str, **kw) -> None:
        if tr is not None:
            tr.write_line(line, **kw)
        else:
            print(line)

    st = run_state(config)
    if st is not None and st.session_written and not st.write_error:
        journal_append(
            config,
            {
                "kind": "end",
                "status": _end_status(session, exitstatus),
                "exitstatus": int(exitstatus),
                "selected": st.selected,
                "time": time.time(),
            },
        )
    if getattr(config.option, "journal_only", False):  # a shard of a sweep: the merge makes the report
        if st is not None and st.dir.exists():
            say(
                f"cts: journal of run {st.run_id} in {st.dir} (--journal-only: `python -m cts report` merges)"
            )
        if (st is not None and st.write_error) or "cannot write the journal" in _stop_reason(session):
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        _nothing_judged(session, say)
        return
    resume = [p for p in getattr(config.option, "resume", []) if os.path.exists(p)]
    sources = ([st.dir] if st is not None and st.dir.exists() else []) + resume
    if not sources:
        _nothing_judged(session, say)
        return
    with paused_collection():  # tens of thousands of rows, no cyclic garbage (cts/plugin/gcpolicy.py)
        rec = read_record(sources)
    mine = _cfg(config)
    if resume:  # the report of this run is about its configuration; the others are noted
        rec = resumed_record(rec, mine)
    if st is not None and not st.write_error and st.dir.exists():
        d = Path(config.option.report_dir)
        others = _other_runs(d / "journal", st.run_id, rec)
        extra = []
        if others:
            extra.append(
                {
                    "kind": "note",
                    "text": f"{d} also holds {len(others)} other run(s) not in this report "
                    f"({', '.join(others[:5])}{' ...' if len(others) > 5 else ''}): "
                    f"`python -m cts report {d} --out DIR` merges every run kept there",
                }
            )
        try:
            with paused_collection():
                written = write_record(rec, d, extra_notes=extra, aside=True)  # in line if multi-threaded
            for p in written:
                say(f"cts report: {p}")
        except OSError as e:  # the record is kept; its report is not: exit 3 whatever the verdicts
            say(f"cts report: {e}", red=True)
            # (also where a journal write error stopped an xdist run, which pytest-xdist ends as
            # "interrupted": whether the report still fits under the same limit depends on how many
            # rows the workers wrote before the stop, and the status must not)
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or _journal_failed(
                session
            ):
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
    for p in rec.problems[:5]:
        say(f"cts: journal problem: {p}", yellow=True)
    if st is not None and getattr(config.option, "numprocesses", None):  # the workers' notes, said once
        for text in dict.fromkeys(str(n.get("text")) for n in rec.notes if n.get("run") == st.run_id):
            say(f"cts: {text}", yellow=True)
    for line in unfinished_lines(rec.only(mine)) + [missing_line(rec, mine)]:  # e.g. after Ctrl-C: the
        if line:  # command that continues the run, on the terminal as in the report
            say(f"cts: {line}", yellow=True)
    if _journal_failed(session):  # (a worker's write error reaches the controller as its stop reason)
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        return
    if not resume and session.exitstatus != pytest.ExitCode.OK:
        _nothing_judged(session, say)
        return
    # a resumed sweep's exit status covers the whole sweep, not only this part; an expectations
    # entry that passes now (xpassed) is not a clean sweep either (as `python -m cts report`)
    status, why = record_status(rec, cfg=mine)
    if status and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        say(f"cts: the sweep is not clean: {why}")
    elif not status and resume and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK  # every case was already judged: a complete sweep
    else:
        _nothing_judged(session, say)


# what a case row's outcome counts as on the terminal: judged (a verdict, or a harness error)
_JUDGED_STATS = ("passed", "failed", "error", "xfailed", "xpassed")


def _self_test(nodeid: str) -> bool:
    """A node id of the suite's own tests (``tests/``), not a conformance case."""
    return Path(nodeid.split("::", 1)[0]).parent.name == "tests"


def _nothing_judged(session: pytest.Session, say) -> None:
    """A run that judged no case says so in one line: exit 5
    (``NOTHING_JUDGED``) when its backend found no device (no loader, no
    driver: a CI job that lost its device is not green), a clean 0 when
    the device exists and claims none of the selected cases."""
    from cts.plugin import HARNESS

    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    h = session.config.stash.get(HARNESS, None)
    if tr is None or h is None or session.exitstatus not in (pytest.ExitCode.OK, NOTHING_JUDGED):
        return
    stats = tr.stats
    if any(r for k in _JUDGED_STATS for r in stats.get(k, []) if getattr(r, "when", "call") != "teardown"):
        return
    skipped = [r for r in stats.get("skipped", []) if not _self_test(getattr(r, "nodeid", ""))]
    if not skipped:
        return
    reason = (h.device.extra or {}).get("reason")
    if reason:
        session.exitstatus = NOTHING_JUDGED
        say(
            f"cts: no case was judged: backend {h.backend.name} found no device ({reason}); "
            f"{len(skipped)} cases skipped; exit {NOTHING_JUDGED}",
            red=True,
        )
    else:
        say(
            f"cts: no case was judged: the device {h.device.name!r} claims none of the {len(skipped)} "
            "selected cases (all skipped, each with its reason in the report)"
        )


def _cfg(config: pytest.Config) -> str | None:
    from cts.plugin.record import current_cfg

    return current_cfg(config)


def _other_runs(jdir: Path, run_id: str, rec) -> list[str]:
    """Runs kept in the report folder that this report does not cover."""
    if not jdir.is_dir():
        return []
    mine = set(rec.runs)
    out = sorted(p.name for p in jdir.iterdir() if p.is_dir() and p.name != run_id and p.name not in mine)
    if any(p.suffix == ".jsonl" for p in jdir.iterdir()):
        out.append("schema-1 journals")
    return out


def _harness_errors(tr) -> int:
    return sum(1 for r in tr.stats.get("error", []) if getattr(r, "when", "") in ("setup", "call"))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Harness errors are said apart from device verdicts, in one line."""
    n = _harness_errors(terminalreporter)
    tool = sum(
        1 for r in terminalreporter.stats.get("error", []) if str(r.longrepr).startswith("TOOLCHAIN VERDICT")
    )
    if tool:
        terminalreporter.write_line(
            f"cts: {tool} toolchain verdicts (not device verdicts): the compiler between the suite and the "
            "device refused cases the spec allows; see the ERRORS section",
            red=True,
        )
        n -= tool
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
