"""The ledger of faults in force, and the union impact it is judged by (pure, no nodes)."""

from __future__ import annotations

import random
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis import grudge as g
from nemesis.impact import Impact, of_nodes, of_state, spare_with
from nemesis.in_force import InForce, Ledger, narrow_down

N3 = ["n1", "n2", "n3"]
N5 = ["n1", "n2", "n3", "n4", "n5"]
ALONE_N1 = g.complete_grudge([["n1"], ["n2", "n3"]])
BRIDGE = {"n1": frozenset({"n2"}), "n2": frozenset({"n1"})}  # n3 links the halves


@pytest.mark.parametrize(("down", "grudge", "nodes", "impact"), [
    ({"n1"}, ALONE_N1, N3, Impact()),  # the isolated node is the dead one
    ({"n2"}, ALONE_N1, N3, Impact(quorum_majority=True)),  # n1 cut off, n2 dead
    ({"n3"}, BRIDGE, N3, Impact(quorum_majority=True)),  # the bridge is gone
    ({"n1"}, BRIDGE, N3, Impact()),
    ({"n2", "n3"}, ALONE_N1, N3, Impact(whole_cluster=True, quorum_majority=True)),
    ({"n4"}, g.complete_grudge([["n1"], ["n2", "n3", "n4", "n5"]]), N5, Impact()),
    ({"n2"}, g.complete_grudge([["n1"], ["n2", "n3", "n4", "n5"]]), N5,
     Impact(quorum_majority=True)),
], ids=["dead-and-isolated", "isolated-and-dead", "bridge-killed", "bridge-end-killed",
        "all-out", "five-broker", "five-controllers"])
def test_the_union_of_nodes_down_and_a_cut(down: set[str], grudge: g.Grudge, nodes: list[str],
                                           impact: Impact) -> None:
    assert of_state(down, grudge, nodes, N3) == impact


def test_half_of_an_even_quorum_is_a_quorum_majority() -> None:
    """Two of four voters down leave two: no majority of four, so no quorum."""
    four = ["n1", "n2", "n3", "n4"]
    assert of_nodes(["n1", "n2"], four, four).quorum_majority
    assert not of_nodes(["n1"], four, four).quorum_majority


@given(st.integers(2, 7), st.integers(0, 2**32), st.data())
def test_spare_with_adds_no_outcome_and_keeps_what_it_can(n: int, seed: int,
                                                          data: st.DataObject) -> None:
    nodes = [f"n{i}" for i in range(1, n + 1)]
    controllers = nodes[:min(3, n)]
    down = set(data.draw(st.lists(st.sampled_from(nodes), unique=True, max_size=n - 1)))
    grudge = g.normalize({a: data.draw(st.lists(st.sampled_from(nodes), unique=True))
                          for a in data.draw(st.lists(st.sampled_from(nodes), unique=True))})
    hit = data.draw(st.lists(st.sampled_from(nodes), unique=True))
    kept = spare_with(hit, down=down, grudge=grudge, nodes=nodes, controllers=controllers,
                      rng=random.Random(seed))
    assert kept == [x for x in hit if x in kept], "a subset, in order"
    before = of_state(down, grudge, nodes, controllers)
    after = of_state(down | set(kept), grudge, nodes, controllers)
    assert (after.whole_cluster <= before.whole_cluster
            and after.quorum_majority <= before.quorum_majority)
    for extra in set(hit) - set(kept):  # maximal: nothing dropped could have been kept
        more = of_state(down | set(kept) | {extra}, grudge, nodes, controllers)
        assert (more.whole_cluster > before.whole_cluster
                or more.quorum_majority > before.quorum_majority)


def test_narrowing_with_nothing_in_force_is_what_it_always_was() -> None:
    """Same draws as ``impact.spare``: a seed replays the same choices as before."""
    kept, record = narrow_down(N5, InForce(), N5, N3, random.Random(1), explicit=False,
                               how="killed")
    assert len(kept) == 3 and {"n4", "n5"} <= set(kept)
    assert record["narrowed-because"] == (
        "would hit every node and would take a majority of the 3 KRaft controllers "
        "(n1, n2, n3) out of the quorum")


def test_what_is_in_force_reads_as_a_reason() -> None:
    state = InForce(killed=frozenset({"n3", "n1"}), paused=frozenset({"n1", "n2"}))
    assert state.describe(N5) == "n1, n3 killed and n2 paused"
    assert InForce(grudge=ALONE_N1).describe(N3) == "the partition in force (cut n1-n2, n1-n3)"
    assert InForce().describe(N3) == "nothing in force"


@pytest.mark.parametrize(("state", "nodes", "controllers", "kept"), [
    (InForce(killed=frozenset({"n1"}), paused=frozenset({"n2"})), N3, N3,
     {"n1": "killed", "n2": "paused"}),
    (InForce(grudge=ALONE_N1), N3, N3, {"n1": "cut off"}),
    (InForce(grudge=BRIDGE), N3, N3, {}),  # each end reaches the quorum through n3
    (InForce(grudge=g.complete_grudge([["n4"], ["n1", "n2", "n3", "n5"]])), N5, N3,
     {"n4": "cut off"}),  # a broker cut from every controller cannot register
    (InForce(grudge=ALONE_N1), N3, [], {"n1": "cut off"}),  # ZooKeeper mode
], ids=["down", "isolated", "bridge", "broker", "zookeeper"])
def test_kept_down(state: InForce, nodes: list[str], controllers: list[str],
                   kept: dict[str, str]) -> None:
    assert state.kept_down(nodes, controllers) == kept


def test_a_claim_that_was_not_carried_out_is_given_back() -> None:
    state = InForce(paused=frozenset({"n2"}))
    claimed = state.claim("killed", {"n1", "n2"})
    assert claimed.down == {"n1", "n2"}
    settled = claimed.settle("killed", {"n1", "n2"}, done={"n2"})
    assert settled == InForce(killed=frozenset({"n2"})), "n1 failed; n2 went paused -> killed"


def test_the_ledger_decides_atomically() -> None:
    ledger = Ledger()
    barrier = threading.Barrier(8)
    won: list[str] = []

    def take(node: str) -> None:
        barrier.wait()

        def decide(state: InForce) -> tuple[bool, InForce]:
            if state.down:
                return False, state
            return True, state.claim("paused", {node})

        if ledger.decide(decide):
            won.append(node)

    threads = [threading.Thread(target=take, args=(f"n{i}",)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(won) == 1 and ledger.state.paused == set(won)
