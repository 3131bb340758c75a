"""``python -m cts sweep -j N [pytest options]``: one sweep run as N shard
processes on this machine, merged into one report.

pytest-xdist's controller handles every report of every item, and on a small
machine it competes with the workers for the cores (docs/parallel.md, docs/benchmarks.md); a
``--shard k/N`` process collects and runs only its own slice and writes only
its own journal, so N of them scale with the cores.  This launcher starts
``pytest <options> -p no:xdist --shard k/N --run-id RUN --journal-only``
for k = 1..N at once (one run id: the shards are one run), waits for all,
then merges the run's journals into ``report.md``, ``report.html`` and
``results.csv`` in the report folder, as ``python -m cts report`` does.  The
exit status is the merged sweep's (0 clean, 1 not clean), or the worst
pytest status of a shard that could not run (2 interrupted, 3 internal
error, 4 usage error).  Each shard's terminal output is kept in
``<report-dir>/logs/<run id>/shardKofN.log``.

A CI job matrix does the same across machines: each job runs one
``--shard k/N --run-id $PIPELINE --journal-only``, one last job runs
``python -m cts report`` on all journals (docs/parallel.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from cts.argv import option_value as _option
from cts.argv import option_values as _options
from cts.argv import without as _without
from cts.report.journal import check_run_id, new_run_id
from cts.report.junit import merge_junit

__all__ = ["main"]

_OWN = ("-n", "--numprocesses", "--shard", "--journal-only")  # options the launcher sets itself


def _refuse(args: list[str]) -> str | None:
    """Options the launcher sets itself (one-line usage error)."""
    for a in args:
        flag = a.split("=", 1)[0]
        if flag in _OWN or re.fullmatch(r"-n\d+", a):
            return f"{flag}: the launcher shards the run itself (-j N); leave it out"
        if flag == "--no-report":
            return "--no-report: a sweep writes its journal (use pytest directly for a throw-away run)"
    return None


def _suite_value_options() -> set[str]:
    """The suite's own options that take a value (``--report-dir DIR``,
    ``--resume PATH``, ...), as its plugin modules declare them (their
    ``pytest_addoption`` called with a recorder, not pytest's parser).
    Best effort: empty if a module cannot be read."""
    import importlib
    import inspect

    names: set[str] = set()

    class Recorder:
        def getgroup(self, *_a, **_k):
            return self

        def addoption(self, *opts, **kw):  # a value always follows (not nargs "?": it may stand alone)
            if kw.get("action", "store") in ("store", "append") and kw.get("nargs") in (None, 1):
                names.update(o for o in opts if o.startswith("--"))

        def addini(self, *_a, **_k):
            pass

        def register(self, *_a, **_k):  # as the plugin manager: the rooms are read below
            pass

    try:
        main_plugin = importlib.import_module("cts.plugin")
        for mod in ("cts.plugin", *main_plugin.ROOM_PLUGINS):
            fn = getattr(importlib.import_module(mod), "pytest_addoption", None)
            if fn is not None:
                rec = Recorder()
                fn(**{k: rec for k in inspect.signature(fn).parameters})  # parser, pluginmanager
    except Exception:  # noqa: BLE001  (best effort: the options go as given)
        return set()
    return names


def _joined(args: list[str], names: set[str]) -> list[str]:
    """``args`` with every ``--name VALUE`` of ``names`` written ``--name=VALUE``.
    pytest looks for its rootdir among the arguments that name existing
    paths before it knows a plugin's options: without a test path in the
    arguments, ``--report-dir out`` (out an existing folder outside the
    project, as the launcher's own log folder makes it) was taken for the
    tests' folder, so no conftest, no plugin, and every shard a usage error."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out += args[i:]
            break
        if a in names and i + 1 < len(args) and not args[i + 1].startswith("-"):  # as argparse reads it
            out.append(f"{a}={args[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def _summary(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    tail = [
        ln.strip("= ")
        for ln in lines
        if re.search(r"\d+ (passed|failed|skipped|error|deselected)|no tests ran", ln)
    ]
    return tail[-1] if tail else (lines[-1] if lines else "(empty log)")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m cts sweep",
        description="run a sweep as N concurrent --shard k/N pytest processes and merge one report; "
        "every other argument goes to pytest (selection, --backend, --report-dir, --run-id, ...)",
    )
    ap.add_argument(
        "--spawn",
        action="store_true",
        help="start each shard as a new `python -m pytest` (default on POSIX: fork after the imports)",
    )
    ap.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="shard processes (default: cores)"
    )
    ap.add_argument(
        "--warm-up",
        action="store_true",
        help="before forking, run one throw-away collection in the launcher, so the case spaces are "
        "built once, not in every shard (by default the shards fork right after the imports: "
        "measured faster on 16 cores, the same on 2; it is on anyway with --no-bytecode-cache where "
        "PYTHONDONTWRITEBYTECODE is set, when no compiled module can be cached)",
    )
    ap.add_argument(
        "--balance",
        action="store_true",
        help="split by the case durations of the newest earlier run in the report folder "
        "(--shard-durations; kernel groups as one), where there is one: for device sweeps",
    )
    ap.add_argument("--no-warm-up", action="store_true", help=argparse.SUPPRESS)  # the default now
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="where PYTHONDONTWRITEBYTECODE is set, leave it so (by default the sweep keeps compiled "
        "modules in $XDG_CACHE_HOME/cts/pycache, outside the source tree)",
    )
    a, pytest_args = ap.parse_known_args(argv)
    sweep_command = shlex.join(["python", "-m", "cts", "sweep", *argv])  # what --resume of this run repeats
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    if not 1 <= a.jobs <= 1024:
        raise ValueError(f"-j: 1..1024 shard processes, got {a.jobs}")
    why = _refuse(pytest_args)
    if why:
        raise ValueError(why)
    run_id = _option(pytest_args, "--run-id") or new_run_id()
    check_run_id(run_id)
    if _option(pytest_args, "--run-id") is None:
        pytest_args = [*pytest_args, "--run-id", run_id]
    report = Path(_option(pytest_args, "--report-dir") or "reports/latest")
    resume = _options(pytest_args, "--resume")  # the merge covers them too: the whole sweep
    logs = report / "logs" / run_id
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(f"--report-dir: cannot write in {report}: {e.strerror or e}") from None
    junit = _option(pytest_args, "--junitxml") or _option(pytest_args, "--junit-xml")
    if junit:  # one file per shard, merged at the end (N writers of one file would clobber it)
        pytest_args = _without(pytest_args, ("--junitxml", "--junit-xml"))
    n = a.jobs
    t0 = time.perf_counter()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):  # before numpy is imported (warm-up): one
        os.environ.setdefault(var, "1")  # BLAS thread per shard, N shards; the launcher forks single-threaded
    procs: list[tuple[int, subprocess.Popen | _Forked, Path]] = []
    fork = hasattr(os, "fork") and not a.spawn
    _shard_plugins(pytest_args)
    warm = ""
    cache = "" if a.no_bytecode_cache else _bytecode_cache()
    if cache:
        warm += f" (compiled modules kept in {cache}: PYTHONDONTWRITEBYTECODE is set)"
    # the suite's option names and --balance's choice: reading them imports the plugin, numpy and
    # pytest, so only now (one BLAS thread, the bytecode cache in place)
    if a.balance:  # the newest earlier run's durations, as --shard-durations
        from cts.plugin.shard import balance_journals

        pytest_args, balanced = balance_journals(pytest_args, report / "journal", run_id)
    pytest_args = _joined(pytest_args, _suite_value_options())
    if fork:  # the shards start from this process's imports: no interpreter, pytest or numpy start-up
        # the throw-away collection: asked for, or where no compiled module can be cached (every shard
        # would then rewrite and compile the case modules and pytest's plugins itself)
        collect = a.warm_up or sys.dont_write_bytecode
        _warm_imports(collect=collect)
        import atexit

        if collect:
            gc.collect()  # the throw-away session is garbage now: not frozen with the rest
        from cts.plugin.shard import read_durations_ahead

        read_durations_ahead(pytest_args, run_id)  # once here, not in every shard
        gc.freeze()  # what the shards inherit stays out of their collectors: no walk, no copy-on-write
        atexit.register(gc.freeze)  # and at exit the merged record is not torn down object by object
        warm = f" ({'warm-up' if collect else 'imports'} {time.perf_counter() - t0:.2f}s)" + warm
    if a.balance:
        warm += f" (balanced by {balanced or 'nothing: no earlier run here, split by hash'})"
    print(f"cts sweep: run {run_id}, {n} shard processes, report in {report}{warm}", flush=True)
    interrupted = False
    try:
        for k in range(1, n + 1):
            log = logs / f"shard{k}of{n}.log"
            args = [*pytest_args, "-p", "no:xdist", "-q", "--shard", f"{k}/{n}", "--journal-only"]
            if junit:
                args.append(f"--junitxml={logs / f'shard{k}of{n}.xml'}")
            if fork:  # the launcher imported the plugin before the fork: nothing left to rewrite
                quiet = [
                    "-W",
                    "ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning",
                ]
                procs.append((k, _Forked([*quiet, *args], log, {SWEEP_COMMAND: sweep_command}), log))
                continue
            with open(log, "w") as out:
                cmd = [sys.executable, "-m", "pytest", *args]
                env = {**os.environ, SWEEP_COMMAND: sweep_command}
                procs.append((k, subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env), log))
        if fork:  # now it only reads journals, writes reports: no collector walk (14% of the reading)
            gc.disable()
        _wait_all(procs, report / "journal" / run_id, n)
    except KeyboardInterrupt:  # the shards got the same Ctrl-C: let them write their interrupted lines
        interrupted = True
        for _, p, _ in procs:
            try:
                p.wait(timeout=30)
            except (subprocess.TimeoutExpired, TimeoutError):
                p.kill()
    ran = time.perf_counter() - t0
    codes = [p.returncode for _, p, _ in procs]
    usage = [(k, log) for k, p, log in procs if p.returncode == 4]
    if usage:  # the same options for every shard: one message is enough
        k, log = usage[0]
        text = log.read_text(errors="replace").strip().splitlines()
        errs = [ln for ln in text if "error" in ln.lower()]  # argparse's own message before its usage line
        err = next((ln for ln in errs if ": error:" in ln), errs[0] if errs else (text[-1] if text else ""))
        hint = ""
        if "unrecognized arguments" in err and os.environ.get(_ALL_PLUGINS) != "all":  # see _shard_plugins
            hint = f" (the shards load the suite's own plugins only: name yours with -p NAME, or set {_ALL_PLUGINS}=all)"
        print(f"cts sweep: pytest refused the options: {err.strip()}{hint}", file=sys.stderr)
        return 4
    if junit:
        merge_junit([logs / f"shard{k}of{n}.xml" for k in range(1, n + 1)], Path(junit))
    return _merge(report, run_id, ran, codes, interrupted, resume)


