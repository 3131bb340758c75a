"""Sweep-level behaviour of the plugin: the reports written at the end of a
run (controller only, from the journals of all workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .journal import read_journals
from .report import write_reports


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
    rows = read_journals([jdir], header=True)
    sessions = [r for r in rows if r.get("kind") == "session"]
    cases = [r for r in rows if r.get("kind") != "session"]
    if not cases:
        return
    paths = write_reports(cases, d, sessions)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        for p in paths:
            tr.write_line(f"cts report: {p}")
