"""The record of this run (README "The record of a sweep"): its run id
(the controller's, handed to xdist workers by ``cts.plugin.sweep``), the
configuration its verdicts belong to (``run_ident``), this process's
journal under ``<report-dir>/journal/<run id>/`` (opened on the first row,
so ``--co`` or an empty selection writes nothing) and the controller's
session header once the selection is known."""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import pytest

from cts.plugin.keys import HARNESS, RESUMED
from cts.report.journal import Journal, JournalWriteError, file_header, ident_key, new_run_id

__all__ = [
    "journaled",
    "note",
    "resumed_runs",
    "RUN",
    "RunState",
    "run_state",
    "journal_append",
    "start_record",
    "run_ident",
    "current_cfg",
]


def _harness(config: pytest.Config):
    return config.stash.get(HARNESS, None)


def _is_case(item: pytest.Item) -> bool:
    return journaled(item)


class RunState:
    """This process's part of the run: the run id (the controller's, handed
    to xdist workers), the configuration it records under, its journal
    (opened on the first row: ``--co`` or an empty selection writes
    nothing) and the first write error, after which the run stops."""

    def __init__(self, run_id: str, report_dir: Path):
        self.run_id = run_id
        self.dir = report_dir / "journal" / run_id
        self.journal: Journal | None = None
        self.write_error = ""
        self.session_written = False
        self.selected: int | None = None
        self.pending: list[dict] = []  # notes written before the first case row of this process


RUN = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState | None:
    st = config.stash.get(RUN, None)
    if st is not None:  # made only when the run records (below): the per-row fast path
        return st
    if getattr(config.option, "no_report", True) or _harness(config) is None:
        return None
    if st is None:
        worker_run = getattr(config, "workerinput", {}).get("cts_run_id")
        rid = worker_run or config.option.run_id or new_run_id()
        st = config.stash[RUN] = RunState(rid, Path(config.option.report_dir))
    return st


def _journal(config: pytest.Config) -> Journal | None:
    st = run_state(config)
    if st is None or st.write_error:
        return None
    if st.journal is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        prefix = getattr(config.option, "cts_journal_prefix", "")
        st.journal = Journal(
            st.dir / f"{prefix}{worker}-{os.getpid()}.jsonl",
            file_header(st.run_id, run_ident(config), worker, *_shared_fields(config)),
        )
    return st.journal


def _shared_fields(config: pytest.Config) -> tuple[dict, str]:
    """The header defaults and rerun tail of this process's journal: the
    fields its case lines leave out (``cts.report.journal.with_defaults``)."""
    h = _harness(config)
    return dict(h.row_base), h.rerun_tail


def journal_append(config: pytest.Config, row: dict, session: pytest.Session | None = None) -> bool:
    """Append one row to this process's journal.  A write that fails (disk
    full, a file-size limit, the folder removed) stops the run with one
    line; every row written before stays.  False when nothing was written."""
    j = _journal(config)
    if j is None:
        return False
    st = config.stash[RUN]
    if not j.opened and row.get("kind") == "note":  # kept until this process records a case: a run
        st.pending.append(row)  # that selects nothing writes nothing
        return True
    try:
        for r in [*st.pending, row]:
            j.append(r)
        st.pending.clear()
        j.watch_fatal_signals()  # once per process, beside its journal
        return True
    except JournalWriteError as e:
        st = config.stash[RUN]
        st.write_error = f"cts: {e}; the run stops (every row written before is kept; --resume continues)"
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(st.write_error, red=True)
        else:
            sys.stderr.write(st.write_error + "\n")
        if session is not None:
            session.shouldstop = st.write_error
        return False


def _device_fields(h) -> dict:
    """The device of the session header; the emulator's version is the
    suite's own (the emulator is part of it), so the report's "device
    version" is never empty for it."""
    dev = h.device.as_dict()
    if not dev.get("version") and h.backend.name == "emulator":
        from cts import __version__

        dev["version"] = f"cts {__version__} (the suite's emulator)"
    return dev


def session_header(config: pytest.Config, selected: int) -> dict:
    h = _harness(config)
    import numpy

    return {
        "kind": "session",
        "run": config.stash[RUN].run_id,
        "selected": selected,
        "resumes": resumed_runs(config),
        "backend": h.backend.name,
        "device": _device_fields(h),
        "seed": h.seed,
        "profile": h.profile.name,
        "tiers": list(h.tiers),
        "subgroups": h.subgroups,
        "command": _command(),
        **({"sweep": os.environ[_SWEEP]} if os.environ.get(_SWEEP) else {}),
        "cwd": os.getcwd(),
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "pytest": pytest.__version__,
        "platform": platform.platform(),
        "options": {
            k: getattr(config.option, k, None)
            for k in (
                "shard",
                "shard_durations",
                "resume",
                "expectations",
                "timeout",
                "numprocesses",
                "keyword",
            )
            if getattr(config.option, k, None) not in (None, "", [])
        },
        "time": time.time(),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
    }