# the environment variable through which a shard records the launcher's command (its session
# header's ``sweep``): the command that resumes the sweep is the launcher's, not one shard's
SWEEP_COMMAND = "CTS_SWEEP_COMMAND"

_ALL_PLUGINS = "CTS_SWEEP_PLUGINS"


def _shard_plugins(args: list[str]) -> None:
    """The shards load the plugins the suite uses (its own, from
    ``conftest.py``, and pytest-timeout for the per-case time limit), those
    named with ``-p NAME``, and no other installed one: pytest's automatic
    loading of every installed plugin is turned off for them
    (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``) unless CTS_SWEEP_PLUGINS=all.  A
    sweep's verdicts and speed then do not depend on what else the Python
    environment holds: on the GPU machine's Python, importing and
    registering its unrelated plugins (jaxtyping, benchmark, anyio, cov,
    mock, hypothesis) cost every process a third of a second or more.
    pytest-timeout comes through ``PYTEST_PLUGINS`` (the environment, not
    the command line: a shard's recorded command, which the report prints
    to resume a sweep, runs as it is in a plain shell), unless the options
    or ``PYTEST_ADDOPTS`` name it themselves (``-p timeout``, ``-p
    no:timeout``; one module under two names is an error in pytest).
    Set in this process's environment: the shards inherit it."""
    if os.environ.get(_ALL_PLUGINS) == "all":
        return
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import importlib.util
    import shlex

    try:
        extra = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:
        extra = []
    if (
        _names_plugin([*args, *extra], "timeout", "pytest_timeout")
        or importlib.util.find_spec("pytest_timeout") is None
    ):
        return
    have = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip()]
    if "pytest_timeout" not in have:
        os.environ["PYTEST_PLUGINS"] = ",".join([*have, "pytest_timeout"])


