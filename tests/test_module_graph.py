"""Modules by concept: inside a package of ``cts`` or ``reference`` no import
circle (an import inside a function body counts as much as one at the top of
the module), and no module reaches for another module's private name
(``from x import _name`` or ``x._name``).

A circle means two modules are one concept cut in two, or both need a third
one that does not exist yet; a private name taken across modules means the
seam is in the wrong place.  Both checks read the source with ``ast`` and
name every offence, so a failure says where to cut.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("cts", "reference")


# ------------------------------------------------------------ the graph
@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass
class Graph:
    root: Path
    modules: dict[str, Module]
    # (importer, imported) -> first line of the import in the importer
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    # (module, line, text) of every private name taken from another module
    private: list[tuple[str, int, str]] = field(default_factory=list)


def _modules(root: Path, packages=PACKAGES) -> dict[str, Module]:
    out = {}
    for top in packages:
        for p in sorted((root / top).rglob("*.py")):
            parts = list(p.relative_to(root).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            name = ".".join(parts)
            out[name] = Module(name, p, is_pkg, ast.parse(p.read_text(), filename=str(p)))
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _base(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    head = mod.package.split(".")
    head = head[: len(head) - (node.level - 1)]
    return ".".join(head + ([node.module] if node.module else []))


def build_graph(root: Path = ROOT, packages=PACKAGES) -> Graph:
    mods = _modules(root, packages)
    g = Graph(root, mods)

    def edge(src: str, dst: str, line: int) -> None:
        if dst in mods and dst != src:
            g.edges.setdefault((src, dst), line)

    for mod in mods.values():
        # local name -> module of ours it is bound to (for ``x._name``)
        bound: dict[str, str] = {}
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    edge(mod.name, a.name, node.lineno)
                    if a.asname and a.name in mods:
                        bound[a.asname] = a.name
                    elif a.name.split(".")[0] in packages:
                        bound[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = _base(mod, node)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in mods:  # a module of the package
                        edge(mod.name, sub, node.lineno)
                        bound[a.asname or a.name] = sub
                        continue
                    edge(mod.name, base, node.lineno)
                    if base in mods and _private(a.name):
                        g.private.append((mod.name, node.lineno, f"from {base} import {a.name}"))
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                chain, v = [node.attr], node.value
                while isinstance(v, ast.Attribute):
                    chain.append(v.attr)
                    v = v.value
                if isinstance(v, ast.Name) and v.id in bound:
                    # walk the dotted chain through modules of ours
                    target = bound[v.id]
                    for part in reversed(chain[1:]):
                        if f"{target}.{part}" not in mods:
                            break
                        target = f"{target}.{part}"
                    else:
                        if target != mod.name:
                            g.private.append((mod.name, node.lineno, f"{target}.{node.attr}"))
    return g


def intra_package_cycles(g: Graph) -> list[list[str]]:
    """Every strongly connected set of two or more modules of one package,
    each given as one circle through it (importer first)."""
    adj: dict[str, list[str]] = {m: [] for m in g.modules}
    for src, dst in sorted(g.edges):
        if g.modules[src].package == g.modules[dst].package:
            adj[src].append(dst)
    # Tarjan, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = 0
    for start in sorted(adj):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            if i < len(adj[v]):
                work.append((v, i + 1))
                w = adj[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return [_circle(adj, c) for c in sorted(comps)]


def _circle(adj: dict[str, list[str]], comp: list[str]) -> list[str]:
    """The shortest circle from the first module of ``comp`` back to it."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in adj[v]:
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def _describe(g: Graph, circle: list[str]) -> str:
    hops = [
        f"{a} -> {b} ({g.modules[a].path.relative_to(g.root)}:{g.edges[a, b]})"
        for a, b in zip(circle, circle[1:])
    ]
    return "  " + "\n  ".join(hops)


# ------------------------------------------------------------ the rules
@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph()


def test_the_graph_sees_the_whole_tree(graph):
    """A graph that lost modules or edges would pass vacuously."""
    assert len(graph.modules) > 100
    assert sum(1 for m in graph.modules if m.startswith("reference")) > 5
    intra = [e for e in graph.edges if graph.modules[e[0]].package == graph.modules[e[1]].package]
    assert len(intra) > 100, len(intra)


def test_no_import_circle_inside_a_package(graph):
    circles = intra_package_cycles(graph)
    assert not circles, f"{len(circles)} import circle(s) inside a package:\n" + "\n".join(
        _describe(graph, c) for c in circles
    )


def test_no_module_takes_a_private_name_of_another(graph):
    found = [f"{m} line {ln}: {what}" for m, ln, what in graph.private]
    assert not found, f"{len(found)} private name(s) taken across modules:\n  " + "\n  ".join(found)


# ------------------------------------------------- the checks can fail
def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


@pytest.mark.parametrize(
    "files, circle",
    [
        # two modules at the top of each other
        (
            {"a/x.py": "from a.y import f\n", "a/y.py": "from a import x\n"},
            ["a.x", "a.y", "a.x"],
        ),
        # one side hides its import in a function, relative form
        (
            {"a/x.py": "from .y import f\n", "a/y.py": "def f():\n    from .x import g\n"},
            ["a.x", "a.y", "a.x"],
        ),
        # through the package's own __init__
        (
            {"a/__init__.py": "from a.x import f\n", "a/x.py": "def f():\n    import a\n    return a.g\n"},
            ["a", "a.x", "a"],
        ),
        # three modules in a ring
        (
            {"a/x.py": "import a.y\n", "a/y.py": "import a.z\n", "a/z.py": "import a.x as x\n"},
            ["a.x", "a.y", "a.z", "a.x"],
        ),
    ],
)
def test_a_circle_is_found_and_named(tmp_path, files, circle):
    _write(tmp_path, {"a/__init__.py": "", **files})
    g = build_graph(tmp_path, ("a",))
    assert intra_package_cycles(g) == [circle]


def test_imports_across_packages_or_one_way_are_not_circles(tmp_path):
    _write(
        tmp_path,
        {
            "a/__init__.py": "",
            "a/x.py": "from a.y import f\nfrom a.b.z import g\n",
            "a/y.py": "def f():\n    from a.b import z\n",
            "a/b/__init__.py": "",
            "a/b/z.py": "from a.x import h\n",  # a.b.z -> a.x crosses packages
        },
    )
    assert intra_package_cycles(build_graph(tmp_path, ("a",))) == []


@pytest.mark.parametrize(
    "importer, expected",
    [
        ("from a.y import _helper\n", ["from a.y import _helper"]),
        ("def f():\n    from .y import public, _helper as h\n", ["from a.y import _helper"]),
        ("from a import y\nv = y._helper()\n", ["a.y._helper"]),
        ("import a.y\nv = a.y._TABLE\n", ["a.y._TABLE"]),
        ("import a.y as yy\nv = yy._TABLE[0]\n", ["a.y._TABLE"]),
        # public names, dunders, and one's own private names are fine
        ("from a.y import public\nimport a.y\nv = a.y.__name__\n_mine = 1\nw = _mine\n", []),
        # a private attribute of an object, not of a module, is not this rule's
        ("from a.y import public\nv = public()._cache\n", []),
    ],
)
def test_a_private_name_across_modules_is_found(tmp_path, importer, expected):
    _write(tmp_path, {"a/__init__.py": "", "a/y.py": "public = _helper = _TABLE = 1\n", "a/x.py": importer})
    g = build_graph(tmp_path, ("a",))
    assert [what for _, _, what in g.private] == expected
