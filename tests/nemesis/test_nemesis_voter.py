"""The ``voter`` kind: remove-controller and add-controller with kafka-metadata-quorum, on
fake nodes whose tool changes a fake voter set as Kafka would."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes import FakeNode, FakeTime, cluster_of

from cluster.admin_tools import quorum_status
from cluster.broker_config import initial_controllers, properties_for, render
from cluster.spec import ClusterSpec
from harness.base.errors import UsageError
from harness.base.faults import fault_kind
from harness.run.cluster_options import ClusterOptions
from nemesis.kinds import load
from nemesis.quorum import QuorumNemesis

DIRS = {1: "AAAAAAAAAAAAAAAAAAAAAQ", 2: "AAAAAAAAAAAAAAAAAAAAAg", 3: "AAAAAAAAAAAAAAAAAAAAAw",
        4: "AAAAAAAAAAAAAAAAAAAABA"}


class Quorum:
    """A voter set the fake tool describes and changes; ``refuse_adds`` adds are refused
    (a voter not caught up yet)."""

    def __init__(self, voters: set[int], leader: int = 1) -> None:
        self.voters, self.leader = voters, leader
        self.runs: list[tuple[str, tuple[str, ...]]] = []
        self.refuse_adds = 0
        self.refuse_removes = 0

    def describe(self) -> str:
        def listed(ids: set[int]) -> str:
            return json.dumps([{"id": i, "directoryId": DIRS[i]} for i in sorted(ids)])
        return (f"ClusterId:              abc\nLeaderId:               {self.leader}\n"
                f"CurrentVoters:          {listed(self.voters)}\n"
                f"CurrentObservers:       {listed(set(DIRS) - self.voters)}\n")

    def handler(self, fake: FakeNode) -> Any:
        def handle(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            if "java" not in argv:
                return fake.handle(argv, stdin)
            self.runs.append((fake.name, argv))
            # every request goes to the controllers, none through a broker's stale cache
            assert "--bootstrap-server" not in argv
            assert argv[argv.index("--bootstrap-controller") + 1] == "n1:9093,n2:9093,n3:9093"
            if "describe" in argv:
                return 0, self.describe(), ""
            if "remove-controller" in argv:
                if self.refuse_removes:
                    self.refuse_removes -= 1
                    return 1, "", ("java.util.concurrent.ExecutionException: org.apache.kafka."
                                   "common.errors.NotLeaderOrFollowerException: ")
                nid = int(argv[argv.index("--controller-id") + 1])
                assert argv[argv.index("--controller-directory-id") + 1] == DIRS[nid]
                self.voters.discard(nid)
                if nid == self.leader:
                    self.leader = min(self.voters)
                return 0, f"Removed KRaft controller {nid}\n", ""
            if "add-controller" in argv:
                assert argv[argv.index("--command-config") + 1] == "/etc/kafka/server.properties"
                if self.refuse_adds:
                    self.refuse_adds -= 1
                    return 1, "", "org.apache.kafka.common.errors.InvalidRequestException"
                self.voters.add(int(fake.name.removeprefix("n")))
                return 0, "Added controller\n", ""
            return 1, "", "unknown tool"
        return handle


def cluster(quorum: Quorum, kraft_quorum: str = "dynamic") -> Any:
    spec = ClusterSpec(name="fake", nodes=4, controllers=3, kraft_quorum=kraft_quorum)
    fakes = {name: FakeNode(name) for name in spec.node_names}
    return cluster_of(spec, {n: quorum.handler(f) for n, f in fakes.items()})


def nemesis() -> QuorumNemesis:
    t = FakeTime()
    return QuorumNemesis(clock=t.clock, sleep=t.sleep)


def test_removing_the_active_controller_records_the_voters_before_and_after() -> None:
    q = Quorum({1, 2, 3}, leader=2)
    out = nemesis().invoke(cluster(q), {"f": "remove-controller", "value": "active-controller"})
    assert "error" not in out
    v = out["value"]
    assert v["node"] == "n2" and v["directory-id"] == DIRS[2]
    assert v["before"] == {"leader": "n2", "voters": ["n1", "n2", "n3"], "observers": ["n4"]}
    assert v["after"] == {"leader": "n1", "voters": ["n1", "n3"], "observers": ["n2", "n4"]}
    assert v["applied-s"] >= 0 and "duration-s" in v and v["ran-on"] == "n1"
    assert q.voters == {1, 3}


def test_add_controller_runs_on_the_missing_node_from_its_own_config() -> None:
    q = Quorum({1, 3})
    q.refuse_adds = 1
    out = nemesis().invoke(cluster(q), {"f": "add-controller", "value": None})
    assert "error" not in out
    assert out["value"]["added"]["n2"]["attempts"] == 2 and out["value"]["applied-s"] >= 0
    assert out["value"]["after"]["voters"] == ["n1", "n2", "n3"]
    adds = [node for node, argv in q.runs if "add-controller" in argv]
    assert adds == ["n2", "n2"]  # on the node added, never on another


def test_an_add_refused_every_time_is_an_error_and_a_non_voter_cannot_be_removed() -> None:
    q = Quorum({1, 3})
    q.refuse_adds = 5
    out = nemesis().invoke(cluster(q), {"f": "add-controller", "value": "n2"})
    assert "add-controller exited 1" in str(out["error"])
    assert out["value"]["added"]["n2"]["output"]
    # nothing was applied: no applied-s, and the quorum as the refusals left it
    assert "applied-s" not in out["value"] and out["value"]["after"]["voters"] == ["n1", "n3"]
    out = nemesis().invoke(cluster(q), {"f": "remove-controller", "value": "n2"})
    assert "not a voter" in out["error"] and q.voters == {1, 3}


def test_a_removal_kafka_accepts_but_never_applies_times_out_from_the_tools_start() -> None:
    q = Quorum({1, 2, 3}, leader=2)
    c = cluster(q)
    handlers = {n: q.handler(f) for n, f in ((n, FakeNode(n)) for n in c.spec.node_names)}

    def ignoring(name: str) -> Any:
        def handle(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            if "remove-controller" in argv:
                q.runs.append((name, argv))
                return 0, "Removed KRaft controller\n", ""  # accepted, never applied
            return handlers[name](argv, stdin)
        return handle

    c = cluster_of(c.spec, {n: ignoring(n) for n in c.spec.node_names})
    t = FakeTime()
    start = t.clock()
    out = QuorumNemesis(clock=t.clock, sleep=t.sleep).invoke(
        c, {"f": "remove-controller", "value": "active-controller"})
    assert out["error"] == "n2 still a voter after 60 s"
    assert "applied-s" not in out["value"] and out["value"]["after"]["voters"] == ["n1", "n2", "n3"]
    # the wait stops at the bound, counted from the tool's start
    assert 60.0 <= t.clock() - start <= 61.0


def test_a_static_quorum_changes_nothing() -> None:
    q = Quorum({1, 2, 3})
    out = nemesis().invoke(cluster(q, "static"), {"f": "remove-controller", "value": None})
    assert "static" in out["error"] and not q.runs


def test_the_kind_validates_its_targets() -> None:
    impl = load(fault_kind("voter"))
    assert impl.validate("remove-controller", "active-controller", 3) is None  # type: ignore[attr-defined]
    assert impl.validate("remove-controller", "n3", 3) is None  # type: ignore[attr-defined]
    assert impl.validate("add-controller", None, 3) is None  # type: ignore[attr-defined]
    assert "remove-controller takes" in impl.validate(  # type: ignore[attr-defined]
        "remove-controller", "n7", 3)
    assert "add-controller takes" in impl.validate("add-controller", 4, 3)  # type: ignore[attr-defined]


def test_describe_status_is_read_and_a_failed_describe_is_none() -> None:
    s = quorum_status(Quorum({1, 2}, leader=1).describe())
    assert s is not None and s.leader == 1 and dict(s.voters) == {1: DIRS[1], 2: DIRS[2]}
    assert quorum_status("org.apache.kafka.common.errors.TimeoutException") is None


def test_a_dynamic_quorum_is_found_through_bootstrap_servers() -> None:
    spec = ClusterSpec(name="x", nodes=4, controllers=3, kraft_quorum="dynamic")
    n1, n4 = (properties_for(spec, n, f"10.0.0.{n[1]}") for n in ("n1", "n4"))
    text = render(n1)
    assert "controller.quorum.bootstrap.servers=n1:9093,n2:9093,n3:9093" in text
    assert "controller.quorum.voters" not in text
    assert "advertised.listeners=PLAINTEXT://10.0.0.1:9092,CONTROLLER://n1:9093" in text
    assert "CONTROLLER" not in render(n4).split("advertised.listeners=")[1].splitlines()[0]
    assert initial_controllers(n1, DIRS) == (f"1@n1:9093:{DIRS[1]},2@n2:9093:{DIRS[2]},"
                                             f"3@n3:9093:{DIRS[3]}")
    static = render(properties_for(ClusterSpec(name="x", nodes=3), "n1", "10.0.0.1"))
    assert "controller.quorum.voters=1@n1:9093,2@n2:9093,3@n3:9093" in static


@pytest.mark.parametrize(("settings", "refusal"), [
    ({"kafka_version": "3.8.x"}, r"needs Kafka 3\.9 or later"),
    ({"kafka_version": "3.9.x", "mode": "zookeeper"}, "needs --mode kraft"),
])
def test_a_dynamic_quorum_is_refused_where_kafka_has_none(settings: dict[str, str],
                                                          refusal: str) -> None:
    with pytest.raises(UsageError, match=refusal):
        ClusterOptions(kraft_quorum="dynamic", **settings).validate()  # type: ignore[arg-type]
    assert ClusterOptions(kraft_quorum="dynamic", kafka_version="4.1.x").validate(
        ).cluster_spec().kraft_quorum == "dynamic"


def test_a_run_asking_for_voter_faults_on_a_static_quorum_is_refused_before_it_starts() -> None:
    from harness.run.options import RunOptions

    with pytest.raises(UsageError, match="--nemesis voter changes the controller quorum"):
        RunOptions(nemesis=["voter"], kafka_version="4.1.x").validate()
    with pytest.raises(UsageError, match=r"needs Kafka 3\.9"):
        RunOptions(kraft_quorum="dynamic", kafka_version="3.8.x").validate()
    RunOptions(nemesis=["voter"], kraft_quorum="dynamic", kafka_version="4.1.x").validate()


def test_a_refused_removal_runs_again_and_one_refused_every_time_is_an_error() -> None:
    """3.9.2's tool, sent through a broker, is refused with NOT_LEADER_OR_FOLLOWER now and
    then; an operator runs it again."""
    q = Quorum({1, 2, 3}, leader=3)
    q.refuse_removes = 1
    out = nemesis().invoke(cluster(q), {"f": "remove-controller", "value": "active-controller"})
    assert "error" not in out and q.voters == {1, 2}
    assert out["value"]["attempts"] == 2 and "NotLeaderOrFollower" in str(out["value"]["output"])
    q = Quorum({1, 2, 3}, leader=3)
    q.refuse_removes = 5
    out = nemesis().invoke(cluster(q), {"f": "remove-controller", "value": "active-controller"})
    assert out["error"] == "remove-controller exited 1" and q.voters == {1, 2, 3}
    assert out["value"]["attempts"] == 3
