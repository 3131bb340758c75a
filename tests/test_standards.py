"""Project-wide guards of the team standards (README and docs/ARCHITECTURE.md
"Who may import whom"), checked over every file so a new module cannot slip
past them:

* the oracle (``reference/``) imports nothing of ours, no pytest and no
  device runtime;
* the emulator does not import the oracle's expected values or layouts
  (reference.layout / joint / rotate / mlir / coop / mma / tolerance / data),
  nor the runners that judge it; the few names it does take from the case
  side are listed below, so a new one needs a conscious entry here;
* nothing imports ``cases/`` or ``tests/``;
* every named emulator fault is exercised by some test in ``tests/``;
* no parametrization of ``cases/`` or ``tests/`` is empty;
* no assertion is a tautology (a constant or ``x == x``);
* source files stay under the size limit;
* bad input is one clear line (no traceback) for every option of the
  "cts" pytest group and for ``python -m cts``;
* what the README names (options, ``python -m cts`` commands, case ids,
  the suite's own test command) exists.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
OUR_PACKAGES = ("cts", "reference", "cases", "tests", "scripts")
MAX_LINES = 600


# ------------------------------------------------------------------ helpers
def _files(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py") if ".venv" not in p.parts)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, absolute module, imported name or None) of every import in the
    file, at any depth (function-level imports included), relative imports
    resolved."""
    me = _module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package[: len(package) - (node.level - 1)]
                base = ".".join(head + ([base] if base else []))
            out += [(node.lineno, base, a.name) for a in node.names]
    return out


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


# --------------------------------------------------------- import rules
def test_reference_is_independent():
    """reference/ imports only the standard library, numpy, ml_dtypes and
    itself: no cts, no pytest, no device runtime (docs/ARCHITECTURE.md)."""
    allowed = set(sys.stdlib_module_names) | {"numpy", "ml_dtypes", "reference"}
    bad = [
        f"{_where(p, ln)} imports {mod}"
        for p in _files("reference")
        for ln, mod, _ in _imports(p)
        if mod.split(".")[0] not in allowed
    ]
    assert not bad, "reference/ must stay independent:\n" + "\n".join(bad)


# What the emulator may take from the oracle or the case side, by (module,
# name).  Everything else from reference/ or cts.families / cts.judge is
# refused: the emulator decodes operands by its own reading of the spec.
EMULATOR_MAY_IMPORT = {
    # the device *model* of the numerics fingerprint; the ordinary
    # float tiers are judged by reference.mma + reference.tolerance instead
    ("reference.devmodel", "MODELS"),
    ("reference.devmodel", "DevModel"),
    ("reference.devmodel", "model_mma"),
    # kernel inputs the device gets baked into the kernel (not expectations)
    ("cts.families.coop", "CHAIN"),
    ("cts.families.coop", "GEMM_TILES"),
    ("cts.families.coop", "SCALE"),
    ("cts.families.coop", "SPLAT_CONST"),
    ("cts.families.coop", "case_stride"),
    # OpenCL coop axes: the pointer offset, Stride and pointee size the kernel is built with
    # (Memory carries no addresses: the emulator places the elements itself), and the container
    # of the draft table the emulator reports about itself
    ("cts.families.coop_ocl_axes", "axis_memory"),
    ("cts.families.coop_ocl_axes", "OclTable"),
    # NV coop2: the tensor layout/view instructions, clamp value and Object fill of a
    # case's kernel (instruction operands; the emulator interprets them itself)
    ("cts.families.coop2", "tensor_plan"),
    ("cts.families.coop2", "clamp_bits"),
    ("cts.families.coop2", "fill_value"),
    # diagnostics only: (invocation, index) of an element, from the
    # emulator's own mapping; the verdict does not depend on it
    ("cts.families.coop", "owner_from_mapping"),
    # the list of float MMA targets the emulator offers (a table of shapes, no expectation)
    ("cts.families.float_mma", "FLOAT_MMA_TARGETS"),
    # what a device's output buffer holds before the kernel (write_nothing returns it), and the
    # float environment an emulated module declares and the divisor range where Vulkan's latitude
    # exists (the lat_* variants): facts of the client API, no expected value
    ("cts.judge.sentinel", "WIDTH_PATTERN"),
    ("cts.judge.env", "FDIV_RANGE"),
    ("cts.judge.env", "FloatEnv"),
    ("cts.judge.env", "IEEE"),
    ("cts.judge.env", "VULKAN"),
    ("cts.judge.env", "VULKAN_PRESERVE"),
    # the registry of families: which mixins make up the emulator (names, no expectation)
    ("cts.families.registry", "emulator_mixins"),
    ("cts.families.registry", "resolve"),
}


def _emulator_files() -> list[Path]:
    return sorted((ROOT / "cts" / "backends").glob("emu*.py"))


