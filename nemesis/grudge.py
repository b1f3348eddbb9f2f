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
PLAIN_SHAPES = ("one", "majority", "majorities-ring", "minority-third", "one-way", "bridge")
#: Shapes resolved from the cluster's own word at the moment of the fault
#: (also ``leaders:N`` / ``primaries:N``: the leaders of N drawn partitions, each alone).
METADATA_SHAPES = ("leaders", "primaries", "controller")
SHAPES = PLAIN_SHAPES + METADATA_SHAPES
#: What the random generator draws when ``--nemesis-targets`` names no shape: none
#: is a total partition on 3 nodes or more (``nemesis.shapes`` rewrites the ring on
#: 3 nodes); no alias twice; ``bridge`` is what the ring becomes on 3 nodes.
DEFAULT_SHAPES = ("one", "majority", "majorities-ring", "minority-third", "one-way",
                  "leaders", "controller")


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


def ring_window(n: int) -> int | None:
    """How many nodes each node of a ring of ``n`` sees (itself included), or None.

    The smallest odd number that is a majority, so windows are centred and a
    node that sees a peer is seen by it: over TCP a one-way grudge cuts the
    link both ways, and Jepsen's leaning windows (even majorities: 3, 6, 7
    nodes) leave every node seeing a minority (on 3 nodes, nobody at all).
    None when that window is the whole ring (3 nodes and fewer): no ring of
    majorities exists there.
    """
    m = majority(n)
    window = m if m % 2 else m + 1
    return window if window < n else None


def majorities_ring(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Every node sees a majority (itself included), but no two see the same one.

    Nodes sit on a shuffled ring; each sees the ``ring_window`` nodes centred on
    it, so the grudge is symmetric. ``ValueError`` on 3 nodes or fewer, where
    no such ring exists (``bridge`` is the nearest shape there).
    """
    window = ring_window(len(nodes))
    if window is None:
        raise ValueError(f"no ring of majorities on {len(nodes)} nodes (needs 4 or more)")
    ring = list(nodes)
    rng.shuffle(ring)
    n, half = len(ring), window // 2
    everyone = frozenset(ring)
    return {ring[i]: everyone - frozenset(ring[(i + j) % n] for j in range(-half, half + 1))
            for i in range(n)}


def bridge(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Two halves that cannot talk, and one node (the bridge) that talks to both (Jepsen's).

    On 3 nodes this is the ring of majorities over TCP: every node sees a
    majority, no two the same one. ``ValueError`` below 3 nodes.
    """
    if len(nodes) < 3:
        raise ValueError(f"no bridge on {len(nodes)} nodes (needs 3 or more)")
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    rest = shuffled[1:]
    left, right = frozenset(rest[: len(rest) // 2]), frozenset(rest[len(rest) // 2:])
    return {**{n: right for n in left}, **{n: left for n in right}}


def one_way(node: str, nodes: Sequence[str]) -> Grudge:
    """``node`` can send to every other node but hears from none of them.

    Over TCP (all of Kafka's traffic) that cuts its links both ways, as ``one``
    does: no connection to or from it completes. Kept for protocols and
    checks that look at the grudge itself.
    """
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
    if shape == "bridge":
        return bridge(nodes, rng)
    raise ValueError(f"unknown partition shape {shape!r}; shapes are {', '.join(SHAPES)}")


def normalize(grudge: Mapping[str, frozenset[str] | Sequence[str]]) -> Grudge:
    """Drop empty entries and self-grudges; sets everywhere."""
    out = {n: frozenset(g) - {n} for n, g in grudge.items()}
    return {n: g for n, g in sorted(out.items()) if g}


def as_json(grudge: Mapping[str, frozenset[str]]) -> dict[str, list[str]]:
    """A grudge as history JSON: node → sorted list of nodes it cannot hear from."""
    return {n: sorted(g) for n, g in sorted(grudge.items()) if g}
