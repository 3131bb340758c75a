"""The one-way layers of ``cts`` (docs/ARCHITECTURE.md) are a contract, not a
wish: the import-linter layers contract names every package of ``cts``, and
an upward import, even one hidden inside a function body, breaks it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> dict:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["id"]: c for c in cfg["contracts"]}


def _layer_names() -> set[str]:
    names = set()
    for layer in _contracts()["layers"]["layers"]:
        names |= {x.strip() for x in layer.replace(":", "|").split("|")}
    return names


def test_layers_contract_covers_every_package_and_module_of_cts():
    parts = {
        p.name if p.is_dir() else p.stem
        for p in (ROOT / "cts").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name != "__init__.py")
    }
    missing = {f"cts.{n}" for n in parts} - _layer_names()
    assert not missing, f"not in the layers contract: {sorted(missing)}"
    assert "reference" in _layer_names()


def test_few_top_level_modules():
    """Everything of a concern lives in its package; the top level keeps the
    ground floor and the entry points only."""
    mods = [p.name for p in (ROOT / "cts").glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(mods) <= 8, mods
    assert not [m for m in mods if m.startswith("numerics") or m.endswith("_plugin.py")], mods


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("lint-imports not installed (PyPI import-linter; pip install -e '.[dev]')")
    return subprocess.run(
        [exe, "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    t = tmp_path_factory.mktemp("layers")
    for d in ("cts", "reference"):
        shutil.copytree(ROOT / d, t / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", t / "pyproject.toml")
    return t


@pytest.mark.e2e
def test_the_tree_keeps_its_contracts(tree):
    r = _lint_imports(tree)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "broken" in r.stdout and "0 broken" in r.stdout


@pytest.mark.e2e
@pytest.mark.parametrize(
    "module, line, broken",
    [
        # a case space that reaches up into the pytest layer, inside a function
        (
            "cts/families/coop.py",
            "from cts.plugin import HARNESS",
            "cts.families is not allowed to import cts.plugin",
        ),
        # a backend that calls a run flow
        (
            "cts/backends/vulkan.py",
            "from cts.runs.coop import run_coop",
            "cts.backends is not allowed to import cts.runs",
        ),
        # a kernel generator that needs a backend
        (
            "cts/kernels/opencl_c.py",
            "from cts.backends import make_backend",
            "not allowed to import cts.backends",
        ),
        # the reference model that peeks at the emulator
        ("reference/layout.py", "import cts.backends.emulator", "reference is not allowed to import cts"),
        # pytest below the plugin layer
        ("cts/runs/intel.py", "import pytest", "not allowed to import pytest"),
        # the emulator decoding through the oracle's layout
        ("cts/backends/emu_joint.py", "from reference.layout import a_register_image", "reference.layout"),
    ],
)
def test_an_upward_import_breaks_the_contract(tree, tmp_path, module, line, broken):
    t = tmp_path / "t"
    shutil.copytree(tree, t)
    f = t / module
    f.write_text(f.read_text() + f"\n\ndef _injected():\n    {line}\n")
    r = _lint_imports(t)
    assert r.returncode != 0, r.stdout[-2000:]
    assert broken in r.stdout, r.stdout[-3000:]
