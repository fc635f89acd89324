"""No import cycles in nilmbuild (issue 33), counting the imports inside functions too: between modules, and
between the packages (nilmbuild.site, nilmbuild.capture, ...). An edge into a package's __init__ is left out (a
package's facade may re-export its modules). nilmbuild.provenance, the bottom of the house, imports nothing of
nilmbuild."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "nilmbuild"


def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = p.relative_to(ROOT.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _targets(node, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        pkg = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        base = pkg + ("." + base if base else "")
    return [f"{base}.{a.name}" for a in node.names] + [base]


def import_graph() -> dict[str, set[str]]:
    """module -> the nilmbuild modules it imports (not packages' __init__)."""
    mods = _modules()
    packages = {m for m, p in mods.items() if p.name == "__init__.py"}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            for t in _targets(node, m, p.name == "__init__.py"):
                if t in mods and t not in packages and t != m:
                    graph[m].add(t)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (as a path that returns to its start), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for t in sorted(graph.get(n, ())):
            if state.get(t) == 1:
                return stack[stack.index(t) :] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_module_imports_back_into_a_cycle():
    cycle = _cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for m, targets in import_graph().items():
        for t in targets:
            if _package(t) != _package(m) and "." in _package(m).removeprefix("nilmbuild"):
                graph.setdefault(_package(m), set()).add(_package(t))
    cycle = _cycle({k: {t for t in v if "." in t.removeprefix("nilmbuild")} for k, v in graph.items()})
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


def test_the_search_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_provenance_is_the_bottom_of_the_house():
    assert import_graph()["nilmbuild.provenance"] == set()
