"""Partition shapes: bisection sizes, the majorities ring, one-way cuts (Hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis import grudge as g
from nemesis.impact import linked

node_lists = st.integers(min_value=3, max_value=9).map(lambda n: [f"n{i}" for i in range(1, n + 1)])
seeds = st.integers(min_value=0, max_value=2**32)


def visible(grudge: g.Grudge, node: str, nodes: list[str]) -> frozenset[str]:
    return frozenset(nodes) - grudge.get(node, frozenset())


def tcp_view(grudge: g.Grudge, node: str, nodes: list[str]) -> frozenset[str]:
    """Who ``node`` can hold a TCP connection with: a grudge either way cuts the link."""
    return frozenset(m for m in nodes if m == node or linked(grudge, node, m))


@given(node_lists.filter(lambda ns: len(ns) >= 4), seeds)
def test_majorities_ring_every_node_sees_a_distinct_majority(nodes: list[str], seed: int) -> None:
    grudge = g.majorities_ring(nodes, random.Random(seed))
    assert set(grudge) == set(nodes), "every node has a window"
    views = [visible(grudge, n, nodes) for n in nodes]
    assert all(len(v) >= g.majority(len(nodes)) for v in views)
    assert all(n in visible(grudge, n, nodes) for n in nodes), "a node sees itself"
    assert len(set(views)) == len(nodes), "no two nodes see the same majority"
    # over TCP too: what a node sees, it can connect to
    assert [tcp_view(grudge, n, nodes) for n in nodes] == views


@given(node_lists.filter(lambda ns: len(ns) >= 4), seeds)
def test_majorities_ring_is_symmetric(nodes: list[str], seed: int) -> None:
    """Even majorities too (6, 7 nodes): a leaning window leaves every node a minority
    over TCP, since a one-way grudge cuts the connection both ways."""
    grudge = g.majorities_ring(nodes, random.Random(seed))
    for a in nodes:
        for b in grudge[a]:
            assert a in grudge[b]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_there_is_no_ring_of_majorities_on_three_nodes_or_fewer(n: int) -> None:
    with pytest.raises(ValueError, match="no ring of majorities"):
        g.majorities_ring([f"n{i}" for i in range(1, n + 1)], random.Random(0))


@given(node_lists, seeds)
def test_bridge_cuts_two_halves_joined_by_one_node(nodes: list[str], seed: int) -> None:
    grudge = g.bridge(nodes, random.Random(seed))
    (bridge,) = [n for n in nodes if n not in grudge]
    assert all(linked(grudge, bridge, n) for n in nodes if n != bridge)
    views = {n: tcp_view(grudge, n, nodes) for n in nodes}
    halves = {v - {bridge} for n, v in views.items() if n != bridge}
    assert len(halves) == 2 and sum(map(len, halves)) == len(nodes) - 1, "two halves"
    assert max(map(len, halves)) - min(map(len, halves)) <= 1
    if len(nodes) % 2:  # equal halves: with the bridge, each side is a majority
        assert all(len(v) >= g.majority(len(nodes)) for v in views.values())
    if len(nodes) == 3:  # the ring of majorities that 3 nodes cannot have
        assert len(set(views.values())) == 3


@pytest.mark.parametrize(("shape", "sizes"), [
    ("one", {3: (1, 2), 5: (1, 4)}),
    ("majority", {3: (1, 2), 4: (2, 2), 5: (2, 3), 9: (4, 5)}),
    ("minority-third", {3: (1, 2), 5: (1, 4), 6: (2, 4), 9: (3, 6)}),
], ids=["one", "majority", "minority-third"])
def test_bisection_sizes(shape: str, sizes: dict[int, tuple[int, int]]) -> None:
    for n, expected in sizes.items():
        nodes = [f"n{i}" for i in range(1, n + 1)]
        comps = g.plain_shape(shape, nodes, random.Random(n))
        assert isinstance(comps, list)
        assert tuple(len(c) for c in comps) == expected
        assert sorted(x for c in comps for x in c) == sorted(nodes)


@given(node_lists, seeds)
def test_complete_grudge_cuts_exactly_between_components(nodes: list[str], seed: int) -> None:
    comps = g.plain_shape("majority", nodes, random.Random(seed))
    assert isinstance(comps, list)
    grudge = g.complete_grudge(comps)
    side = {n: i for i, c in enumerate(comps) for n in c}
    for a in nodes:
        for b in nodes:
            assert (b in grudge[a]) == (side[a] != side[b])


def test_one_way_node_hears_nobody_and_nobody_holds_a_grudge_against_it() -> None:
    nodes = ["n1", "n2", "n3"]
    grudge = g.plain_shape("one-way", nodes, random.Random(1))
    assert isinstance(grudge, dict) and len(grudge) == 1
    (victim, cut), = grudge.items()
    assert cut == frozenset(nodes) - {victim}


def test_isolate_each_gives_every_target_its_own_component() -> None:
    assert g.isolate(["n3", "n1"], ["n1", "n2", "n3", "n4"], each=True) == [
        ["n1"], ["n3"], ["n2", "n4"]]
    assert g.isolate(["n3", "n1"], ["n1", "n2", "n3"]) == [["n1", "n3"], ["n2"]]


def test_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown partition shape"):
        g.plain_shape("triangle", ["n1", "n2", "n3"], random.Random(0))
