"""The floors of ARCHITECTURE.md, enforced: imports point one way and never form a cycle.

Every ``import`` statement of every module counts, including the ones inside
functions (a lazy import is still a dependency; it only moves the cost).
Reading the code with ``ast`` means nothing is imported to check it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "cluster", "nemesis", "workloads", "checkers", "results")

#: Module-name prefixes and their floor, most specific first. An import may point
#: only to a lower floor, or inside its own top-level package.
FLOORS: tuple[tuple[str, int, str], ...] = (
    ("harness.base", 0, "ground floor: errors, history, run directory, fault vocabulary"),
    ("harness.gen", 1, "pure generators and their simulator"),
    ("cluster", 2, "clusters and provisioners"),
    ("checkers", 2, "history analysis"),
    ("nemesis", 2, "faults"),
    ("workloads", 2, "workloads: clients, generators, checkers' wiring"),
    ("results", 2, "stored runs: reports, analysis"),
    ("harness.run", 3, "the runner"),
    ("harness.matrix", 3, "the runner, many times"),
    ("harness.scenario", 3, "scripted scenario runs"),
    ("harness", 4, "the CLI, its commands and benchmarks"),
)
#: Arrows allowed between packages of the same floor (a DAG: no pair both ways).
SIDEWAYS = {
    ("nemesis", "cluster"),
    ("workloads", "cluster"),
    ("results", "checkers"),
}


def floor(module: str) -> tuple[int, str]:
    for prefix, level, _ in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return level, prefix
    raise AssertionError(f"{module} is on no floor: add it to FLOORS and ARCHITECTURE.md")


def modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imports(path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The insync modules ``path`` imports (the most specific module each names)."""
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            ]
        for imported in names:
            module = imported
            while module and module not in known:
                module = module.rpartition(".")[0]
            if module:
                yield module


def graph() -> nx.DiGraph:
    known = modules()
    g = nx.DiGraph()
    for name, path in known.items():
        g.add_node(name)
        for target in imports(path, known):
            if target != name and not name.startswith(target + "."):  # a package's own root
                g.add_edge(name, target)
    return g


@pytest.fixture(scope="module")
def import_graph() -> nx.DiGraph:
    """Built once for the three tests that read it: parsing every module costs seconds."""
    return graph()


def upward(g: nx.DiGraph) -> list[str]:
    bad = []
    for a, b in g.edges:
        (fa, pa), (fb, pb) = floor(a), floor(b)
        same_package = a.split(".")[0] == b.split(".")[0]
        if fb < fa or (fb == fa and same_package) or (pa, pb) in SIDEWAYS:
            continue
        bad.append(f"{a} (floor {fa}) imports {b} (floor {fb})")
    return sorted(bad)


def test_every_module_is_on_a_floor() -> None:
    for name in modules():
        floor(name)


def test_imports_point_down(import_graph: nx.DiGraph) -> None:
    assert upward(import_graph) == []


def test_no_import_cycles(import_graph: nx.DiGraph) -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize("pair", sorted(SIDEWAYS), ids="->".join)
def test_sideways_arrows_form_no_cycle(pair: tuple[str, str]) -> None:
    assert (pair[1], pair[0]) not in SIDEWAYS


def private_crossings(edges: list[tuple[str, str]]) -> list[str]:
    """Imports of a private module (a ``_name`` part, as ``checkers._input``) from outside
    its top-level package: what a package keeps private is its own business."""
    return sorted(
        f"{a} imports {b}"
        for a, b in edges
        if any(p.startswith("_") for p in b.split(".")[1:]) and a.split(".")[0] != b.split(".")[0]
    )


def test_no_package_imports_another_packages_private_module(import_graph: nx.DiGraph) -> None:
    assert private_crossings(list(import_graph.edges)) == []


def test_the_private_rule_sees_a_crossing() -> None:
    edges = [("results.report.data", "checkers._input"), ("checkers._check", "checkers._input")]
    assert private_crossings(edges) == ["results.report.data imports checkers._input"]
