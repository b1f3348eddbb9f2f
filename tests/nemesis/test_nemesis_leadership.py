"""``elect-leader`` and ``reassign``: Kafka's own tools run on a node, recorded with what moved."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes import FakeNode, FakeTime, cluster_of
from hypothesis import given
from hypothesis import strategies as st

from cluster.admin_tools import election_outcome
from cluster.metadata import PartitionState
from cluster.spec import ClusterSpec
from cluster.versions import release
from harness.base.faults import fault_kind
from nemesis.kinds import load
from nemesis.leadership import ElectNemesis, ReassignNemesis, moved
from nemesis.nodes import Resolver
from nemesis.polling import Poller
from nemesis.targets import Facts, offsets_partition

ELECTED = ("Successfully completed leader election (PREFERRED) for partitions pre.t0-1\n"
           "Valid replica already elected for partitions pre.t0-0\n")


class Kafka:
    """The partitions' state, which the fake tools change as Kafka would."""

    def __init__(self, n: int = 3) -> None:
        nodes = tuple(f"n{i}" for i in range(1, n + 1))
        self.parts = {f"t0-{i}": PartitionState("t0", i, "n1", nodes[:3], nodes[:3])
                      for i in range(2)}
        self.offsets: dict[str, PartitionState] = {}
        self.runs: list[tuple[str, ...]] = []
        self.files: list[Any] = []
        self.exit = 0

    def facts(self, _cluster: object) -> Facts:
        return Facts(partitions=lambda: dict(self.parts), controller=lambda: "n1",
                     offsets=lambda: {p.partition: p for p in self.offsets.values()},
                     id_prefix="pre.")

    def handler(self, fake: FakeNode) -> Any:
        def handle(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            if "java" not in argv:
                return fake.handle(argv, stdin)
            self.runs.append(argv)
            self.files.append(json.loads(stdin or "null"))
            main = argv[argv.index("-cp") + 2]
            if main.endswith("LeaderElectionCommand"):
                p = self.parts["t0-1"]
                self.parts["t0-1"] = PartitionState("t0", 1, p.replicas[0], p.replicas, p.isr)
                return self.exit, ELECTED, ""
            for move in self.files[-1]["partitions"]:
                key = move["topic"].removeprefix("pre.") + f"-{move['partition']}"
                to = tuple(f"n{r}" for r in move["replicas"])
                table = self.parts if key in self.parts else self.offsets
                old = table[key]
                leader = old.leader if old.leader in to else to[0]
                table[key] = PartitionState(old.topic, old.partition, leader, to, to)
            return self.exit, "Successfully started partition reassignment for pre.t0-0\n", ""
        return handle


def cluster(kafka: Kafka, n: int = 3) -> Any:
    spec = ClusterSpec(name="fake", nodes=n, controllers=3)
    fakes = {name: FakeNode(name) for name in spec.node_names}
    return cluster_of(spec, {n: kafka.handler(f) for n, f in fakes.items()}), fakes


def test_a_preferred_election_runs_the_tool_on_a_node_and_records_what_moved() -> None:
    kafka = Kafka()
    kafka.parts["t0-1"] = PartitionState("t0", 1, "n3", ("n2", "n3", "n1"), ("n1", "n2", "n3"))
    c, _ = cluster(kafka)
    out = ElectNemesis(Resolver(1, kafka.facts), "pre.").invoke(  # type: ignore[arg-type]
        c, {"f": "elect-leader", "value": {"type": "preferred"}})
    assert "error" not in out
    value = out["value"]
    assert value["keys"] == "all" and value["partitions"] == 2 and value["ran-on"] == "n1"
    assert value["elected"] == ["t0-1"] and value["not-needed"] == ["t0-0"]
    assert value["leaders-changed"] == {"t0-1": ["n3", "n2"]}
    argv = kafka.runs[0]
    assert argv[argv.index("-cp") + 2] == "org.apache.kafka.tools.LeaderElectionCommand"
    assert argv[argv.index("--election-type") + 1] == "preferred"
    assert argv[argv.index("--admin.config") + 1] == "/opt/kafka/config/tools-ops-admin.properties"
    # the partitions go as the topic the cluster knows, in a file the same command writes
    assert kafka.files[0] == {"partitions": [{"topic": "pre.t0", "partition": 0},
                                             {"topic": "pre.t0", "partition": 1}]}
    assert argv[argv.index("--path-to-json-file") + 1] == argv[4]


def test_an_unclean_election_of_one_key_and_a_failed_tool_are_recorded() -> None:
    kafka = Kafka()
    kafka.exit = 1
    c, _ = cluster(kafka)
    out = ElectNemesis(Resolver(1, kafka.facts)).invoke(  # type: ignore[arg-type]
        c, {"f": "elect-leader", "value": {"type": "unclean", "key": "t0-0"}})
    assert out["value"]["keys"] == ["t0-0"] and out["value"]["type"] == "unclean"
    assert out["error"].startswith("kafka-leader-election exited 1")
    out = ElectNemesis(Resolver(1, kafka.facts)).invoke(  # type: ignore[arg-type]
        c, {"f": "elect-leader", "value": {"key": "t9-0"}})
    assert out["error"] == "no workload partition 't9-0'"


def test_a_preferred_election_refused_for_a_preferred_replica_out_of_the_isr_runs_again(
) -> None:
    """Kafka refuses while t0-1's preferred replica n2 is out of the ISR; the election
    waits for n2 to be back and runs again, as an operator's runbook does."""
    kafka = Kafka()
    kafka.parts["t0-1"] = PartitionState("t0", 1, "n1", ("n2", "n1", "n3"), ("n1", "n3"))
    kafka.exit = 1
    t = FakeTime()

    def sleep(s: float) -> None:  # n2 rejoins the ISR while the election waits
        t.sleep(s)
        p = kafka.parts["t0-1"]
        kafka.parts["t0-1"] = PartitionState("t0", 1, p.leader, p.replicas, ("n1", "n3", "n2"))
        kafka.exit = 0

    nem = ElectNemesis(Resolver(1, kafka.facts), "pre.",  # type: ignore[arg-type]
                       Poller(clock=t.clock, sleep=sleep))
    refusal = ("Error completing leader election (PREFERRED) for partition: pre.t0-1: "
               "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: no\n")
    handle = kafka.handler

    def refusing(fake: FakeNode) -> Any:
        inner = handle(fake)

        def run(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            code, out, err = inner(argv, stdin)
            return (code, refusal if code else out, err) if "java" in argv else (code, out, err)
        return run

    kafka.handler = refusing  # type: ignore[method-assign]
    c, _ = cluster(kafka)
    out = nem.invoke(c, {"f": "elect-leader", "value": {"type": "preferred", "key": "t0-1"}})
    assert "error" not in out, out
    assert out["value"]["attempts"] == 2 and out["value"]["waited-s"] >= 0
    assert len(kafka.runs) == 2
    # an unclean election, or a refusal for another reason, is not run again
    kafka.exit, kafka.runs = 1, []
    out = nem.invoke(c, {"f": "elect-leader", "value": {"type": "unclean", "key": "t0-1"}})
    assert "error" in out and "attempts" not in out["value"] and len(kafka.runs) == 1


def test_the_tool_classes_follow_the_version() -> None:
    assert release("3.6.2").leader_election_main == "kafka.admin.LeaderElectionCommand"
    assert release("3.7.2").reassign_main == (
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand")
    assert release("2.5.1").reassign_main is None  # its tool still needs --zookeeper
    assert release("2.6.3").reassign_main == "kafka.admin.ReassignPartitionsCommand"
    assert release("2.3.1").leader_election_main is None


def test_election_output_is_read_per_partition() -> None:
    out = election_outcome(ELECTED + "Error completing leader election (UNCLEAN) for "
                           "partition: t0-2: org.apache.kafka.common.errors."
                           "EligibleLeadersNotAvailableException: none\n")
    assert out == {"elected": ["pre.t0-1"], "not-needed": ["pre.t0-0"],
                   "failed": {"t0-2": "org.apache.kafka.common.errors."
                                      "EligibleLeadersNotAvailableException: none"}}


def reassigner(kafka: Kafka) -> ReassignNemesis:
    t = FakeTime()
    return ReassignNemesis(Resolver(1, kafka.facts), "pre.",  # type: ignore[arg-type]
                           Poller(clock=t.clock, sleep=t.sleep))


def test_a_reassignment_moves_the_replicas_and_the_heal_moves_them_back() -> None:
    kafka = Kafka(5)
    c, _ = cluster(kafka, 5)
    nem = reassigner(kafka)
    out = nem.invoke(c, {"f": "reassign", "value": {"key": "t0-0"}})
    assert "error" not in out
    value = out["value"]
    # the leader n1 is replaced by n4: the leader moves away by a planned operation
    assert value["moves"] == {"t0-0": {"from": ["n1", "n2", "n3"], "to": ["n2", "n3", "n4"]}}
    assert value["done"] is True and value["leaders-before"] == {"t0-0": "n1"}
    assert value["leaders-after"] == {"t0-0": "n2"}
    assert kafka.files[0]["partitions"] == [{"topic": "pre.t0", "partition": 0,
                                             "replicas": [2, 3, 4]}]
    back = nem.invoke(c, {"f": "reassign-back", "value": None})["value"]
    assert back["restored"] == {"t0-0": ["n1", "n2", "n3"]} and back["done"] is True
    assert kafka.parts["t0-0"].replicas == ("n1", "n2", "n3")
    again = nem.invoke(c, {"f": "reassign-back", "value": None})["value"]
    assert again["restored"] == {} and again["duration-s"] >= 0


def test_a_groups_coordinator_partition_is_moved_by_its_own_key() -> None:
    kafka = Kafka()
    nodes = ("n1", "n2", "n3")
    kafka.offsets = {f"__consumer_offsets-{i}": PartitionState("__consumer_offsets", i, "n1",
                                                               nodes, nodes)
                     for i in range(50)}
    c, _ = cluster(kafka)
    n = offsets_partition("pre.g0", 50)
    key = f"__consumer_offsets-{n}"
    nem = reassigner(kafka)
    out = nem.invoke(c, {"f": "reassign", "value": {"key": "group-coordinator:g0"}})
    assert "error" not in out
    # every broker holds a replica: the replicas rotate, the next one is preferred;
    # the internal topic goes by its own name, without the run's prefix
    assert out["value"]["moves"] == {key: {"from": ["n1", "n2", "n3"],
                                           "to": ["n2", "n3", "n1"]}}
    assert kafka.files[0]["partitions"] == [{"topic": "__consumer_offsets", "partition": n,
                                             "replicas": [2, 3, 1]}]
    assert nem.invoke(c, {"f": "reassign-back", "value": None})["value"]["restored"] == {
        key: ["n1", "n2", "n3"]}
    out = ElectNemesis(Resolver(1, kafka.facts), "pre.").invoke(  # type: ignore[arg-type]
        c, {"f": "elect-leader", "value": {"type": "preferred", "key": "group-coordinator:g0"}})
    assert out["value"]["keys"] == [key]
    assert kafka.files[-1] == {"partitions": [{"topic": "__consumer_offsets", "partition": n}]}
    kafka.offsets = {}  # no group has made the topic yet: nothing to elect, recorded
    out = ElectNemesis(Resolver(1, kafka.facts)).invoke(  # type: ignore[arg-type]
        c, {"f": "elect-leader", "value": {"key": "group-coordinator:g0"}})
    assert out["error"] == "no workload partition 'group-coordinator:g0'"


def test_a_reassignment_that_never_completes_is_bounded() -> None:
    kafka = Kafka()
    nem = reassigner(kafka)
    kafka.handler = lambda fake: fake.handle  # type: ignore[method-assign]
    c, _ = cluster(kafka)
    out = nem.invoke(c, {"f": "reassign", "value": {"key": "t0-1", "replicas": ["n3", "n1"],
                                                      "timeout-s": 5}})
    assert out["value"]["done"] is False and out["value"]["reassign-s"] == 5.0
    assert out["error"] == "the reassignment was not complete within 5 s"


@given(leader=st.sampled_from(["n1", "n2", "n3"]), n=st.integers(3, 6))
def test_the_default_plan_moves_the_preferred_leader_off_the_leader(leader: str, n: int) -> None:
    brokers = [f"n{i}" for i in range(1, n + 1)]
    p = PartitionState("t0", 0, leader, ("n1", "n2", "n3"), ("n1", "n2", "n3"))
    to = moved(p, brokers)
    assert len(to) == 3 and len(set(to)) == 3 and set(to) <= set(brokers)
    assert to[0] != leader  # the preferred leader is another broker
    assert (leader not in to) == (n > 3)


@pytest.mark.parametrize(("kind", "f", "value", "problem"), [
    ("elect-leader", "elect-leader", "dirty", "preferred or unclean"),
    ("elect-leader", "elect-leader", {"type": "unclean", "key": "t0"}, "key must name"),
    ("elect-leader", "elect-leader", {"keys": 1}, "takes type and key"),
    ("elect-leader", "elect-leader", {"key": "group-coordinator:"}, "key must name"),
    ("reassign", "reassign", {"replicas": ["n1", "n1"]}, "distinct node names"),
    ("reassign", "reassign", {"replicas": ["n1", "n7"]}, "not among the run's 3 nodes"),
    ("reassign", "reassign", {"timeout-s": 0}, "'timeout-s' must be"),
    ("reassign", "reassign", "t0-0", "a table"),
])
def test_bad_values_are_refused(kind: str, f: str, value: object, problem: str) -> None:
    assert problem in (load(fault_kind(kind)).validate(f, value, 3) or "")  # type: ignore[attr-defined]


def test_good_values_pass() -> None:
    elect, reassign = load(fault_kind("elect-leader")), load(fault_kind("reassign"))
    for value in ("preferred", "unclean", {"type": "unclean", "key": "t0-2"}, None,
                  {"key": "group-coordinator:g0"}):
        assert elect.validate("elect-leader", value, 3) is None  # type: ignore[attr-defined]
    for value in ({}, {"key": "t0-1", "replicas": ["n3", "n1", "n2"], "timeout-s": 30},
                  {"key": "group-coordinator:g1"}):
        assert reassign.validate("reassign", value, 3) is None  # type: ignore[attr-defined]