# set by ``python -m cts sweep`` in each shard's environment: the launcher's command line, which
# resumes the whole sweep (``cts.report.status.resume_command``); the name is cts.launch.SWEEP_COMMAND
_SWEEP = "CTS_SWEEP_COMMAND"


def _command() -> str:
    """This run's command line as a person would type it again."""
    argv = list(sys.argv)
    if argv and os.path.basename(argv[0]) in ("pytest", "py.test", "__main__.py"):
        argv[0] = "pytest"  # `python -m pytest` / the venv's script path
    return shlex.join(argv)


def start_record(config: pytest.Config, selected: int, session: pytest.Session | None = None) -> None:
    """The controller's session header, once the run knows it runs cases
    (``selected`` > 0): nothing is written for ``--co`` or an empty
    selection, except by a shard of a sweep (``--shard``): its header says
    the shard ran and selected nothing, so the merged run is not taken for
    one that lacks a shard."""
    st = run_state(config)
    if st is None or st.session_written or hasattr(config, "workerinput"):
        return
    if selected <= 0 and not getattr(config.option, "cts_shard", None):
        return
    st.session_written = True
    st.selected = selected
    journal_append(config, session_header(config, selected), session=session)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Single process: the selection is known here (xdist: the controller
    learns it from the workers, ``cts.plugin.sweep``)."""
    config = session.config
    if hasattr(config, "workerinput") or getattr(config.option, "collectonly", False):
        return
    if getattr(config.option, "numprocesses", None) and config.pluginmanager.has_plugin("dsession"):
        return
    start_record(config, sum(1 for it in session.items if _is_case(it)), session)


def _option_value(v: str) -> str:
    """A file named by an option is recorded by name and content hash (the
    same prelude on two machines is one configuration; an edited one is
    another)."""
    try:
        if v and os.path.isfile(v):
            import hashlib

            with open(v, "rb") as fh:
                return f"{os.path.basename(v)}@sha256:{hashlib.sha256(fh.read()).hexdigest()[:16]}"
    except OSError:
        pass
    return v


def run_ident(config: pytest.Config) -> dict:
    """The configuration this run's verdicts belong to (journal ``ident``):
    the device's identity and every option that changes a verdict (the
    rerun arguments of the rooms: preludes, assumed extensions, coop
    profile and forms, emulator model, ...)."""
    h = _harness(config)
    d = h.device
    extra = h.backend.identity() or {}
    room: list[str] = []
    # in the order of the plugins' names: get_plugins() is a set, its order differs between the
    # xdist controller and its workers, and so did the configuration key of one run
    for _name, plugin in sorted(config.pluginmanager.list_name_plugin(), key=lambda np: str(np[0])):
        fn = getattr(plugin, "cts_rerun_args", None)
        if callable(fn):
            room += [_option_value(str(a)) for a in fn(config)]
    return {
        "backend": h.backend.name,
        "device": extra.get("device", d.name),
        "platform": d.platform,
        "driver": d.driver,
        "version": d.version,
        "faults": list(extra.get("faults", [])),
        "seed": h.seed,
        "profile": h.profile.name,
        "tiers": list(h.tiers),
        "subgroups": h.subgroups,
        "options": room,
    }


def current_cfg(config: pytest.Config) -> str | None:
    """The configuration key of this run (None without a harness)."""
    if _harness(config) is None:
        return None
    return ident_key(run_ident(config))


def resumed_runs(config: pytest.Config) -> list[str]:
    """The run ids of the journals given to ``--resume`` (recorded in the
    session header: a complete resumed run covers the runs it continues)."""
    rec = config.stash.get(RESUMED, None)
    return sorted(rec.runs) if rec is not None else []


def note(config: pytest.Config, text: str) -> None:
    """A note said once on the terminal and kept in the journal (so the
    report has it).  An xdist worker only journals it (the first worker:
    every worker makes the same note); the controller says it at the end
    (``cts.plugin.sweep``), so it is printed once, not as a warning per
    worker."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"cts: {text}", yellow=True)
        else:
            warnings.warn(pytest.PytestWarning(text), stacklevel=2)
    if (worker or "gw0") != "gw0" or config.option.no_report:
        return
    journal_append(config, {"kind": "note", "text": text, "time": time.time()})


def journaled(item: pytest.Item) -> bool:
    """Every test of the conformance modules is journaled (a case, or a
    check of its own such as a rejected capability), not the self-tests."""
    return isinstance(item, pytest.Function) and (
        "case" in item.fixturenames or Path(str(item.path)).parent.name == "cases"
    )