def test_emulator_modules_are_found():
    """Every emulator mixin module the registry of families declares is one
    of the files these guards read."""
    from cts.families.registry import emulator_mixins

    names = {p.name for p in _emulator_files()}
    declared = {ref.split(":")[0].rsplit(".", 1)[-1] + ".py" for ref in emulator_mixins()}
    assert "emulator.py" in names and declared <= names, sorted(declared - names)


def test_emulator_does_not_import_the_oracle():
    """The emulator must not import reference.layout (docs/ARCHITECTURE.md) nor any other
    function that produces expected values or layouts; a wrong spec reading
    would otherwise pass as a right one on both sides."""
    bad = []
    for p in _emulator_files():
        for ln, mod, name in _imports(p):
            side = mod == "reference" or mod.startswith(("reference.", "cts.families", "cts.judge"))
            if side and (mod, name) not in EMULATOR_MAY_IMPORT:
                bad.append(f"{_where(p, ln)}: from {mod} import {name}")
    assert not bad, "emulator imports from the oracle / case side:\n" + "\n".join(bad)


def test_nothing_imports_cases_or_tests():
    """docs/ARCHITECTURE.md: nothing imports cases/ (and the suite's product code does
    not import its own tests)."""
    bad = [
        f"{_where(p, ln)} imports {mod}"
        for p in _files("cts", "reference", "cases", "scripts")
        for ln, mod, _ in _imports(p)
        if mod.split(".")[0] in ("cases", "tests")
    ]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------- tests that can fail
def test_every_emulator_fault_is_exercised_by_a_test():
    """Each named fault of every emulator mixin is run by some test in
    tests/: named there literally, or its module's FAULTS dict is imported
    there (the mutation tests parametrize over it)."""
    import importlib

    from cts.backends.emulator import _MIXINS

    sources = {p: p.read_text() for p in _files("tests") if p.name != Path(__file__).name}
    imported = {
        (mod, name) for p in sources for _, mod, name in _imports(p) if mod.startswith("cts.backends")
    }
    missing = []
    for mixin in _MIXINS:
        faults = getattr(mixin, "FAULTS", {})
        module = importlib.import_module(mixin.__module__)
        dict_names = {n for n, v in vars(module).items() if v is faults}
        via_dict = any((mixin.__module__, n) in imported for n in dict_names)
        for fault in faults:
            if not via_dict and not any(re.search(rf"\b{fault}\b", s) for s in sources.values()):
                missing.append(f"{fault} ({mixin.__name__})")
    assert not missing, "faults no test runs: " + ", ".join(missing)


def test_no_tautological_asserts():
    """An ``assert <constant>`` or ``assert x == x`` can never fail."""
    bad = []
    for p in _files("tests", "cases"):
        for node in ast.walk(_tree(p)):
            if not isinstance(node, ast.Assert):
                continue
            t = node.test
            same = (
                isinstance(t, ast.Compare)
                and len(t.comparators) == 1
                and isinstance(t.ops[0], (ast.Eq, ast.Is, ast.GtE, ast.LtE))
                and ast.dump(t.left) == ast.dump(t.comparators[0])
            )
            if isinstance(t, ast.Constant) or same:
                bad.append(_where(p, node.lineno))
    assert not bad, "tautological asserts: " + ", ".join(bad)


