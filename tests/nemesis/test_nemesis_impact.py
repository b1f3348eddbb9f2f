"""Whole-cluster and quorum-majority faults are recognised, and narrowed unless asked for."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis import grudge as g
from nemesis.impact import Impact, of_grudge, of_nodes, spare
from nemesis.targets import Facts, resolve

N3 = ["n1", "n2", "n3"]
N5 = ["n1", "n2", "n3", "n4", "n5"]


def comps(*groups: list[str]) -> g.Grudge:
    return g.complete_grudge(groups)


@pytest.mark.parametrize(("hit", "nodes", "controllers", "impact"), [
    (["n1"], N3, N3, Impact()),
    (["n1", "n3"], N3, N3, Impact(quorum_majority=True)),
    (N3, N3, N3, Impact(whole_cluster=True, quorum_majority=True)),
    (["n4", "n5"], N5, N3, Impact()),
    (["n1", "n2"], N5, N3, Impact(quorum_majority=True)),
    (["n1"], N3, ["n1"], Impact(quorum_majority=True)),  # the only controller
    (N3, N3, [], Impact(whole_cluster=True)),  # ZooKeeper mode: no KRaft quorum
    ([], N3, N3, Impact()),
], ids=["one", "two-of-three", "all", "brokers-only", "two-controllers", "sole-controller",
        "zookeeper", "nothing"])
def test_impact_of_nodes(hit: list[str], nodes: list[str], controllers: list[str],
                         impact: Impact) -> None:
    assert of_nodes(hit, nodes, controllers) == impact


JEPSEN_RING_3 = {"n1": frozenset({"n3"}), "n2": frozenset({"n1"}), "n3": frozenset({"n2"})}


@pytest.mark.parametrize(("grudge", "nodes", "controllers", "impact"), [
    ({}, N3, N3, Impact()),
    (comps(["n1"], ["n2", "n3"]), N3, N3, Impact()),
    # Jepsen's leaning ring on 3 nodes: one direction of every link, so TCP has none
    (JEPSEN_RING_3, N3, N3, Impact(whole_cluster=True, quorum_majority=True)),
    (comps(["n1"], ["n2"], ["n3"]), N3, N3, Impact(whole_cluster=True, quorum_majority=True)),
    ({"n1": frozenset({"n3"}), "n3": frozenset({"n1"})}, N3, N3, Impact()),  # a bridge
    (comps(["n1"], ["n2"], ["n3", "n4", "n5"]), N5, N3, Impact(quorum_majority=True)),
    (comps(["n1", "n2"], ["n3", "n4", "n5"]), N5, N3, Impact()),  # the quorum is on 2 of 3
    (comps(["n1"], ["n2", "n3", "n4"]), ["n1", "n2", "n3", "n4"], ["n1", "n2"],
     Impact(quorum_majority=True)),
    (comps(["n1"], ["n2", "n3"]), N3, ["n1"], Impact()),  # one controller is its own quorum
], ids=["none", "one", "jepsen-ring-3", "each-alone", "bridge", "two-controllers-alone",
        "controllers-together", "two-controllers-split", "sole-controller"])
def test_impact_of_a_partition_is_judged_over_tcp(
    grudge: g.Grudge, nodes: list[str], controllers: list[str], impact: Impact,
) -> None:
    assert of_grudge(grudge, nodes, controllers) == impact


sizes = st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, min(n, 5))))


@given(sizes, st.integers(0, 2**32), st.data())
def test_spare_never_leaves_a_harmful_hit(size: tuple[int, int], seed: int,
                                          data: st.DataObject) -> None:
    n, c = size
    nodes = [f"n{i}" for i in range(1, n + 1)]
    controllers = nodes[:c]
    hit = data.draw(st.lists(st.sampled_from(nodes), unique=True))
    kept, record = spare(hit, nodes, controllers, random.Random(seed))
    assert set(kept) <= set(hit) and kept == [x for x in hit if x in kept], "a subset, in order"
    assert not of_nodes(kept, nodes, controllers).harmful
    if of_nodes(hit, nodes, controllers).harmful:
        assert record["narrowed-from"] == hit and record["narrowed-because"]
        assert kept == spare(hit, nodes, controllers, random.Random(seed))[0], "seeded"
    else:
        assert (kept, record) == (hit, {})


def test_spare_drops_only_what_it_must() -> None:
    kept, record = spare(N5, N5, N3, random.Random(1))
    assert len(kept) == 3 and {"n4", "n5"} <= set(kept), "one controller, both brokers"
    assert record["narrowed-because"] == (
        "would hit every node and would take a majority of the 3 KRaft controllers "
        "(n1, n2, n3) out of the quorum")


NO_FACTS = Facts(partitions=dict, controller=lambda: "n1")


@given(st.integers(3, 9), st.integers(1, 5), st.integers(0, 2**32))
def test_minority_once_spared_never_takes_a_quorum_majority(n: int, c: int, seed: int) -> None:
    """On 5 nodes a minority is 2 nodes, which may be 2 of the 3 controllers."""
    nodes = [f"n{i}" for i in range(1, n + 1)]
    controllers = nodes[:min(c, n)]
    rng = random.Random(seed)
    hit = resolve("minority", nodes, rng, NO_FACTS)
    kept, _ = spare(hit, nodes, controllers, rng)
    assert not of_nodes(kept, nodes, controllers).quorum_majority
    assert not of_nodes(kept, nodes, controllers).whole_cluster


def test_a_minority_of_five_can_be_a_quorum_majority_before_sparing() -> None:
    """Why ``minority`` is narrowed at all (the test above would pass vacuously otherwise)."""
    harmful = [seed for seed in range(200)
               if of_nodes(resolve("minority", N5, random.Random(seed), NO_FACTS), N5,
                           N3).quorum_majority]
    assert harmful
