"""Faults that overlap never add up to a dead cluster (``nemesis.in_force``), on fake nodes.

Seen on a real 3-node run with ``--nemesis partition,kill,pause,clock``: a
partition isolated n1, ``kill leaders`` killed n1, ``pause leaders`` paused
n2 (two of three controllers gone), and the ``await-recovery`` after the
partition healed waited 60 s for the killed n1. Each op was narrowed on its
own; these tests replay such sequences through the composed nemesis and read
what the fake nodes were really left in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Sequence
from typing import Any

from fakes import FakeNode, FakeTime, down_nodes, fake_cluster, grudge_in_force, landed
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster import Cluster
from cluster.metadata import PartitionState
from harness.base.faults import in_heal_order, in_registry_order
from nemesis import NemesisOptions
from nemesis import grudge as g
from nemesis.compose import ComposedNemesis
from nemesis.impact import of_nodes, of_state
from nemesis.in_force import InForce
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.process import PauseNemesis
from nemesis.recovery import AWAIT, RecoveryNemesis, missing
from nemesis.targets import DEFAULT_TARGETS, Facts

N3 = ["n1", "n2", "n3"]


class FakeKafka:
    """Metadata as the fake nodes' cluster would report it.

    Every partition is led by the first node of ``order`` that is not killed
    (a paused or cut-off leader keeps its leadership in stale metadata), unless
    ``led_by`` fixes one leader per partition; the registered brokers are the
    nodes neither killed nor paused; ``controller`` is the active controller.
    """

    def __init__(self, fakes: dict[str, FakeNode], *, led_by: Sequence[str] = (),
                 controller: str = "n1") -> None:
        self.fakes = fakes
        self.order = list(fakes)
        self.led_by = list(led_by)
        self.controller = controller

    def facts(self, _cluster: Any = None) -> Facts:
        return Facts(partitions=self.partitions, controller=lambda: self.controller,
                     brokers=self.brokers)

    def partitions(self) -> dict[str, PartitionState]:
        killed, _ = down_nodes(self.fakes)
        live = [n for n in self.order if n not in killed]
        leaders = self.led_by or [live[0] if live else None] * 3
        return {f"t0-{i}": PartitionState("t0", i, leader, tuple(self.order), tuple(live))
                for i, leader in enumerate(leaders)}

    def brokers(self) -> list[str]:
        killed, paused = down_nodes(self.fakes)
        return [n for n in self.fakes if n not in killed | paused]


def composed(kinds: Collection[str], resolver: Resolver, timeout_s: float = 60.0
             ) -> tuple[ComposedNemesis, FakeTime]:
    """What ``package.nemesis_for`` builds, with fake metadata and a fake clock."""
    opts = NemesisOptions(faults=frozenset(kinds))
    members = [load(k).make_nemesis(resolver, opts)
               for k in in_heal_order(in_registry_order(kinds))]
    t = FakeTime()
    return ComposedNemesis([*members, RecoveryNemesis(resolver, timeout_s, clock=t.clock,
                                                      sleep=t.sleep)]), t


def truth(cluster: Cluster, fakes: dict[str, FakeNode]) -> tuple[set[str], dict[str, Any]]:
    """The nodes really down and the cut really in force on the fake nodes."""
    killed, paused = down_nodes(fakes)
    return killed | paused, grudge_in_force(cluster, fakes)


def assert_cluster_works(cluster: Cluster, fakes: dict[str, FakeNode]) -> None:
    down, grudge = truth(cluster, fakes)
    impact = of_state(down, grudge, list(cluster.nodes), cluster.spec.controller_nodes)
    assert not impact.harmful, (down, grudge, impact)


def test_the_reported_sequence_never_takes_two_of_three_controllers() -> None:
    cluster, fakes = fake_cluster(3, faketime=True)
    kafka = FakeKafka(fakes)
    resolver = Resolver(0, kafka.facts)
    nem, t = composed({"partition", "kill", "pause", "clock"}, resolver)
    nem.setup(cluster)

    part = nem.invoke(cluster, {"f": "start-partition", "value": "one"})
    (alone,), rest = part["value"]["isolated"]
    kafka.order = [alone, *rest]  # the isolated node still leads in the metadata
    kafka.controller = rest[0]
    assert_cluster_works(cluster, fakes)

    kill = nem.invoke(cluster, {"f": "kill", "value": "leaders"})
    assert list(kill["value"]["killed"]) == [alone], "killing the isolated node takes nothing more"
    assert "narrowed-from" not in kill["value"]
    assert_cluster_works(cluster, fakes)

    pause = nem.invoke(cluster, {"f": "pause", "value": "leaders"})
    value = pause["value"]
    assert value["paused"] == {} and value["withheld"] is True, pause
    assert value["narrowed-from"] == [rest[0]]
    assert value["because"].startswith(f"with {alone} killed and the partition in force (cut ")
    assert value["because"].endswith(
        f"pausing {rest[0]} would take a majority of the 3 KRaft controllers (n1, n2, n3) "
        "out of the quorum")
    assert "error" not in pause, "a withheld fault is a decision, not a failure"
    assert not any(fk.stat == "T" for fk in fakes.values())
    assert_cluster_works(cluster, fakes)

    clock = nem.invoke(cluster, {"f": "bump-clock",
                                 "value": {"target": "controller", "delta-ms": -1000}})
    assert clock["value"]["offsets-ms"] == {rest[0]: -1000}, "clock faults are not narrowed"

    assert nem.invoke(cluster, {"f": "stop-partition", "value": None})["value"]["healed"] == N3
    assert resolver.in_force.state == InForce(killed=frozenset({alone}))
    wait = nem.invoke(cluster, {"f": AWAIT, "value": None})
    assert wait == {"value": {"recovered": True, "seconds": 0.0, "polls": 1, "waited-for": [],
                              "not-waited-for": {f"broker {alone}": "killed"}}}
    assert t.slept == []
    # what the wait used to ask for, and could not get while the kill was in force
    assert missing(kafka.facts(), N3) == [f"broker {alone}"]


def test_a_pause_after_a_kill_is_narrowed_to_the_nodes_it_can_spare() -> None:
    cluster, fakes = fake_cluster(5)  # controllers n1, n2, n3
    kafka = FakeKafka(fakes, led_by=["n2", "n4"], controller="n1")
    nem, _ = composed({"kill", "pause"}, Resolver(0, kafka.facts))
    assert list(nem.invoke(cluster, {"f": "kill", "value": "controller"})["value"]["killed"]) \
        == ["n1"]
    value = nem.invoke(cluster, {"f": "pause", "value": "leaders:2"})["value"]
    assert list(value["paused"]) == ["n4"] and "withheld" not in value
    assert value["narrowed-from"] == ["n2", "n4"]
    assert value["narrowed-because"] == (
        "with n1 killed, pausing n2, n4 would take a majority of the 3 KRaft controllers "
        "(n1, n2, n3) out of the quorum")
    assert_cluster_works(cluster, fakes)


def test_explicit_targets_are_applied_and_judged_with_what_is_in_force() -> None:
    cluster, fakes = fake_cluster(3)
    kafka = FakeKafka(fakes, controller="n1")
    nem, _ = composed({"kill", "pause"}, Resolver(0, kafka.facts))
    nem.invoke(cluster, {"f": "kill", "value": "controller"})
    assert not of_nodes(["n2"], N3, N3).harmful, "n2 alone would spare the quorum"
    out = nem.invoke(cluster, {"f": "pause", "value": ["n2"]})
    assert landed(out)["value"] == {"paused": {"n2": 100}, "target": ["n2"],
                                    "quorum-majority": True}
    out = nem.invoke(cluster, {"f": "pause", "value": "all"})
    assert out["value"]["paused"] == {"n3": 100}
    assert out["value"]["skipped"] == {"n1": "stopped", "n2": "paused"}
    assert out["value"]["whole-cluster"] is True and out["value"]["quorum-majority"] is True
    assert down_nodes(fakes) == ({"n1"}, {"n2", "n3"})


def test_a_partition_that_would_strand_the_quorum_with_a_dead_node_is_withheld() -> None:
    cluster, fakes = fake_cluster(3)
    kafka = FakeKafka(fakes, controller="n1")
    resolver = Resolver(0, kafka.facts)
    nem, _ = composed({"partition", "kill"}, resolver)
    nem.invoke(cluster, {"f": "kill", "value": "controller"})
    kafka.controller = "n2"
    out = nem.invoke(cluster, {"f": "start-partition", "value": "controller"})
    assert out == {"value": {"shape": "controller", "withheld": True, "because": (
        "with n1 killed, controller would cut a majority of the 3 KRaft controllers "
        "(n1, n2, n3) off the quorum, and so would isolating any one node it aims at")}}
    assert not any("-j DROP" in c for fk in fakes.values() for c in fk.iptables())
    assert resolver.in_force.state.grudge == {}
    # isolating the dead node takes nothing more: applied
    kafka.controller = "n1"
    out = nem.invoke(cluster, {"f": "start-partition", "value": {"isolate": "controller"}})
    assert landed(out)["value"] == {"shape": "isolate controller",
                                    "isolated": [["n1"], ["n2", "n3"]]}
    assert_cluster_works(cluster, fakes)


def test_a_kill_that_would_split_a_bridged_cluster_spares_the_bridge() -> None:
    cluster, fakes = fake_cluster(3)
    kafka = FakeKafka(fakes)
    resolver = Resolver(4, kafka.facts)
    nem, _ = composed({"partition", "kill"}, resolver)
    bridge = nem.invoke(cluster, {"f": "start-partition", "value": "bridge"})["value"]
    (a, b) = sorted(bridge["grudge"])
    (middle,) = set(N3) - {a, b}
    kafka.controller = middle  # the one node still linked to both others
    out = nem.invoke(cluster, {"f": "kill", "value": "controller"})["value"]
    assert out["killed"] == {} and out["withheld"] is True
    assert f"with the partition in force (cut {a}-{b}), killing {middle} would" \
        in out["because"]
    kafka.controller = a  # the other two stay linked through each other
    assert list(nem.invoke(cluster, {"f": "kill", "value": "controller"})["value"]["killed"]) \
        == [a]
    assert_cluster_works(cluster, fakes)


def test_heals_and_teardown_give_back_what_they_heal() -> None:
    cluster, fakes = fake_cluster(3)
    kafka = FakeKafka(fakes, controller="n1")
    resolver = Resolver(0, kafka.facts)
    nem, _ = composed({"partition", "kill", "pause"}, resolver)
    nem.invoke(cluster, {"f": "kill", "value": "controller"})
    nem.invoke(cluster, {"f": "start-partition", "value": {"isolate": "n3"}})
    assert resolver.in_force.state.down == {"n1"}
    kafka.controller = "n2"
    assert nem.invoke(cluster, {"f": "pause", "value": "controller"})["value"]["withheld"]
    nem.invoke(cluster, {"f": "start", "value": "all"})
    assert resolver.in_force.state.down == frozenset()
    nem.invoke(cluster, {"f": "stop-partition", "value": None})
    assert resolver.in_force.state == InForce()
    assert nem.invoke(cluster, {"f": "pause", "value": "controller"})["value"]["paused"] == {
        "n2": 100}, "with the kill healed, the same pause is harmless"
    nem.invoke(cluster, {"f": "resume", "value": "all"})
    assert resolver.in_force.state == InForce()
    nem.invoke(cluster, {"f": "kill", "value": "controller"})
    nem.invoke(cluster, {"f": "start-partition", "value": "one"})
    nem.teardown(cluster)
    assert resolver.in_force.state == InForce()
    assert truth(cluster, fakes) == (set(), {})


def test_a_heal_that_fails_on_a_node_leaves_it_counted_down() -> None:
    cluster, fakes = fake_cluster(3)
    resolver = Resolver(0, FakeKafka(fakes, controller="n1").facts)
    nem, _ = composed({"kill"}, resolver)
    nem.invoke(cluster, {"f": "kill", "value": "controller"})
    fakes["n1"].fail_on = "setsid"
    out = nem.invoke(cluster, {"f": "start", "value": "all"})
    assert "n1" in out["error"]
    assert resolver.in_force.state.killed == {"n1"}


def test_concurrent_faults_cannot_spend_the_same_margin() -> None:
    """Three threads each pause "their" controller at once: only one may succeed."""
    cluster, fakes = fake_cluster(3)
    for fk in fakes.values():  # SIGSTOP takes a while: a window for a racing decision
        handle = fk.handle

        def stopping(argv: tuple[str, ...], stdin: str | None, handle: Any = handle
                     ) -> tuple[int, str, str]:
            if argv[:2] == ("kill", "-STOP"):
                time.sleep(0.2)
            return handle(argv, stdin)  # type: ignore[no-any-return]

        cluster.nodes[fk.name].remote.handler = stopping  # type: ignore[attr-defined]
    mine = {f"pauser-{n}": n for n in N3}
    resolver = Resolver(0, lambda _c: Facts(
        partitions=dict, controller=lambda: mine[threading.current_thread().name]))
    nem = PauseNemesis(resolver)
    start = threading.Barrier(3)
    outs: dict[str, dict[str, Any]] = {}

    def pause(node: str) -> None:
        start.wait()
        outs[node] = nem.invoke(cluster, {"f": "pause", "value": "controller"})

    threads = [threading.Thread(target=pause, args=(n,), name=f"pauser-{n}") for n in N3]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(bool(o["value"]["paused"]) for o in outs.values()) == 1, outs
    assert sum(o["value"].get("withheld", False) for o in outs.values()) == 2
    assert len(down_nodes(fakes)[1]) == 1


# --- any sequence of faults that are not explicit -------------------------------------------

TARGETS = (*DEFAULT_TARGETS, "minority", "leaders:2")
OPS = st.one_of(
    st.tuples(st.sampled_from(["kill", "pause"]), st.sampled_from(TARGETS)),
    st.tuples(st.just("start-partition"),
              st.sampled_from([*g.DEFAULT_SHAPES, "bridge", "leaders:2", "primaries:3"])),
    st.tuples(st.just("bump-clock"), st.sampled_from(TARGETS)),
    st.tuples(st.sampled_from(["start", "resume"]), st.sampled_from(["all", "one"])),
    st.tuples(st.sampled_from(["stop-partition", "reset-clock"]), st.none()),
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([3, 5]), st.integers(0, 2**16), st.lists(OPS, min_size=1, max_size=12))
def test_faults_in_force_never_take_a_controller_majority(
    n: int, seed: int, ops: list[tuple[str, Any]],
) -> None:
    cluster, fakes = fake_cluster(n, faketime=True)
    nodes = list(cluster.nodes)
    spread = [nodes[i % n] for i in range(seed, seed + 3)]  # leaders drawn over the nodes
    kafka = FakeKafka(fakes, led_by=spread, controller=nodes[seed % 3])
    resolver = Resolver(seed, kafka.facts)
    nem, _ = composed({"partition", "kill", "pause", "clock"}, resolver)
    for i, (f, target) in enumerate(ops):
        kafka.controller = nodes[(seed + i) % 3]  # the active controller moves
        value = {"target": target, "delta-ms": 500} if f == "bump-clock" else target
        out = nem.invoke(cluster, {"f": f, "value": value})
        down, grudge = truth(cluster, fakes)
        impact = of_state(down, grudge, nodes, cluster.spec.controller_nodes)
        assert not impact.quorum_majority and not impact.whole_cluster, (f, target, out)
        state = resolver.in_force.state
        assert (state.down, dict(state.grudge)) == (down, grudge), "the ledger is the truth"
