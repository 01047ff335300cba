"""No import circle anywhere in ``python/forestimp`` (issue #51), imports inside functions
counted: a circle closed by a function-level import is still two modules that each need the
other, only found later.

The graph is read from the source with ``ast``, nothing imported: every ``import`` and
``from ... import`` anywhere in a module (top level, functions, ``try`` and ``if`` blocks),
relative ones resolved against the module's package. ``from . import x`` is the module
``forestimp.x`` when there is one, else the package's ``__init__``; an import of a package is
an import of its ``__init__``. The compiled ``_core`` is a leaf.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "forestimp"


def _modules(root: Path) -> dict[str, Path | None]:
    """Dotted module name -> its source (None for a compiled module or a stub only)."""
    mods: dict[str, Path | None] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    for path in [*root.rglob("*.so"), *root.rglob("*.pyd"), *root.rglob("*.pyi")]:
        rel = path.relative_to(root.parent)
        mods.setdefault(".".join((*rel.parts[:-1], rel.name.split(".")[0])), None)
    return mods


def _resolve(name: str, mods: dict[str, Path | None]) -> str | None:
    """The package module ``name`` is, or lies in (an attribute of); None outside it."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports, anywhere in its source."""
    mods = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        if path is None:
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in mods else base)
            for target in targets:
                found = _resolve(target, mods)
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def _one_loop(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, for the message."""
    inside = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & inside):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return component


def test_the_finder_sees_a_circle_through_a_function_level_import(tmp_path):
    # The check itself can fail: a circle closed only inside a function is found.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("from .sub import g\n\ndef f():\n    return g()\n")
    (pkg / "sub" / "__init__.py").write_text("from ._impl import g\n")
    (pkg / "sub" / "_impl.py").write_text("def g():\n    from ..a import f\n    return f\n")
    graph = import_graph(pkg)
    assert graph["pkg.sub._impl"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.sub", "pkg.sub._impl"]]


def test_no_import_circle_in_the_package():
    graph = import_graph()
    assert "forestimp.persistence" in graph and "forestimp._core" in graph
    found = circles(graph)
    loops = ["  " + " -> ".join(_one_loop(graph, c)) for c in found]
    assert not found, "import circles in python/forestimp:\n" + "\n".join(loops)
