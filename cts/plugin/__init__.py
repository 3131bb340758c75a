"""The pytest plugin: options, backend set-up, case parametrization, the
``cts`` fixture that runs one case, and the journal row of every case.

Test modules in ``cases/`` mark a test with ``@pytest.mark.cts_cases(fn)``
where ``fn(tiers) -> list[case]``; the plugin parametrizes ``case`` with the
cases' ids.  The test body calls ``cts.check(case, runner)``.
"""

from __future__ import annotations

import importlib.util
import os
import shlex

import pytest

from cts.backends import BACKENDS, make_backend
from cts.errors import BackendError, CaseError, CaseTimeout, HarnessError, ToolchainError, Unsupported
from cts.families.registry import plugins as family_plugins
from cts.plugin.heap import keep_freed_memory
from cts.plugin.keys import HARNESS, SWEEP_GROUP, sweep_group  # noqa: F401  (re-exported)
from reference.data import TIERS
from reference.tolerance import PROFILES

# tiers a user must ask for with --tiers: "model" judges a device against its own inferred
# numerics fingerprint (docs/numerics.md), a characterization no spec requires, so it is not in a default sweep
OPT_IN_TIERS = ("model",)

__all__ = ["Harness"]

RECORD = pytest.StashKey[dict]()
FIELDS = pytest.StashKey[dict]()  # the case fields of an item, computed once at its start

# The suite's own pytest plugin modules (options, backend options via
# ``cts_backend_options(config)``, rerun arguments via ``cts_rerun_args(config)``):
# the sweep and its shards, the OpenCL backend's options, then each family's options
# plugin as the registry of families declares it (cts.families.registry), then the
# run's record: its journal (run id, configuration, session header), every case's
# start marker and outcome row, and the garbage-collector policy.
ROOM_PLUGINS: tuple[str, ...] = (
    "cts.plugin.sweep",
    "cts.plugin.shard",
    "cts.plugin.opencl",
    *family_plugins(),
    "cts.plugin.record",
    "cts.plugin.casejournal",
    "cts.plugin.gcpolicy",
)


# ---------------------------------------------------------------- options
def pytest_addoption(parser: pytest.Parser, pluginmanager) -> None:
    g = parser.getgroup("cts", "subgroup-matrix conformance suite")
    g.addoption(
        "--backend",
        default="emulator",
        help=f"where cases run: {', '.join(BACKENDS)} (default: emulator)",
    )
    g.addoption(
        "--device",
        default=None,
        help="device of the backend: an index or a substring of the platform or "
        "device name (see `python -m cts devices`)",
    )
    g.addoption("--seed", default="1", help="global seed of all input data (default 1)")
    g.addoption(
        "--emulator-fault",
        action="append",
        default=[],
        metavar="NAME",
        help="make the emulator a wrong device on purpose (repeatable); "
        "`python -m cts faults` lists the names",
    )
    g.addoption(
        "--tolerance-profile",
        default="default",
        help=f"float accuracy assumptions: {', '.join(PROFILES)} (see reference/tolerance.py)",
    )
    g.addoption(
        "--tiers",
        default=",".join(TIERS),
        help=f"comma-separated data tiers to enumerate (default: {','.join(TIERS)}; opt-in: "
        f"{','.join(OPT_IN_TIERS)})",
    )
    g.addoption(
        "--subgroups",
        default="32",
        help="subgroups (each with its own operands) per case launch (default 32)",
    )
    g.addoption(
        "--report-dir",
        default="reports/latest",
        help="where the journal and the reports of this run go (default reports/latest)",
    )
    g.addoption("--no-report", action="store_true", help="write no journal and no report")
    s = sweep_group(parser)
    s.addoption(
        "--journal-only",
        action="store_true",
        help="write the journal, not the report (a shard of a sweep: `python -m cts report` merges)",
    )
    s.addoption(
        "--run-id",
        default=None,
        metavar="ID",
        help="the id of this run's journals (default: a new one, UTC time + random); shards of one "
        "sweep given the same id into one --report-dir report as one run",
    )
    import importlib

    for mod in ROOM_PLUGINS:
        pluginmanager.register(importlib.import_module(mod), mod)


def _usage(msg: str):
    raise pytest.UsageError(msg)


