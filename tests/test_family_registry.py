"""The registry of families (cts/families/registry.py) is complete and true.

Every declared family has its pieces (a cases/ test that marks the declared
generator and runs the declared run flow, kernels, the emulator's runner, the
device mixins, the options plugin, repro support or the reason there is none),
and every backend class realises the typed protocol (cts/backends/protocols.py)
of each family it claims, signature for signature.  ``lacks`` names what a
family lacks, so a family being added learns its missing piece by name; the
toy family at the end is added through the steps of docs/ARCHITECTURE.md
("To add a family").
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from cts.families.registry import FAMILIES, CaseTest, Family, Repro, emulator_mixins, resolve

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ the checker
def _params(fn) -> list[tuple]:
    return [
        (p.name, p.kind.name, p.default)
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]


def _entries(protocol: type) -> list[str]:
    return [n for n in vars(protocol) if n.startswith(("run_", "unsupported_"))]


def realise_problems(cls: type, protocol: type) -> list[str]:
    """What ``cls`` lacks of ``protocol``: a missing method, or one whose
    parameters (names, kinds, defaults) differ from the protocol's."""
    out = []
    for name in _entries(protocol):
        impl = getattr(cls, name, None)
        if impl is None:
            out.append(f"no {name}")
        elif _params(impl) != _params(getattr(protocol, name)):
            want = inspect.signature(getattr(protocol, name))
            out.append(f"{name}{inspect.signature(impl)} does not match the protocol's {name}{want}")
    return out


def _try(ref: str):
    try:
        return resolve(ref), None
    except (ImportError, AttributeError) as e:
        return None, f"{type(e).__name__}: {e}"


def _test_problems(t: CaseTest, root: Path) -> list[str]:
    path = root / t.module
    if not path.exists():
        return [f"no cases/ test: {t.module} does not exist"]
    tree = ast.parse(path.read_text())
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == t.test), None)
    if fn is None:
        return [f"no cases/ test: {t.module} has no {t.test}"]
    out = []
    marks = [
        d.args[0].id
        for d in fn.decorator_list
        if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("cts_cases.with_args") and d.args
        if isinstance(d.args[0], ast.Name)
    ]
    gen = t.cases.rpartition(":")[2]
    if marks != [gen]:
        out.append(
            f"{t.module}::{t.test} marks its cases with {marks or 'nothing'}, the registry names {gen}"
        )
    runs = [
        c.args[1].id
        for c in ast.walk(fn)
        if isinstance(c, ast.Call) and ast.unparse(c.func) == "cts.check" and len(c.args) > 1
        if isinstance(c.args[1], ast.Name)
    ]
    run = t.run.rpartition(":")[2]
    if runs != [run]:
        out.append(
            f"{t.module}::{t.test} runs {runs or 'nothing'} through cts.check, the registry names {run}"
        )
    if t.cases.startswith("cases."):  # a generator of the test module itself (it reads session state)
        if not any(isinstance(n, ast.FunctionDef) and n.name == gen for n in tree.body):
            out.append(f"no case generator: {t.module} defines no {gen}")
    elif _try(t.cases)[1]:
        out.append(f"no case generator {t.cases} ({_try(t.cases)[1]})")
    if _try(t.run)[1]:
        out.append(f"no run flow {t.run} ({_try(t.run)[1]})")
    return out


