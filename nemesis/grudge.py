"""Partition shapes as grudges: which nodes each node refuses to hear from.

Pure functions over node names, as in Jepsen's ``jepsen.nemesis``. A *grudge*
maps a node to the nodes whose packets it drops; the partition nemesis turns it
into iptables rules, and the history records it, so the exact cut is always
known. A *component* partition (``[["n1"], ["n2", "n3"]]``) is the common
case: every node drops every node outside its own component.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

Grudge = dict[str, frozenset[str]]
Components = list[list[str]]

#: Shapes that need no live metadata.
PLAIN_SHAPES = ("one", "majority", "majorities-ring", "minority-third", "one-way")
#: Shapes resolved from the cluster's own word at the moment of the fault.
METADATA_SHAPES = ("leaders", "primaries", "controller")
SHAPES = PLAIN_SHAPES + METADATA_SHAPES


def majority(n: int) -> int:
    """The smallest number of nodes that is more than half of ``n``."""
    return n // 2 + 1


def complete_grudge(components: Sequence[Sequence[str]]) -> Grudge:
    """Every node drops every node outside its own component."""
    everyone = frozenset(n for comp in components for n in comp)
    return {n: everyone - frozenset(comp) for comp in components for n in comp}


def bisect(nodes: Sequence[str], first: int) -> Components:
    """The first ``first`` nodes against the rest."""
    return [list(nodes[:first]), list(nodes[first:])]


def isolate(targets: Sequence[str], nodes: Sequence[str], *, each: bool = False) -> Components:
    """``targets`` cut off from the rest: together, or ``each`` alone (Jepsen's primaries)."""
    chosen = [n for n in nodes if n in set(targets)]
    rest = [n for n in nodes if n not in set(targets)]
    groups = [[n] for n in chosen] if each else [chosen]
    return [g for g in [*groups, rest] if g]


def majorities_ring(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Every node sees a majority (itself included), but no two see the same one.

    Nodes sit on a shuffled ring; each sees the window of ``majority(n)`` nodes
    around it. When that majority is odd (4, 5, 8, 9 nodes) the window is centred
    and the grudge symmetric; otherwise it leans one way (3 nodes: n1 hears n2,
    n2 hears n3, n3 hears n1), as in Jepsen.
    """
    ring = list(nodes)
    rng.shuffle(ring)
    n, m = len(ring), majority(len(ring))
    everyone = frozenset(ring)
    grudge: Grudge = {}
    for i in range(n):
        window = [ring[(i + j) % n] for j in range(m)]
        centre = window[m // 2]
        grudge[centre] = everyone - frozenset(window)
    return grudge


def one_way(node: str, nodes: Sequence[str]) -> Grudge:
    """``node`` can send to every other node but hears from none of them."""
    return {node: frozenset(n for n in nodes if n != node)}


def plain_shape(shape: str, nodes: Sequence[str], rng: random.Random) -> Components | Grudge:
    """Components (or, for ring and one-way, a grudge) for a shape needing no metadata."""
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    n = len(shuffled)
    cut = {"one": 1, "majority": n // 2, "minority-third": max(1, n // 3)}.get(shape)
    if cut is not None:
        order = {x: i for i, x in enumerate(nodes)}
        return [sorted(c, key=order.__getitem__) for c in bisect(shuffled, cut)]
    if shape == "majorities-ring":
        return majorities_ring(nodes, rng)
    if shape == "one-way":
        return one_way(shuffled[0], nodes)
    raise ValueError(f"unknown partition shape {shape!r}; shapes are {', '.join(SHAPES)}")


def normalize(grudge: Mapping[str, frozenset[str] | Sequence[str]]) -> Grudge:
    """Drop empty entries and self-grudges; sets everywhere."""
    out = {n: frozenset(g) - {n} for n, g in grudge.items()}
    return {n: g for n, g in sorted(out.items()) if g}


def as_json(grudge: Mapping[str, frozenset[str]]) -> dict[str, list[str]]:
    """A grudge as history JSON: node → sorted list of nodes it cannot hear from."""
    return {n: sorted(g) for n, g in sorted(grudge.items()) if g}