def _parse_int(name: str, text: str, lo: int = 0, hi: int | None = None) -> int:
    """A decimal (leading zeros allowed: ``007``) or 0x-hex integer option."""
    t = str(text).strip()
    try:
        v = int(t, 16) if t.lower().startswith(("0x", "-0x")) else int(t, 10)
    except ValueError:
        _usage(f"{name} expects an integer, got {text!r}")
    if v < lo:
        _usage(f"{name} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        _usage(f"{name} must be <= {hi}, got {v}")
    return v


# upper bound of --subgroups: 4096 subgroups of 32 lanes are 131072 work-items per launch, far past
# what any case needs to fill a device; beyond it the host buffers of one case reach gigabytes
MAX_SUBGROUPS = 4096


def pytest_configure(config: pytest.Config) -> None:
    keep_freed_memory()  # cases reuse freed host buffers instead of faulting fresh pages in (cts/plugin/heap.py)
    config.addinivalue_line("markers", "cts_cases(fn): parametrize `case` with fn(tiers)")
    config.addinivalue_line("markers", "cts_no_cases: placeholder of a generator with no case (deselected)")
    if importlib.util.find_spec("pyopencl") is not None:  # only where it is installed: a filter naming a
        # missing module makes every pytest start warn (the bare install has no pyopencl)
        config.addinivalue_line("filterwarnings", "ignore::pyopencl.CompilerWarning")
    opt = config.option
    if not hasattr(opt, "backend"):
        return
    seed = _parse_int("--seed", opt.seed)
    subgroups = _parse_int("--subgroups", opt.subgroups, lo=2, hi=MAX_SUBGROUPS)
    if subgroups % 2:
        _usage("--subgroups must be even (split cases pair subgroups)")
    if opt.tolerance_profile not in PROFILES:
        _usage(f"unknown --tolerance-profile {opt.tolerance_profile!r}; known: {', '.join(PROFILES)}")
    tiers = tuple(t.strip() for t in opt.tiers.split(",") if t.strip())
    known = TIERS + OPT_IN_TIERS
    bad = [t for t in tiers if t not in known]
    if bad or not tiers:
        _usage(f"unknown tier(s) {', '.join(bad) or '(none given)'}; known: {', '.join(known)}")
    if opt.emulator_fault and opt.backend != "emulator":
        _usage("--emulator-fault needs --backend emulator")
    try:
        backend = make_backend(opt.backend, **backend_options(config))
    except BackendError as e:
        _usage(str(e))
    config.stash[HARNESS] = Harness(config, backend, seed, PROFILES[opt.tolerance_profile], tiers, subgroups)


def backend_options(config: pytest.Config) -> dict:
    """Options handed to the backend constructor; other rooms add theirs via
    the ``cts_backend_options`` attribute of registered plugins."""
    opts = {"device": config.option.device, "emulator_faults": tuple(config.option.emulator_fault)}
    for plugin in config.pluginmanager.get_plugins():
        extra = getattr(plugin, "cts_backend_options", None)
        if callable(extra):
            opts.update(extra(config))
    return opts


def pytest_unconfigure(config: pytest.Config) -> None:
    h = config.stash.get(HARNESS, None)
    if h is not None:
        h.backend.close()
    st = config.stash.get(RUN, None)
    if st is not None and st.journal is not None:
        st.journal.close()


# ---------------------------------------------------------- parametrize
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker("cts_cases")
    if mark is None or "case" not in metafunc.fixturenames:
        return
    h = metafunc.config.stash.get(HARNESS, None)
    tiers = h.tiers if h else TIERS
    fn = mark.args[0]
    own = getattr(fn, "cts_tiers", TIERS)  # the tiers this generator understands
    mine = tuple(t for t in tiers if t in own)
    cases = fn(mine) if mine else []  # none of its tiers asked for: no case, even from tier-less families
    cases = shard_prefilter(metafunc, cases)  # --shard K/N: only this shard's cases become items
    if not cases:  # e.g. an opt-in tier not asked for: no item at all, not an "empty parameter set" skip
        metafunc.parametrize("case", [pytest.param(None, marks=pytest.mark.cts_no_cases)], ids=["none"])
        return
    metafunc.parametrize("case", cases, ids=[c.id for c in cases])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    drop = [it for it in items if it.get_closest_marker("cts_no_cases") is not None]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [it for it in items if it.get_closest_marker("cts_no_cases") is None]


# --------------------------------------------------------------- harness
class Harness:
    """Session state shared by all cases of one process."""

    def __init__(self, config, backend, seed, profile, tiers, subgroups):
        self.config = config
        self.backend = backend
        self.seed = seed
        self.profile = profile
        self.tiers = tiers
        self.subgroups = subgroups
        self._device = None
        self._rerun_tail: str | None = None
        self._row_base: dict | None = None
        self._timeout: float | None = None
        self.item: pytest.Item | None = None  # the item being set up / run (set by pytest_runtest_setup)
        self.runner: CaseRunner | None = None  # the session's ``cts`` fixture value
        o = config.option
        shows = any(getattr(o, k, False) for k in ("setupshow", "setuponly", "setupplan"))
        self.fill_fixtures = not shows  # fill_known_fixtures: pytest prints what it sets up itself
        self.fixture_plans: dict[int, tuple] = {}  # fill_known_fixtures, per test function (this session's)

    @property
    def device(self):
        if self._device is None:
            self._device = self.backend.describe()
        return self._device

    def rerun_command(self, nodeid: str) -> str:
        """The pytest command that reruns one case under this configuration
        (the options part is built once: it is the same for every case)."""
        return f"pytest {shlex.quote(nodeid)}{self.rerun_tail}"

    @property
    def rerun_tail(self) -> str:
        """The options part of every rerun command (" --backend ... --seed ...")."""
        if self._rerun_tail is None:
            self._rerun_tail = self._rerun_options()
        return self._rerun_tail

    def _rerun_options(self) -> str:
        o = self.config.option
        parts = ["--backend", o.backend, "--seed", str(self.seed)]
        parts += ["--report-dir", rerun_dir(o.report_dir)]  # never over the sweep's own report
        if o.device is not None:
            parts += ["--device", o.device]
        if tuple(self.tiers) != TIERS:  # e.g. an opt-in tier: the case is collected only with it
            parts += ["--tiers", ",".join(self.tiers)]
        for f in o.emulator_fault:
            parts += ["--emulator-fault", f]
        if self.profile.name != "default":
            parts += ["--tolerance-profile", self.profile.name]
        if self.subgroups != 32:
            parts += ["--subgroups", str(self.subgroups)]
        for plugin in self.config.pluginmanager.get_plugins():
            extra = getattr(plugin, "cts_rerun_args", None)
            if callable(extra):
                parts += extra(self.config)
        return "".join(" " + shlex.quote(p) for p in parts)

    @property
    def row_base(self) -> dict:
        """The fields every journal line of this process shares."""
        if self._row_base is None:
            d = self.device
            self._row_base = {
                "backend": self.backend.name,
                "device": d.name,
                "driver": d.driver,
                "seed": self.seed,
                "profile": self.profile.name,
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            }
        return self._row_base

    def timeout_option(self) -> float:
        """The pytest-timeout limit from the option or ini (0 if none)."""
        if self._timeout is None:
            try:
                v = self.config.getoption("timeout", None)
                self._timeout = float(v if v is not None else self.config.getini("timeout") or 0)
            except (ValueError, TypeError):
                self._timeout = 0.0
        return self._timeout


def rerun_dir(report_dir: str) -> str:
    """Where a rerun command writes: ``<report-dir>/rerun``, a folder of its
    own inside the sweep's (``python -m cts report <report-dir>`` merges it
    into the sweep's record; the sweep's report.md is never replaced by a
    one-case report).  A rerun of a rerun writes to the same folder."""
    d = str(report_dir or "reports/latest").rstrip("/") or "/"
    return d if os.path.basename(d) == "rerun" else os.path.join(d, "rerun")


from cts.plugin.record import RUN  # noqa: E402  (the record reads HARNESS at call time)
from cts.plugin.shard import shard_prefilter  # noqa: E402


class CaseRunner:
    """The ``cts`` fixture: runs one case and turns its verdict into a pytest
    outcome with a full diagnostic.  One per session (a function-scoped
    fixture that asks for ``request`` costs pytest ~0.15 ms a case): the
    case it judges is the item the plugin set up last (``Harness.item``)."""

    def __init__(self, harness: Harness):
        self.h = harness

    @property
    def item(self) -> pytest.Item:
        return self.h.item

    @property
    def backend(self):
        return self.h.backend

    def check(self, case, runner, via=None, **kwargs):
        """Run ``runner(case, backend, seed, **kwargs)`` and judge it.  ``via``
        (optional) maps the session's backend to the device view the case
        runs on (e.g. joint_matrix through cooperative matrix); it raises
        ``Unsupported`` when the backend cannot offer one."""
        h, item = self.h, self.h.item
        rec = {
            "family": case.family,
            "case_id": case.id,
            "spec_row": getattr(case, "spec_row", ""),
            "axes": getattr(case, "axes", {}),
            "tier": getattr(case, "tier", ""),
        }
        item.stash[RECORD] = rec
        backend = h.backend
        if via is not None:
            try:
                backend = via(backend)
            except Unsupported as e:
                pytest.skip(str(e))
        reason = backend.unsupported(case)
        if reason:
            pytest.skip(reason)
        forced = _forced(h.backend, backend, case)
        if forced:  # the device does not list it: a forced run, reported apart from conformance
            rec["forced"] = forced
        if "subgroups" in runner.__code__.co_varnames:
            kwargs.setdefault("subgroups", h.subgroups)
        if "profile" in runner.__code__.co_varnames:
            kwargs.setdefault("profile", h.profile)
        could_not_run = None
        try:
            result = runner(case, backend, h.seed, **kwargs)
        except ToolchainError as e:  # the compiler between suite and device refused the case
            rec["error"] = str(e)
            rec["toolchain"] = str(e).split(":", 1)[0]
            raise ToolchainError(
                f"{case.family}[{case.id}]: TOOLCHAIN VERDICT on {h.backend.name} (the compiler refused a case "
                f"the spec allows; not a device verdict): {e}\nrerun: {h.rerun_command(item.nodeid)}"
            ) from None
        except Unsupported as e:
            pytest.skip(str(e))
        except CaseTimeout as e:  # the device hung past the case's limit: the timeout verdict
            rec["error"] = str(e)
            rec["timeout"] = True
            pytest.fail(
                f"{case.family}[{case.id}] TIMEOUT on {h.backend.name}: {e}\nrerun: {h.rerun_command(item.nodeid)}",
                pytrace=False,
            )
        except CaseError as e:
            rec["error"] = could_not_run = str(e)
        except HarnessError as e:
            rec["error"] = str(e)
            raise HarnessError(
                f"{case.family}[{case.id}]: the suite could not judge this case on {h.backend.name} "
                f"(a harness error, not a device verdict): {e}\nrerun: {h.rerun_command(item.nodeid)}"
            ) from None
        finally:
            invalid = _module_findings(backend, rec)
        if invalid and (could_not_run is not None or not result.verdict.passed):
            # the module an external tool produced is shown invalid: what the device did with it
            # (refused it, or computed a wrong result) is the tool's verdict, never the device's
            what = (
                f"the device refused it: {could_not_run}"
                if could_not_run is not None
                else "wrong result: "
                + "; ".join([result.verdict.summary(), *(m.line() for m in result.verdict.mismatches[:3])])
            )
            rec["error"] = what
            rec["toolchain"] = invalid
            raise ToolchainError(
                f"{case.family}[{case.id}]: TOOLCHAIN VERDICT on {h.backend.name} (a module {invalid} produced "
                f"is invalid: {'; '.join(rec['findings'])}; {what}; not a device verdict)\n"
                f"rerun: {h.rerun_command(item.nodeid)}"
            )
        if could_not_run is not None:  # outside the except: the build log is printed once, not chained
            pytest.fail(
                f"{case.family}[{case.id}] could not run on {h.backend.name} [layer: device]: {could_not_run}\n"
                + (f"  FORCED (not a conformance verdict): {forced}\n" if forced else "")
                + f"rerun: {h.rerun_command(item.nodeid)}",
                pytrace=False,
            )
        v = result.verdict
        if v.passed and v.elements == 0:  # a "pass" that judged nothing cannot be trusted
            v.passed = False
            v.notes.append("vacuous verdict: the runner checked no element (a suite or device-query defect)")
        rec["verdict"] = v.as_dict()
        rec["max_ratio"] = v.max_ratio
        rec["max_error"] = v.max_error
        if not v.passed:
            lines = [
                f"{case.family}[{case.id}] FAILED on {h.device.name} ({h.backend.name}), "
                f"seed {h.seed}: {v.summary()} [layer: device]",
            ]
            if forced:
                lines.append(f"  FORCED (not a conformance verdict): {forced}")
            if getattr(case, "spec_row", ""):
                lines.append(f"  spec: {case.spec_row}")
            lines += ["  " + m.line() for m in v.mismatches]
            if v.failures > len(v.mismatches):
                lines.append(f"  ... and {v.failures - len(v.mismatches)} more")
            lines += ["  note: " + n for n in v.notes]
            lines.append(f"rerun: {h.rerun_command(item.nodeid)}")
            pytest.fail("\n".join(lines), pytrace=False)
        return result


def _forced(session_backend, backend, case) -> str:
    """Why ``case`` runs only because of ``--assume-extension`` (what the
    device does not list), '' when the device lists all it needs: the
    backend's ``forced_reason(case)``, asked of the device view the case
    runs on, else of the session's backend."""
    for b in (backend, session_backend):
        fn = getattr(b, "forced_reason", None)
        if callable(fn):
            return fn(case) or ""
    return ""


def _module_findings(backend, rec: dict) -> str:
    """What is wrong with the module an external tool produced for the case
    just run (the backend's ``take_module_findings() -> (tool, [finding])``):
    kept in ``rec["findings"]``; the tool's name, '' when the module is valid."""
    take = getattr(backend, "take_module_findings", None)
    tool, findings = take() if callable(take) else ("", [])
    if findings:
        rec["findings"] = list(findings)
    return tool if findings else ""


@pytest.fixture(scope="session")
def cts(pytestconfig: pytest.Config) -> CaseRunner:
    h = pytestconfig.stash.get(HARNESS, None)
    if h is None:
        pytest.skip("the cts plugin is not configured")
    if h.runner is None:
        h.runner = CaseRunner(h)
    return h.runner


# ------------------------------------------------ the fixtures of a case item
# A case item asks for ``case`` (its direct parameter), ``cts`` (a session
# fixture) and, through them, ``pytestconfig`` and ``request``.  pytest
# resolves each of them again for every item (a new FixtureDef for every
# ``request``, a signature inspection each, finalizers registered and run):
# about 0.2 ms a case, a seventh of a serial emulator sweep.  Their values
# are known without it, so they are put in ``item.funcargs`` before pytest's
# fixture filling, which leaves names already there alone.  Only where the
# item's own fixture definition is the one meant (a module overriding
# ``cts`` or ``pytestconfig``, or an indirect ``case``, is left to pytest),
# and not under --setup-show / --setup-only / --setup-plan, which print
# the fixtures pytest sets up.


def _own(fixturedefs, module: str, name: str) -> bool:
    """The item's closest definition of a fixture is ``module.name``
    (``_pytest``: any of pytest's own modules, which move between versions)."""
    func = getattr(fixturedefs[-1], "func", None) if fixturedefs else None
    func = getattr(func, "_get_wrapped_function", lambda: func)()  # pytest >= 8.4 wraps fixture functions
    mod = getattr(func, "__module__", "") or ""
    where = mod.startswith("_pytest.") if module == "_pytest" else mod == module
    return where and getattr(func, "__name__", "") == name


def _plan(item: pytest.Item, plans: dict) -> tuple[str, ...]:
    """The names to fill for ``item``, decided once per test function
    (``plans``: the session's, id(fixtureinfo) -> (fixtureinfo, names))."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return ()
    known = plans.get(id(info))
    if known is not None and known[0] is info:
        return known[1]
    defs = info.name2fixturedefs
    names = []
    if _own(defs.get("cts"), __name__, "cts"):
        names.append("cts")
    if _own(defs.get("pytestconfig"), "_pytest", "pytestconfig"):
        names.append("pytestconfig")
    if _own(defs.get("case"), "_pytest", "get_direct_param_fixture_func"):
        names.append("case")
    if (
        names
        and "request" in item.fixturenames
        and isinstance(getattr(item, "_request", None), pytest.FixtureRequest)
    ):
        names.append("request")
    plans[id(info)] = (info, tuple(names))
    return tuple(names)


def fill_known_fixtures(item: pytest.Item, h: Harness) -> None:
    """Put the values of a case item's known fixtures in ``item.funcargs``."""
    if not h.fill_fixtures:
        return
    fa = getattr(item, "funcargs", None)
    if fa is None:
        return
    for name in _plan(item, h.fixture_plans):
        if name == "case":
            fa[name] = item.callspec.params[name]
        elif name == "cts":
            if h.runner is None:
                h.runner = CaseRunner(h)
            fa[name] = h.runner
        elif name == "pytestconfig":
            fa[name] = item.config
        else:
            fa[name] = item._request


def pytest_report_header(config: pytest.Config) -> list[str]:
    h = config.stash.get(HARNESS, None)
    if h is None:
        return []
    d = h.device
    return [
        f"cts: backend={h.backend.name} device={d.name!r} driver={d.driver!r} seed={h.seed} "
        f"profile={h.profile.name} tiers={','.join(h.tiers)}"
    ]