def lacks(
    fam: Family,
    registry: Mapping[str, Family],
    backends: Mapping[str, type],
    room_plugins: tuple[str, ...],
    root: Path = ROOT,
) -> list[str]:
    """What ``fam`` lacks, each line naming the family and the piece."""
    out: list[str] = []
    if not fam.tests:
        out.append("no cases/ test")
    for t in fam.tests:
        out += _test_problems(t, root)
    if not fam.kernels and not fam.via:
        out.append("no kernels")
    for mod in fam.kernels:
        if _try(mod)[1]:
            out.append(f"no kernel module {mod}")
    if fam.via:
        if fam.via not in registry:
            out.append(f"runs via {fam.via}, which is not a registered family")
            return [f"family {fam.name}: {p}" for p in out]
        if not fam.via_adapter or _try(fam.via_adapter)[1]:
            out.append(f"no device view adapter {fam.via_adapter}")
        carrier = registry[fam.via]
    else:
        carrier = fam
    protocol = _try(carrier.protocol)[0] if carrier.protocol else None
    if protocol is None:
        out.append(f"no backend protocol {carrier.protocol or '(none declared)'}")
    emulator = backends["emulator"]
    if not carrier.emulator:
        out.append("no emulator runner (no emulator mixin declared)")
    for ref in carrier.emulator:
        mixin, why = _try(ref)
        if why:
            out.append(f"no emulator runner: {ref} ({why})")
        elif mixin not in emulator.__mro__:
            out.append(f"no emulator runner: the emulator does not mix in {ref}")
    if protocol is not None:
        out += [f"no emulator runner: {p}" for p in realise_problems(emulator, protocol)]
    if carrier.launches:
        launches = _try(carrier.launches)[0]
        if launches is None:
            out.append(f"no protocol {carrier.launches}")
        else:
            out += [f"emulator: {p}" for p in realise_problems(emulator, launches)]
    check = _try(carrier.check)[0] if carrier.check else None
    if carrier.devices and check is None:
        out.append(f"no capability check protocol {carrier.check or '(none declared)'}")
    for name, ref in carrier.devices.items():
        cls = backends.get(name)
        mixin, why = _try(ref)
        if cls is None:
            out.append(f"device mixin for an unknown backend {name!r}")
        elif why:
            out.append(f"no {name} mixin {ref} ({why})")
        elif mixin not in cls.__mro__:
            out.append(f"backend {name} does not mix in {ref}")
        else:
            for proto in (protocol, check):
                if proto is not None:
                    out += [f"backend {name}: {p}" for p in realise_problems(cls, proto)]
    if fam.plugin and fam.plugin not in room_plugins:
        out.append(f"options plugin {fam.plugin} is not registered (cts.plugin.ROOM_PLUGINS)")
    if fam.plugin and _try(fam.plugin)[1]:
        out.append(f"no options plugin {fam.plugin}")
    if isinstance(fam.repro, Repro):
        for ref in (fam.repro.cases, fam.repro.run):
            if _try(ref)[1]:
                out.append(f"repro: no {ref}")
        if fam.repro.run not in {t.run for t in fam.tests}:
            out.append(f"repro: run flow {fam.repro.run} is not the run flow of any of its tests")
    elif not str(fam.repro).startswith("no bundle: "):
        out.append("repro: neither a bundle nor 'no bundle: <why>'")
    return [f"family {fam.name}: {p}" for p in out]


def undeclared(registry: Mapping[str, Family], backends: Mapping[str, type]) -> list[str]:
    """Backends that offer a registered family's run_<family> the registry
    does not give them (a runner no declaration reaches)."""
    out = []
    for name, cls in backends.items():
        for fam in registry.values():
            if name != "emulator" and hasattr(cls, f"run_{fam.name}") and name not in fam.devices:
                out.append(f"backend {name} has run_{fam.name}; family {fam.name} does not declare it")
    return out


# ------------------------------------------------------------- the real registry
def _real_backends() -> dict[str, type]:
    from cts.backends import BACKENDS

    return {name: resolve(ref) for name, ref in BACKENDS.items()}


def _room_plugins() -> tuple[str, ...]:
    from cts.plugin import ROOM_PLUGINS

    return ROOM_PLUGINS


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_has_every_piece(name):
    assert lacks(FAMILIES[name], FAMILIES, _real_backends(), _room_plugins()) == []


def test_every_backend_runner_is_declared():
    assert undeclared(FAMILIES, _real_backends()) == []


