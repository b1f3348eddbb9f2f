"""Dependency cycles among transactions: G1c (through write-read edges) and G0.

Why the graph stays small: an op can only lie on a cycle if it has an edge in
and an edge out. Write-read edges leave the op that sent a value and enter every
other op that read it, so a pure reader (a poll) never has an edge out and a
pure sender never has a write-read edge in. Without ``--ww-deps`` only ops that
both read and sent are nodes; with it, every sender is (ww edges chain them
along each key's version order) but readers still need to have sent something.

Search: strongly connected components with networkx, then inside each one a
shortest cycle by breadth-first search, preferring cycles made of write-read
edges alone (those are real anomalies even with ``--ww-deps``). Every loop
checks a deadline; when it passes the search stops and the verdict says the
cycle check is incomplete instead of hanging.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import networkx as nx

from checkers._collect import Collector
from checkers._verdict import Anomalies
from checkers._versions import VersionOrder
from harness.base.contract import FAIL

Edge = tuple[int, int]
#: why an edge exists: ("wr", key, value) or ("ww", key, value, next value)
Why = tuple[Any, ...]


class OutOfTime(Exception):
    """The cycle search used up its time budget."""


@dataclass
class CycleResult:
    """What the search found and whether it finished."""

    wr_only_cycle: bool = False
    complete: bool = True
    reason: str = ""
    nodes: int = 0
    edges: int = 0
    sccs: list[int] = field(default_factory=list)


class _Deadline:
    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.at = time.monotonic() + budget_s
        self.ticks = 0

    def check(self) -> None:
        self.ticks += 1
        if self.ticks & 1023 == 0 and time.monotonic() > self.at:
            raise OutOfTime

    def check_now(self) -> None:
        if time.monotonic() > self.at:
            raise OutOfTime


def find_cycles(
    collector: Collector,
    orders: dict[str, VersionOrder],
    *,
    ww_deps: bool,
    budget_s: float,
    out: Anomalies,
) -> CycleResult:
    """Report G1c (and G0 with ``ww_deps``) cycles into ``out``."""
    result = CycleResult()
    deadline = _Deadline(budget_s)
    try:
        wr = _wr_edges(collector, ww_deps=ww_deps)
        ww = _ww_edges(collector, orders, deadline) if ww_deps else {}
        result.edges = len(wr) + len(ww)
        _search(wr, ww, deadline, out, result)
    except OutOfTime:
        result.complete = False
        result.reason = (
            f"the cycle search (G0/G1c) ran out of its {budget_s:g}s time budget; "
            "cycles were not fully checked"
        )
    return result


def _wr_edges(collector: Collector, *, ww_deps: bool) -> dict[Edge, Why]:
    """writer -> reader for every value an ok/info op that also sent read."""
    keys = collector.keys
    readers = collector.cycle_readers
    candidates = {index for index, _ in readers}
    edges: dict[Edge, Why] = {}
    for reader, reads in readers:
        for k, v in reads:
            ks = keys[k]
            writer = ks.writers.get(v)
            if writer is None or writer == reader or ks.writer_kind.get(v) == FAIL:
                continue
            if not ww_deps and writer not in candidates:
                continue
            edges.setdefault((writer, reader), ("wr", k, v))
    return edges


def _ww_edges(
    collector: Collector, orders: dict[str, VersionOrder], deadline: _Deadline
) -> dict[Edge, Why]:
    """sender of a value -> sender of the next value in the key's version order."""
    edges: dict[Edge, Why] = {}
    for k in sorted(orders):
        vo = orders[k]
        ks = collector.keys[k]
        writers = ks.writers
        kinds = ks.writer_kind
        prev_writer: int | None = None
        prev_value = 0
        for p in range(len(vo.offsets)):
            deadline.check()
            value = vo.value_at(p)
            writer = writers.get(value)
            if writer is not None and kinds.get(value) == FAIL:
                writer = None
            if writer is not None and prev_writer is not None and writer != prev_writer:
                edges.setdefault((prev_writer, writer), ("ww", k, prev_value, value))
            prev_writer, prev_value = writer, value
    return edges


def _search(
    wr: dict[Edge, Why],
    ww: dict[Edge, Why],
    deadline: _Deadline,
    out: Anomalies,
    result: CycleResult,
) -> None:
    wr_graph = _graph(wr)
    covered: set[int] = set()
    for scc in _sccs(wr_graph, deadline):
        cycle = _shortest_cycle(wr_graph, scc, min(scc), min(scc), deadline)
        if cycle:
            result.wr_only_cycle = True
            covered.update(scc)
            _report(out, "G1c", cycle, wr, ww)
    if not ww:
        return
    both = {**ww, **wr}
    graph = _graph(both)
    result.nodes = graph.number_of_nodes()
    for scc in _sccs(graph, deadline):
        if scc & covered:
            continue
        best: list[int] | None = None
        for u, v in sorted(e for e in wr if e[0] in scc and e[1] in scc)[:16]:
            path = _shortest_cycle(graph, scc, v, u, deadline)
            if path and (best is None or len(path) < len(best)):
                best = [u, *path[:-1]]
        if best:
            _report(out, "G1c", best, wr, ww)
    ww_graph = _graph(ww)
    for scc in _sccs(ww_graph, deadline):
        cycle = _shortest_cycle(ww_graph, scc, min(scc), min(scc), deadline)
        if cycle:
            _report(out, "G0", cycle, {}, ww)


def _graph(edges: Iterable[Edge]) -> Any:
    graph = nx.DiGraph()
    graph.add_edges_from(edges)
    return graph


def _sccs(graph: Any, deadline: _Deadline) -> list[set[int]]:
    deadline.check_now()
    found = [set(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    deadline.check_now()
    return sorted(found, key=min)


def _shortest_cycle(
    graph: Any, scc: set[int], start: int, goal: int, deadline: _Deadline
) -> list[int] | None:
    """Nodes of a shortest path start -> ... -> goal inside ``scc`` (start == goal: a cycle).

    The path is returned without repeating its end: ``[start, ..., goal]`` when
    they differ, ``[start, ...]`` when they are the same node.
    """
    parent: dict[int, int] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        deadline.check()
        node = queue.popleft()
        for nxt in sorted(graph.successors(node)):
            if nxt not in scc:
                continue
            if nxt == goal:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                path.reverse()
                return path if start == goal else [*path, goal]
            if nxt not in seen:
                seen.add(nxt)
                parent[nxt] = node
                queue.append(nxt)
    return None


def _report(
    out: Anomalies, kind: str, cycle: list[int], wr: dict[Edge, Why], ww: dict[Edge, Why]
) -> None:
    """A cycle T1 -> T2 -> ... -> T1 with one reason per step."""
    nodes = [*cycle, cycle[0]]
    steps: list[dict[str, Any]] = []
    for a, b in pairwise(nodes):
        why = wr.get((a, b)) or ww[(a, b)]
        if why[0] == "wr":
            steps.append({"from": a, "to": b, "type": "wr", "key": why[1], "value": why[2]})
        else:
            steps.append(
                {"from": a, "to": b, "type": "ww", "key": why[1], "values": [why[2], why[3]]}
            )
    if out.counted(kind):
        out.keep(kind, {"cycle": nodes, "steps": steps})
