"""The package's import graph has no circle, type-only and function-local imports included: a circle makes the
import order matter (one side sees the other half-built) and makes the two sides one unit that cannot be read,
tested or moved alone. And the lake layer does not know the families: it stores what they declare, so no module
under ``dialogbench/lake`` imports a family package, and no string literal there names a family's table or protocol.

The graph is read from the source with ``ast`` (nothing is imported): every ``import`` and ``from … import`` at any
level of a module (``if TYPE_CHECKING:`` blocks and function bodies included), relative imports resolved;
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``. Importing a submodule
also runs its packages' ``__init__``, but that is not counted: the edge is to the module the code names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dialogbench"
FAMILY_PACKAGES = ("botchat", "mtbench101", "gameeval", "canary", "judge_checks")
# Circles allowed for now, each as the sorted list of its modules, with why it is still there. The goal is none.
KNOWN_CYCLES: list[list[str]] = []


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__.py``)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` (at ``path``) imports anywhere in its body."""
    found: set[str] = set()
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(_nearest(alias.name, modules))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else _nearest(base, modules))
    found.discard("")
    found.discard(name)
    return found


def _nearest(dotted: str, modules: dict[str, Path]) -> str:
    """``dotted`` or its nearest enclosing module of the package; "" for one outside it."""
    parts = dotted.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return ""


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's circles, one per strongly connected component of more than one module (Tarjan's algorithm),
    each shown as one chain through it: ``a -> b -> … -> a``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    counter = 0

    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return [_chain(component, graph) for component in components]


def _chain(component: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest circle through the component's first module (breadth-first, inside the component)."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle through {start}")


def test_the_checker_finds_a_circle_and_resolves_imports(tmp_path):
    """The checker itself: a relative ``from . import name`` of a module, a ``TYPE_CHECKING`` import and a
    function-local one all count, and a circle through them is reported as a chain."""
    modules = {"p": tmp_path / "p" / "__init__.py", "p.a": tmp_path / "p" / "a.py", "p.b": tmp_path / "p" / "b.py",
               "p.c": tmp_path / "p" / "c.py"}
    (tmp_path / "p").mkdir()
    modules["p"].write_text("")
    modules["p.a"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n")
    modules["p.b"].write_text("def f():\n    from p.c import thing\n")
    modules["p.c"].write_text("import p.a\nfrom p import missing\n")
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph == {"p": set(), "p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a", "p"}}
    assert cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]


def test_no_import_cycle():
    found = cycles(import_graph())
    known = sorted(sorted(set(c)) for c in KNOWN_CYCLES)
    new = [c for c in found if sorted(set(c)) not in known]
    for chain in new:
        print(" -> ".join(chain))
    assert not new, "import circles:\n" + "\n".join(" -> ".join(c) for c in new)
    gone = [c for c in known if c not in [sorted(set(f)) for f in found]]
    assert not gone, f"KNOWN_CYCLES lists circles that are gone (remove them): {gone}"


def lake_modules(graph: dict[str, set[str]]) -> list[str]:
    return sorted(m for m in graph if m == f"{PACKAGE}.lake" or m.startswith(f"{PACKAGE}.lake."))


def test_lake_imports_no_family():
    graph = import_graph()
    families = [f"{PACKAGE}.{name}" for name in FAMILY_PACKAGES]
    found = {module: sorted(t for t in graph[module] for f in families if t == f or t.startswith(f + "."))
             for module in lake_modules(graph)}
    assert not {m: targets for m, targets in found.items() if targets}, f"lake modules importing a family: {found}"


def family_names() -> set[str]:
    """What names a family's data in the lake, from the families themselves: each family's name, its tables, its
    metrics' leaderboard views and judge protocols, and the old and new names it declares for the lake's migrations
    (``Family.legacy``)."""
    from dialogbench.run import registry

    names: set[str] = set()
    for family in registry.builtin_families():
        legacy = family.legacy
        names.update((family.name, f"{family.name}_"))  # "<family>_": the prefix of its stages ("gameeval_<game>")
        names.update(table.name for table in family.tables)
        names.update(n for metric in family.metrics for n in (metric.view, metric.protocol) if n)
        for mapping in (legacy.verdict_tables, legacy.stages, legacy.protocols):
            names.update(mapping)
            names.update(mapping.values())
    return names


def string_literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module (f-strings' literal parts included) but its docstrings, which may tell the
    history of a family's names without the code depending on it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_lake_code_names_no_family_table_or_protocol():
    names = family_names()
    assert {"botchat", "mtbench101", "gameeval", "unieval_judgments", "mtbench101_judge"} <= names  # they are read
    word = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
                      + r")(?![A-Za-z0-9])")
    modules = module_files()
    found = [f"{modules[m].relative_to(ROOT)}:{line}: {value!r} names {hit.group(1)}"
             for m in lake_modules(import_graph()) for line, value in string_literals(modules[m])
             if (hit := word.search(value))]
    assert not found, "lake code naming a family's table or protocol:\n" + "\n".join(found)


def test_the_literal_check_sees_code_and_skips_docstrings(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""Module: botchat."""\ndef f():\n    """About arena_judgments."""\n    return f"x {1} y"\n'
                    'TABLE = "arena_judgments"\n')
    assert sorted(string_literals(path)) == [(4, " y"), (4, "x "), (5, "arena_judgments")]
