"""Faults on fake nodes hit what an operator means, and spare the cluster unless asked.

On 3 nodes with the workload's partition leaders spread over every node,
``leaders`` used to kill n1, n2 and n3 together; ``majorities-ring`` cut every
link. These tests pin what each now does, and what its completion records.
"""

from __future__ import annotations

import pytest
from fakes import fake_cluster, landed

from cluster.metadata import PartitionState
from nemesis.clock import ClockNemesis
from nemesis.impact import linked, of_grudge
from nemesis.nodes import Resolver
from nemesis.partition import PartitionNemesis
from nemesis.process import KillNemesis, PauseNemesis
from nemesis.targets import Facts

#: one partition led by each node of a 3-node cluster
SPREAD = {f"t0-{i}": PartitionState("t0", i, f"n{i + 1}", ("n1", "n2", "n3"),
                                    ("n1", "n2", "n3")) for i in range(3)}


def resolver(seed: int, parts: dict[str, PartitionState] = SPREAD) -> Resolver:
    return Resolver(seed, lambda _c: Facts(partitions=lambda: parts, controller=lambda: "n1"))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("nemesis", [KillNemesis, PauseNemesis], ids=["kill", "pause"])
def test_leaders_on_three_nodes_hits_exactly_one_node(
    nemesis: type[KillNemesis | PauseNemesis], seed: int,
) -> None:
    cluster, fakes = fake_cluster(3)
    f = nemesis.start_f
    out = nemesis(resolver(seed)).invoke(cluster, {"f": f, "value": "leaders"})
    done = out["value"]["killed" if f == "kill" else "paused"]
    assert len(done) == 1, out
    assert "narrowed-from" not in out["value"], "one leader needs no narrowing"
    assert sum(bool(fk.signals) for fk in fakes.values()) == 1


def test_leaders_draws_each_node_over_seeds() -> None:
    hit = set()
    for seed in range(30):
        cluster, _ = fake_cluster(3)
        out = KillNemesis(resolver(seed)).invoke(cluster, {"f": "kill", "value": "leaders"})
        hit |= set(out["value"]["killed"])
    assert hit == {"n1", "n2", "n3"}


def test_leaders_of_several_partitions_is_narrowed_to_spare_the_quorum() -> None:
    cluster, fakes = fake_cluster(3)
    out = KillNemesis(resolver(0)).invoke(cluster, {"f": "kill", "value": "leaders:3"})
    value = out["value"]
    assert value["narrowed-from"] == ["n1", "n2", "n3"]
    assert value["narrowed-because"] == (
        "would hit every node and would take a majority of the 3 KRaft controllers "
        "(n1, n2, n3) out of the quorum")
    assert len(value["killed"]) == 1 and value["target"] == "leaders:3"
    assert "whole-cluster" not in value and "quorum-majority" not in value
    assert sum(fk.stat == "Z" for fk in fakes.values()) == 1


@pytest.mark.parametrize("seed", range(30))
def test_minority_of_five_never_takes_a_quorum_majority(seed: int) -> None:
    cluster, fakes = fake_cluster(5)  # controllers n1, n2, n3
    out = PauseNemesis(resolver(seed)).invoke(cluster, {"f": "pause", "value": "minority"})
    paused = set(out["value"]["paused"])
    assert 1 <= len(paused) <= 2
    assert len(paused & {"n1", "n2", "n3"}) <= 1, out
    assert "quorum-majority" not in out["value"]
    assert {n for n, fk in fakes.items() if fk.stat == "T"} == paused


@pytest.mark.parametrize("target", ["all", ["n1", "n2", "n3"]], ids=["all", "names"])
def test_an_explicit_whole_cluster_kill_happens_and_says_so(target: str | list[str]) -> None:
    cluster, fakes = fake_cluster(3)
    out = KillNemesis(resolver(0)).invoke(cluster, {"f": "kill", "value": target})
    assert landed(out) == {"value": {"killed": {"n1": 100, "n2": 100, "n3": 100}, "target": target,
                             "whole-cluster": True, "quorum-majority": True}}
    assert all(fk.stat == "Z" for fk in fakes.values())
    started = KillNemesis(resolver(0)).invoke(cluster, {"f": "start", "value": "all"})
    assert "whole-cluster" not in started["value"], "a heal is not a fault"


def test_an_explicit_majority_pause_takes_the_quorum_and_says_so() -> None:
    cluster, _ = fake_cluster(3)
    out = PauseNemesis(resolver(0)).invoke(cluster, {"f": "pause", "value": "majority"})
    assert len(out["value"]["paused"]) == 2
    assert out["value"]["quorum-majority"] is True and "whole-cluster" not in out["value"]


def test_the_sole_controller_is_spared_unless_named() -> None:
    cluster, fakes = fake_cluster(3, controllers=1)
    out = KillNemesis(resolver(0)).invoke(cluster, {"f": "kill", "value": "controller"})
    assert out["value"]["killed"] == {} and out["value"]["narrowed-from"] == ["n1"]
    assert not fakes["n1"].signals
    out = KillNemesis(resolver(0)).invoke(cluster, {"f": "kill", "value": "n1"})
    assert out["value"]["killed"] == {"n1": 100} and out["value"]["quorum-majority"] is True


def test_clock_faults_are_not_narrowed_but_record_what_they_hit() -> None:
    cluster, fakes = fake_cluster(3, faketime=True)
    out = ClockNemesis(resolver(0)).invoke(
        cluster, {"f": "bump-clock", "value": {"target": "leaders:3", "delta-ms": 500}})
    assert out["value"]["offsets-ms"] == {"n1": 500, "n2": 500, "n3": 500}
    assert out["value"]["whole-cluster"] is True
    assert [fk.clock for fk in fakes.values()] == ["+0.500"] * 3