def test_every_cases_test_is_declared():
    """Each test function of cases/ belongs to a declared family."""
    declared = {(t.module, t.test) for f in FAMILIES.values() for t in f.tests}
    found = {
        (f"cases/{p.name}", n.name)
        for p in sorted((ROOT / "cases").glob("test_*.py"))
        for n in ast.parse(p.read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    }
    assert found - declared == set() and declared - found == set()


def test_registry_resolves_upward_references_lazily():
    """Importing the registry imports nothing above cts.families (the layers of
    docs/ARCHITECTURE.md): its references to higher layers are strings."""
    import subprocess

    code = (
        "import sys, cts.families.registry; "
        "print(sorted(m for m in sys.modules if m.startswith('cts.') and not m.startswith("
        "('cts.families', 'cts.judge', 'cts.space', 'cts.errors', 'cts.argv'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_emulator_contract_lists_every_emulator_module():
    """The emulator resolves its family mixins from the registry at run time,
    so import-linter cannot follow emulator.py's imports to them: the
    contract that keeps the emulator off the oracle lists each module."""
    from cts.backends.emulator import _WRAPPERS

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in cfg["contracts"] if c["id"] == "emulator-not-from-reference-layout")
    modules = {ref.split(":")[0] for ref in emulator_mixins()} | {m.__module__ for m in _WRAPPERS}
    assert modules - set(contract["source_modules"]) == set()


def test_backend_dispatch_reads_the_family_check(monkeypatch):
    """A device backend's capability check is the family's own
    unsupported_<family> (no chain of family names): a check added to a
    mixin is consulted."""
    from cts.backends.vulkan import VulkanBackend

    be = VulkanBackend.__new__(VulkanBackend)
    monkeypatch.setattr(VulkanBackend, "_open", lambda self: None, raising=False)
    be.reason = None
    case = next(iter(resolve("cts.families.rotate:rotate_cases")(("random",))))
    monkeypatch.setattr(VulkanBackend, "unsupported_subgroup_rotate", lambda self, c: "named by the check")
    assert be.unsupported(case) == "named by the check"


# ------------------------------------------------- a toy family, added by the steps
# docs/ARCHITECTURE.md "To add a family", in a temporary package: each step writes
# the file it names, and the declaration goes into a copy of the registry.
TOY_SOURCES = {
    # step 1: the oracle's rule (reference/<family>.py)
    "toy_reference.py": '''
        import numpy as np

        def reversed_across_subgroup(values):
            """Invocation i of a subgroup of n reads invocation n - 1 - i."""
            return np.flip(values, axis=-1)
    ''',
    # step 2: the case space (cts/families/<family>.py)
    "toy_families.py": """
        from dataclasses import dataclass

        @dataclass(frozen=True)
        class ToyCase:
            sg: int
            tier: str = "random"
            family: str = "toy_reverse"

            @property
            def id(self):
                return f"sg{self.sg}"

            @property
            def axes(self):
                return {"sg": self.sg}

            @property
            def spec_row(self):
                return "toy: reverse across the subgroup"

        def toy_cases(tiers):
            return [ToyCase(sg) for sg in (8, 16, 32) if "random" in tiers]
    """,
    # step 3: the kernel generator (cts/kernels/<family>_*.py)
    "toy_kernels.py": """
        def toy_kernel(case):
            return f"out[i] = in[{case.sg} - 1 - i];"
    """,
    # step 4: the typed protocol of its backend entry (cts/backends/protocols.py)
    "toy_protocols.py": """
        from __future__ import annotations

        from typing import Any, Protocol

        import numpy as np

        class ToyReverse(Protocol):
            def run_toy_reverse(self, case: Any, x: np.ndarray) -> np.ndarray: ...
    """,
    # step 5: the emulator's runner with its named fault (cts/backends/emu_<family>.py)
    "toy_emu.py": """
        import numpy as np

        FAULTS = {"toy_identity": "toy_reverse: every invocation keeps its own value"}

        class ToyEmulation:
            FAULTS = FAULTS

            def run_toy_reverse(self, case, x):
                if "toy_identity" in self.faults:
                    return x.copy()
                out = np.empty_like(x)
                for i in range(case.sg):
                    out[:, i] = x[:, case.sg - 1 - i]
                return out
    """,
    # step 6: the run flow (cts/runs/<family>.py)
    "toy_runs.py": """
        import numpy as np

        from cts.judge import CaseResult, exact_verdict
        from reference.data import case_rng
        from reference.dtypes import etype
        from toy_reference import reversed_across_subgroup

        def run_toy_reverse(case, backend, seed):
            rng = case_rng(seed, f"{case.family}[{case.id}]")
            x = rng.integers(0, 1 << 32, size=(4, case.sg), dtype=np.uint64).astype(np.uint32)
            actual = np.asarray(backend.run(case, x=x))
            expected = reversed_across_subgroup(x)
            return CaseResult(exact_verdict(expected, actual, etype("u32")), {"x": x}, expected, actual)
    """,
    # step 7: the conformance test (cases/test_<family>.py)
    "cases/test_toy_reverse.py": """
        import pytest
        from toy_families import toy_cases
        from toy_runs import run_toy_reverse

        @pytest.mark.cts_cases.with_args(toy_cases)
        def test_toy_reverse(case, cts):
            cts.check(case, run_toy_reverse)
    """,
}

# step 9: the declaration (one Family in cts/families/registry.py)
TOY = Family(
    "toy_reverse",
    "a toy: reverse the values across a subgroup",
    (
        CaseTest(
            "cases/test_toy_reverse.py",
            "test_toy_reverse",
            "toy_families:toy_cases",
            "toy_runs:run_toy_reverse",
        ),
    ),
    ("toy_kernels",),
    "toy_protocols:ToyReverse",
    ("toy_emu:ToyEmulation",),
    repro="no bundle: a toy",
)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    for name, text in TOY_SOURCES.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for mod in [m for m in sys.modules if m.startswith("toy_")]:
        del sys.modules[mod]


def _toy_world(fam: Family) -> tuple[dict, dict]:
    from cts.backends.emulator import emulator_class

    registry = {**FAMILIES, fam.name: fam}
    return registry, {**_real_backends(), "emulator": emulator_class(registry)}


def test_toy_family_runs_and_passes_on_the_emulator(toy):
    registry, backends = _toy_world(TOY)
    assert lacks(TOY, registry, backends, _room_plugins(), root=toy) == []
    emulator = backends["emulator"]()
    cases = resolve(TOY.tests[0].cases)(("random",))
    run = resolve(TOY.tests[0].run)
    assert [emulator.unsupported(c) for c in cases] == [None, None, None]
    assert [run(c, emulator, 1).verdict.passed for c in cases] == [True, True, True]


def test_toy_family_fails_with_its_fault(toy):
    registry, backends = _toy_world(TOY)
    wrong = backends["emulator"](("toy_identity",))
    cases = resolve(TOY.tests[0].cases)(("random",))
    run = resolve(TOY.tests[0].run)
    assert [run(c, wrong, 1).verdict.passed for c in cases] == [False, False, False]


def _drop_test_file(root: Path) -> None:
    (root / "cases/test_toy_reverse.py").unlink()


def _wrong_emulator_signature(root: Path) -> None:
    p = root / "toy_emu.py"
    p.write_text(
        p.read_text().replace("def run_toy_reverse(self, case, x)", "def run_toy_reverse(self, case, y)")
    )


LEFT_OUT = {
    "emulator mixin": (
        {"emulator": ()},
        None,
        [
            "family toy_reverse: no emulator runner (no emulator mixin declared)",
            "family toy_reverse: no emulator runner: no run_toy_reverse",
        ],
    ),
    "cases/ test": (
        {},
        _drop_test_file,
        ["family toy_reverse: no cases/ test: cases/test_toy_reverse.py does not exist"],
    ),
    "run flow": (
        {
            "tests": (
                CaseTest(
                    "cases/test_toy_reverse.py",
                    "test_toy_reverse",
                    "toy_families:toy_cases",
                    "toy_runs:run_toy",
                ),
            )
        },
        None,
        [
            "family toy_reverse: cases/test_toy_reverse.py::test_toy_reverse runs ['run_toy_reverse'] through "
            "cts.check, the registry names run_toy",
            "family toy_reverse: no run flow toy_runs:run_toy (AttributeError: module 'toy_runs' has no "
            "attribute 'run_toy')",
        ],
    ),
    "kernels": ({"kernels": ()}, None, ["family toy_reverse: no kernels"]),
    "protocol": ({"protocol": None}, None, ["family toy_reverse: no backend protocol (none declared)"]),
    "emulator signature": (
        {},
        _wrong_emulator_signature,
        [
            "family toy_reverse: no emulator runner: run_toy_reverse(self, case, y) does not match the "
            "protocol's run_toy_reverse(self, case: 'Any', x: 'np.ndarray') -> 'np.ndarray'"
        ],
    ),
    "plugin registration": (
        {"plugin": "cts.plugin.coop2"},
        None,
        ["family toy_reverse: options plugin cts.plugin.coop2 is not registered (cts.plugin.ROOM_PLUGINS)"],
    ),
    "repro": (
        {"repro": "a toy"},
        None,
        ["family toy_reverse: repro: neither a bundle nor 'no bundle: <why>'"],
    ),
}


@pytest.mark.parametrize("piece", list(LEFT_OUT))
def test_toy_family_missing_piece_is_named(toy, piece):
    import dataclasses

    changes, edit, expected = LEFT_OUT[piece]
    if edit is not None:
        edit(toy)
    fam = dataclasses.replace(TOY, **changes)
    registry, backends = _toy_world(fam)
    assert lacks(fam, registry, backends, _room_plugins(), root=toy) == expected