def _names_plugin(args: list[str], *names: str) -> bool:
    """Whether pytest options load or block a plugin of one of these names
    (``-p NAME``, ``-pNAME``, ``-p no:NAME``)."""
    specs = [b for a, b in zip(args, args[1:]) if a == "-p"] + [
        a[2:] for a in args if a.startswith("-p") and len(a) > 2
    ]
    return any(sp.removeprefix("no:") in names for sp in specs)


def _bytecode_cache() -> str:
    """Where PYTHONDONTWRITEBYTECODE (or ``-B``) keeps Python from caching
    compiled modules, every shard would compile the suite, pytest's plugins
    and the case modules (assertion rewriting included) from source: seconds
    on a 16-core sweep.  The launcher and its shards then keep them in a
    cache folder outside the source tree (``sys.pycache_prefix``, which
    pytest's rewriting honours too; ``PYTHONPYCACHEPREFIX`` if set).  The
    folder; '' when caching is already on."""
    if not sys.dont_write_bytecode:
        return ""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = sys.pycache_prefix or os.path.join(base, "cts", "pycache")
    sys.pycache_prefix, sys.dont_write_bytecode = folder, False
    os.environ["PYTHONPYCACHEPREFIX"] = folder  # shards started with --spawn
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    return folder


def _wait_all(procs: list, jdir: Path, n: int) -> None:
    """Wait for every shard, in the order they finish; each finished
    shard's journal is read at once (``cts.report.record.prime``) while the
    others still run, so the merge at the end has only the merging left."""
    from cts.report.record import prime

    left = list(procs)
    while left:
        done = [t for t in left if t[1].poll() is not None]
        if not done:
            if all(isinstance(p, _Forked) for _, p, _ in left):
                _block_until_one_exits(left)  # no polling: a busy core is not woken 100 times a second
            else:
                time.sleep(0.01)
            continue
        for t in done:
            k, p, log = t
            left.remove(t)
            print(f"  shard {k}/{n}: exit {p.returncode}, {_summary(log)}", flush=True)
            try:
                prime(sorted(jdir.glob(f"shard{k}of{n}-*.jsonl")))
            except OSError:  # read again (and its problem said) by the merge
                pass