# --- partitions --------------------------------------------------------------------------


def partition(cluster_size: int, value: object, seed: int = 0,
              parts: dict[str, PartitionState] = SPREAD, controllers: int | None = None
              ) -> dict[str, object]:
    cluster, _ = fake_cluster(cluster_size, controllers=controllers)
    out = PartitionNemesis(resolver(seed, parts)).invoke(
        cluster, {"f": "start-partition", "value": value})
    assert isinstance(out, dict)
    return out


@pytest.mark.parametrize("seed", range(10))
def test_majorities_ring_on_three_nodes_becomes_a_bridge(seed: int) -> None:
    out = partition(3, "majorities-ring", seed)
    value = out["value"]
    assert "error" not in out and value["shape"] == "bridge"
    assert value["rewritten-from"] == "majorities-ring"
    assert "no ring of majorities on 3 nodes" in value["rewritten-because"]
    grudge = {n: frozenset(v) for n, v in value["grudge"].items()}
    assert len(grudge) == 2 and all(len(v) == 1 for v in grudge.values()), "one link cut"
    (a, b) = sorted(grudge)
    assert grudge == {a: {b}, b: {a}}
    assert not of_grudge(grudge, ["n1", "n2", "n3"], ["n1", "n2", "n3"]).harmful


def test_the_bridge_is_what_iptables_gets() -> None:
    cluster, fakes = fake_cluster(3)
    out = PartitionNemesis(resolver(2)).invoke(cluster, {"f": "start-partition",
                                                         "value": "majorities-ring"})
    for node, cut in out["value"]["grudge"].items():
        (peer,) = cut
        drops = [c for c in fakes[node].iptables() if "-j DROP" in c]
        assert drops == [f"iptables -w 10 -A INSYNC -s {cluster.nodes[peer].address} -j DROP"]


def test_majorities_ring_on_five_nodes_is_kept() -> None:
    value = partition(5, "majorities-ring")["value"]
    assert value["shape"] == "majorities-ring" and "rewritten-from" not in value
    grudge = value["grudge"]
    assert all(len(v) == 2 for v in grudge.values()) and len(grudge) == 5


@pytest.mark.parametrize("seed", range(10))
def test_leaders_shape_isolates_the_one_drawn_leader(seed: int) -> None:
    value = partition(3, "leaders", seed)["value"]
    (alone,), rest = value["isolated"]
    assert alone not in rest and len(rest) == 2
    assert value["shape"] == "leaders" and "rewritten-from" not in value


def test_leaders_of_every_partition_each_alone_is_rewritten_to_isolate_one_leader() -> None:
    out = partition(3, "leaders:3")
    value = out["value"]
    assert "error" not in out
    (alone,), rest = value["isolated"]
    assert value["shape"] == f"isolate {alone}" and sorted([alone, *rest]) == ["n1", "n2", "n3"]
    assert value["rewritten-from"] == "leaders:3"
    assert value["rewritten-because"].startswith(
        "leaders:3 would cut every node off from every other")
    assert "whole-cluster" not in value


def test_leaders_sharing_a_node_need_no_rewrite() -> None:
    shared = {k: PartitionState(p.topic, p.partition, "n2", p.replicas, p.isr)
              for k, p in SPREAD.items()}
    value = landed(partition(3, "leaders:3", parts=shared))["value"]
    assert value == {"shape": "leaders:3", "isolated": [["n2"], ["n1", "n3"]]}


def test_a_shape_that_would_strand_the_quorum_is_rewritten_on_five_nodes() -> None:
    leaders = {f"t0-{i}": PartitionState("t0", i, f"n{i + 1}", ("n1", "n2", "n3"), ())
               for i in range(2)}  # n1 and n2: two of the three controllers
    value = partition(5, "primaries:2", parts=leaders)["value"]
    assert value["rewritten-from"] == "primaries:2"
    assert "out of the quorum" not in value["rewritten-because"]
    assert "off the quorum" in value["rewritten-because"]
    (alone,), rest = value["isolated"]
    assert alone in ("n1", "n2") and len(rest) == 4


@pytest.mark.parametrize("value", [
    {"grudge": {"n1": ["n2", "n3"], "n2": ["n1", "n3"], "n3": ["n1", "n2"]}},
    {"components": [["n1"], ["n2"], ["n3"]]},
    {"isolate": ["n1", "n2"]},  # n1, n2 together still form the quorum: harmless
], ids=["grudge", "components", "isolate-names"])
def test_explicit_partitions_are_applied_as_given_and_recorded(value: dict[str, object]) -> None:
    out = partition(3, value)
    assert "error" not in out and "rewritten-from" not in out["value"]
    total = "isolate" not in value
    assert out["value"].get("whole-cluster", False) is total
    assert out["value"].get("quorum-majority", False) is total


def test_a_partition_two_nodes_cannot_survive_is_refused_with_nothing_cut() -> None:
    cluster, fakes = fake_cluster(2)
    nem = PartitionNemesis(resolver(0))
    out = nem.invoke(cluster, {"f": "start-partition", "value": "one"})
    assert "would cut every node off from every other" in out["error"]
    assert not any("-j DROP" in c for fk in fakes.values() for c in fk.iptables())


def test_isolating_controllers_of_a_two_controller_quorum_is_refused() -> None:
    out = partition(4, "controller", controllers=2)
    assert "nothing was cut" in out["error"]


def test_linked_means_both_directions() -> None:
    assert not linked({"n1": frozenset({"n2"})}, "n1", "n2")
    assert not linked({"n1": frozenset({"n2"})}, "n2", "n1")
    assert linked({"n1": frozenset({"n3"})}, "n1", "n2")
