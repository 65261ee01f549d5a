"""Static rules of the code's shape, read from the source with ``ast``: packages import each other
without cycles, and nothing imports Dagster's private modules (``dagster._*``), which change without
notice between releases."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.conftest import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rag_assets"


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _unit(module: str) -> str:
    """The package (or loose top-level module) of ``rag_assets`` that ``module`` belongs to."""
    return module.split(".")[1]


def package_graph() -> dict[str, set[str]]:
    """Which of rag_assets' packages and top-level modules import which others."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        unit = _unit(".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts))
        graph.setdefault(unit, set()).update(
            _unit(m) for m in _imports(path) if m.startswith("rag_assets.") and _unit(m) != unit)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every group of units that import each other round a loop (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for other in sorted(graph.get(unit, ())):
            if other not in index:
                visit(other)
                low[unit] = min(low[unit], low[other])
            elif other in stack:
                low[unit] = min(low[unit], index[other])
        if low[unit] == index[unit]:
            group = stack[stack.index(unit):]
            del stack[stack.index(unit):]
            if len(group) > 1:
                found.append(sorted(group))

    for unit in sorted(graph):
        if unit not in index:
            visit(unit)
    return found


def test_the_cycle_finder_finds_a_loop_and_only_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_packages_import_each_other_without_cycles():
    graph = package_graph()
    assert {"corpus", "evidence", "golden", "scoring", "report", "store", "defs"} <= set(graph)
    assert "evidence" in graph["golden"], "the graph holds real edges"
    assert cycles(graph) == []


def test_the_domain_core_knows_nothing_of_dagster_or_the_store():
    core = ("corpus", "evidence", "text", "generation", "curation", "golden", "scoring", "calibration", "rag",
            "report", "production", "quality")
    for path in PACKAGE.rglob("*.py"):
        unit = _unit(".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts))
        if unit in core:
            wrong = [m for m in _imports(path) if m.split(".")[0] == "dagster" or m.startswith("rag_assets.store")
                     or m.startswith("rag_assets.defs")]
            assert wrong == [], f"{path.relative_to(PROJECT_ROOT)} imports {wrong}"


def test_nothing_imports_dagsters_private_modules():
    private = [f"{path.relative_to(PROJECT_ROOT)}: {module}"
               for folder in ("rag_assets", "tests", "bench", "scripts", "examples")
               for path in (PROJECT_ROOT / folder).rglob("*.py") for module in _imports(path)
               if module.startswith("dagster._") or (module.startswith("dagster_") and "._" in module)]
    assert private == []