def _block_until_one_exits(left: list) -> None:
    """Sleep until a child of this process has ended, without reaping it
    (``waitid`` with WNOWAIT: ``poll`` then reaps each shard by its pid, so
    no exit status is taken from under a shard or from another child, and
    a Ctrl-C while blocked loses nothing).  A polling loop woke the launcher
    every 10 ms, on cores the shards need: on 16 busy cores the slowest
    shards ran 10-20% longer.  Where ``waitid`` is missing, a short sleep."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        time.sleep(0.01)
        return
    try:
        got = waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:  # none left to wait for: poll() says what became of them
        time.sleep(0.01)
        return
    if got is None or got.si_pid not in {p.pid for _, p, _ in left}:  # another child ended: it stays
        time.sleep(0.01)  # unreaped (not ours to reap), so waitid would return at once again: poll


def _warm_imports(collect: bool = True) -> None:
    """Before forking: import pytest, numpy and the plugin, so no shard
    starts an interpreter or imports them.  With ``collect``, also run one
    throw-away pytest session in this process that collects (almost)
    nothing: it imports pytest's plugins (assertion rewriting of every
    installed pytest plugin package, e.g. hypothesis, costs seconds a
    process where no bytecode cache can be written) and the case modules,
    and builds the case spaces, so each shard starts from them; where
    compiled modules are cached, the shards building the spaces at once
    was measured faster on 16 cores (the throw-away session's own set-up
    is on the critical path) and the same on 2.  It runs on the emulator
    whatever the backend of the sweep: no device is opened before the
    fork.  Best effort: any error here only costs the shards their own
    start-up."""
    import importlib

    for mod in ("pytest", "numpy", "cts.plugin"):
        try:
            importlib.import_module(mod)
        except ImportError:
            return
    _import_shard_modules()
    if not collect:
        return
    import pytest

    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(null, 1)
        os.dup2(null, 2)
        pytest.main(["--co", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "--no-report",
                     "--backend", "emulator", "--shard", "1/1000000"])  # fmt: skip
    except BaseException:  # noqa: BLE001  (warm-up only)
        pass
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _import_shard_modules() -> None:
    """Import, before the fork, the modules every shard would otherwise
    import for itself after it: pytest's own plugins and pytest-timeout
    (pytest imports each while it builds a shard's configuration: 0.12 s a
    shard; with CTS_SWEEP_PLUGINS=all the other installed ones are left to
    the shards: their imports may start threads or load drivers), the suite's
    families, case runners, reference model and emulator (imported by the
    case modules), and pyopencl where installed
    (the plugin's warning filter names a class of it, so pytest imports it
    in every process).  Measured on 2 cores: 0.2 s here, once, takes 0.25 s
    off every shard's start (configuration 0.15 -> 0.03 s, collection 0.3
    -> 0.17 s), which on 16 busy cores is worth more than it costs.  No
    device is opened: importing pyopencl loads the ICD loader, which
    enumerates nothing until asked; the device backends' modules are left
    to the shards.  The case modules themselves are left to pytest (they are
    imported with their assertions rewritten).  Best effort: a module that
    fails to import here is the shard's to report."""
    import importlib
    import importlib.util
    import pkgutil

    names: list[str] = []
    try:
        from _pytest.config import default_plugins

        names += [f"_pytest.{p}" for p in default_plugins]
    except ImportError:
        pass
    for pkg in ("cts.plugin", "cts.families", "cts.runs", "reference"):
        try:
            path = importlib.import_module(pkg).__path__
            names += [m.name for m in pkgutil.walk_packages(path, pkg + ".", onerror=lambda _name: None)]
        except Exception:  # noqa: BLE001  (best effort, as below)
            continue
    names += ["cts.backends.emulator", "cts.report.writer"]
    if importlib.util.find_spec("pyopencl") is not None:
        names.append("pyopencl")
    if importlib.util.find_spec("pytest_timeout") is not None:
        names.append("pytest_timeout")
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (the shard imports it again and says what is wrong)
            pass