def _run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _pytest(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return _run("-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args, timeout=timeout)


@cache
def _collected_cases() -> str:
    from cts.plugin import OPT_IN_TIERS
    from reference.data import TIERS

    r = _pytest(
        "cases", "--collect-only", "-q", "--no-report", "-o", "empty_parameter_set_mark=fail_at_collect",
        "--tiers", ",".join(TIERS + OPT_IN_TIERS),
    )  # fmt: skip
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r.stdout


@pytest.mark.e2e
def test_every_conformance_test_has_cases_and_readme_ids_exist():
    """Every test function of cases/ collects at least one case with every
    tier asked for (an empty parameter list would silently drop a whole
    test), and the example ids the README shows are real node ids."""
    out = _collected_cases()
    defined = {
        f"{p.relative_to(ROOT)}::{n.name}"
        for p in _files("cases")
        for n in _tree(p).body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    }
    empty = sorted(d for d in defined if f"{d}[" not in out and f"{d}\n" not in out)
    assert defined and not empty, f"tests of cases/ without any case: {empty}"
    ids = set(re.findall(r"\b(test_[a-z_]+\[[^\]\s`']+\])", README)) - {"test_x[id]"}
    assert len(ids) >= 5, ids
    missing = [i for i in sorted(ids) if f"::{i}\n" not in out]
    assert not missing, f"README ids that no case has: {missing}"


@pytest.mark.e2e
def test_no_empty_parametrization_in_tests():
    r = _pytest(
        "tests",
        "--collect-only",
        "-q",
        "--no-report",
        "-o",
        "empty_parameter_set_mark=fail_at_collect",
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


# ----------------------------------------------------------------- size
def test_files_stay_under_the_size_limit():
    """Files under ~600 lines (split along seams)."""
    big = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in _files(*OUR_PACKAGES)
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    assert not big, "split these along their seams: " + ", ".join(big)


# ------------------------------------------------------------ bad input
# (--shard, --resume, --expectations: tests/test_sweep.py; --coop-profile,
# --coop-api: tests/test_coop_profiles.py; python -m cts report / repro /
# numerics: tests/test_report.py, tests/test_numerics_cli.py)
BAD_PYTEST_OPTIONS = [
    (["--backend", "nosuch"], "nosuch"),
    (["--device", "nosuch"], "nosuch"),
    (["--seed", "abc"], "--seed"),
    (["--tiers", "nosuch"], "nosuch"),
    (["--emulator-fault", "nosuch"], "nosuch"),
    (["--emulator-model", "nosuch"], "nosuch"),
    (["--tolerance-profile", "nosuch"], "nosuch"),
    (["--subgroups", "0"], "--subgroups"),
    (["--numerics-tiles", "0"], "--numerics-tiles"),
    (["--opencl-prelude", "builtin"], "--backend opencl"),
]


def _one_clear_line(r: subprocess.CompletedProcess, names: str) -> None:
    text = r.stdout + r.stderr
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert r.returncode not in (0, 1), text[-2000:]
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-2000:]
    assert len(lines) == 1, text[-2000:]
    assert names in lines[0], lines[0]


@pytest.mark.e2e
@pytest.mark.parametrize("args,names", BAD_PYTEST_OPTIONS, ids=[" ".join(a) for a, _ in BAD_PYTEST_OPTIONS])
def test_bad_pytest_option_is_one_clear_line(args, names, tmp_path):
    r = _pytest("cases/test_intel_mma.py", "--collect-only", "-q", "--report-dir", str(tmp_path), *args)
    _one_clear_line(r, names)


BAD_CLI = [
    (["nosuch"], "nosuch"),
    (["repro", "test_intel_mma[sg8-nosuch]", "--out", "{tmp}"], "sg8-nosuch"),
    (["faults", "--nosuch"], "--nosuch"),
    (["devices", "--backend", "x"], "--backend"),
    (["numerics", "--tiles", "abc"], "--tiles"),
]


@pytest.mark.e2e
@pytest.mark.parametrize("args,names", BAD_CLI, ids=[" ".join(a[:3]) for a, _ in BAD_CLI])
def test_bad_cli_input_is_one_clear_line(args, names, tmp_path):
    r = _run("-m", "cts", *[a.replace("{tmp}", str(tmp_path / "out")) for a in args], timeout=60)
    _one_clear_line(r, names)


# ---------------------------------------------------------- README truth
# the README and the pages of docs/ it sends the reader to
README = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
EXTERNAL_OPTIONS = {
    "--target-env",  # spirv-val's, quoted from the Vulkan section
    "--help",
    "--junitxml",  # pytest's own alias of --junit-xml (its --help shows only the latter)
    "--serialize-spirv",  # mlir-translate's, quoted from the MLIR section
}


def _declared_options() -> set[str]:
    """Every option string given to argparse add_argument or pytest addoption
    anywhere in cts/ and scripts/."""
    out: set[str] = set()
    for p in _files("cts", "scripts"):
        for node in ast.walk(_tree(p)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("add_argument", "addoption")
            ):
                out |= {
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
                }
    return out


@pytest.mark.e2e
def test_readme_options_exist():
    """Every ``--option`` the README names is declared by the suite or is an
    option of pytest / its plugins (``pytest --help``)."""
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", README))
    known = _declared_options() | EXTERNAL_OPTIONS
    unknown = named - known
    if unknown:
        r = _pytest("--help")
        unknown = {o for o in unknown if not re.search(rf"(?<![\w-]){re.escape(o)}\b", r.stdout)}
    assert not unknown, f"README names options nothing declares: {sorted(unknown)}"


def test_readme_cts_commands_exist():
    from cts.cli import COMMANDS

    named = set(re.findall(r"python -m cts ([a-z]+)", README))
    assert named and named <= set(COMMANDS), sorted(named - set(COMMANDS))


def test_readme_test_command_is_what_ci_runs():
    """README command 2 and the install step of command 1 stand verbatim in
    .ci/run."""
    ci = (ROOT / ".ci" / "run").read_text()
    block = re.search(r"## Two commands\s+```bash\n(.*?)```", README, re.S).group(1)
    commands = [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    install, sweep = commands[0].rsplit(" && ", 1)
    for step in install.split(" && "):
        assert step in ci, f"README set-up step not in .ci/run: {step}"
    assert commands[1] in ci.splitlines(), f"README command 2 not in .ci/run: {commands[1]}"
    assert sweep.startswith(".venv/bin/pytest cases"), sweep
