"""The sandbox package's modules import each other without cycles.

Every ``import``/``from`` statement counts, at module level or inside a function (a lazy import
still ties the two modules together), including ``TYPE_CHECKING`` blocks."""

from __future__ import annotations

import ast
from pathlib import Path

from fakes.cli import ROOT

PACKAGE = "sandbox"
#: Being moved out of the package; its own imports are not part of the graph.
SKIPPED = frozenset({"checks"})


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The sandbox modules one import statement reaches (``from sandbox import a, b`` reaches
    ``a`` and ``b`` when they are modules; ``import sandbox.a.b`` reaches ``a``)."""
    found = set()
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level or not node.module:
            return found  # relative imports: none in this package
        if node.module == PACKAGE:
            names = [f"{PACKAGE}.{alias.name}" for alias in node.names]
        else:
            names = [node.module]
    for name in names:
        parts = name.split(".")
        if parts[0] == PACKAGE and len(parts) > 1 and parts[1] in modules:
            found.add(parts[1])
    return found


def import_graph(package_dir: Path = ROOT / PACKAGE) -> dict[str, set[str]]:
    """Module name -> the sandbox modules it imports anywhere in its source."""
    files = {p.stem: p for p in sorted(package_dir.glob("*.py")) if p.stem not in SKIPPED}
    modules = set(files) - {"__init__"}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(node, modules)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or ``None`` when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_graph_sees_imports_at_every_level():
    graph = import_graph()
    assert "protocol" in graph["worker"] and "limits" in graph["server"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_function_level_imports_count(tmp_path):
    (tmp_path / "one.py").write_text("def f():\n    from sandbox.two import x\n")
    (tmp_path / "two.py").write_text("from sandbox import one\n")
    assert find_cycle(import_graph(tmp_path)) == ["one", "two", "one"]


def test_sandbox_imports_are_acyclic():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in sandbox/: " + " -> ".join(cycle or [])


if __name__ == "__main__":
    for module, edges in sorted(import_graph().items()):
        print(f"{module} -> {', '.join(sorted(edges)) or '-'}")
    print("cycle:", find_cycle(import_graph()))