class _Forked:
    """One shard: ``pytest.main(args)`` in a child forked from the launcher,
    its terminal output in ``log``; ``wait``/``kill``/``returncode`` as
    ``subprocess.Popen``."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None):
        self.returncode: int | None = None
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            code = 3
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
                os.environ.update(env or {})  # this child's only
                sys.argv = ["pytest", *args]  # the session header records the shard's own command
                import pytest

                code = int(pytest.main(args))
            except KeyboardInterrupt:
                code = 2
            except BaseException:  # never return into the launcher's code in a child
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)

    def poll(self) -> int | None:
        """The exit status, or None while the shard runs (``Popen.poll``)."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is gone
                pid, status = self.pid, None
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status) if status is not None else -1
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is gone
                self.returncode = -1
                break
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                raise TimeoutError(f"shard process {self.pid} still running")
            else:
                time.sleep(0.05)
        return self.returncode

    def kill(self) -> None:
        try:
            os.kill(self.pid, 9)
            self.wait()
        except (ProcessLookupError, ChildProcessError):
            pass


def _merge(
    report: Path, run_id: str, ran: float, codes: list[int | None], interrupted: bool, resume: list[str] = ()
) -> int:
    """The sweep's record (this run's journals and those it resumed, in
    this run's configuration), its reports, its summary and exit status."""
    from cts.plugin.shard import write_durations
    from cts.report import exit_status as ex
    from cts.report import status as st
    from cts.report.record import read_record
    from cts.report.summary import status_lines, summarize
    from cts.report.terminal import failure_lines
    from cts.report.writer import write_record

    t1 = time.perf_counter()
    jdir = report / "journal" / run_id
    sources = ([jdir] if jdir.exists() else []) + [Path(p) for p in resume if os.path.exists(p)]
    rec = read_record(sources) if sources else None
    if rec is None or not rec.rows:
        print(f"cts sweep: no case recorded in {jdir} (shard exit codes {sorted(set(codes), key=str)})")
        return ex.unrecorded_exit_status(codes, interrupted)
    mine = rec.runs[run_id].cfg if run_id in rec.runs else None
    if resume:
        rec = st.resumed_record(rec, mine)
    own = [r for r in rec.rows if r.get("run") == run_id]
    got: dict = {}

    def meanwhile() -> None:  # while children build the markdown and the HTML (one-threaded launcher)
        write_durations(jdir, run_id, rec.rows)  # for the next sweep's --balance
        got["tot"] = summarize(rec.rows)

    for p in write_record(rec, report, aside=True, meanwhile=meanwhile):
        print(f"cts sweep: {p}")
    tot = got["tot"]
    merged = time.perf_counter() - t1
    for line in failure_lines(rec.rows, record=rec):  # as pytest's short summary, before the totals
        print(line)
    print(", ".join(f"{v} {k}" for k, v in tot.items() if v and k != "total")
          + f" in {ran:.2f}s ({len(codes)} shards) + {merged:.2f}s merge"
          + (f"; {len(own)} judged now, {len(rec.rows) - len(own)} recorded before (--resume)" if resume else ""))  # fmt: skip
    for line in status_lines(rec.rows, rec):
        print(line)
    for p in rec.problems[:5]:
        print(f"cts sweep: journal problem: {p}")
    decided = ex.shards_exit_status(
        codes, interrupted
    )  # interrupted, or a shard died or hit an internal error
    if decided is not None:
        return decided
    bad, why = ex.record_status(rec)
    if bad:
        print(f"cts sweep: not clean: {why}")
    return ex.record_exit_status(rec)
