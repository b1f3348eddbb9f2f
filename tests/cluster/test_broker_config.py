"""server.properties rendering: wiring per mode, defaults filtered by version keys."""

from __future__ import annotations

import pytest

from cluster.broker_config import parse_overrides, properties_for, render
from cluster.spec import ClusterSpec
from harness.base.errors import UsageError


def _props(text: str) -> dict[str, str]:
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    return dict(ln.split("=", 1) for ln in lines)


def test_kraft_combined_node_has_controller_listener_and_voters() -> None:
    spec = ClusterSpec(nodes=5, controllers=3)
    props = _props(render(properties_for(spec, "n2", "10.0.0.2")))
    assert props["process.roles"] == "broker,controller"
    assert props["node.id"] == "2"
    assert props["controller.quorum.voters"] == "1@n1:9093,2@n2:9093,3@n3:9093"
    assert "CONTROLLER://0.0.0.0:9093" in props["listeners"]
    assert props["advertised.listeners"] == "PLAINTEXT://10.0.0.2:9092"
    assert "broker.id" not in props and "zookeeper.connect" not in props


def test_kraft_broker_only_node_has_no_controller_listener() -> None:
    spec = ClusterSpec(nodes=5, controllers=3)
    props = _props(render(properties_for(spec, "n5", "10.0.0.5")))
    assert props["process.roles"] == "broker"
    assert props["listeners"] == "PLAINTEXT://0.0.0.0:9092"


def test_zookeeper_mode_wiring() -> None:
    spec = ClusterSpec(nodes=4, mode="zookeeper", kafka_version="3.9.x")
    props = _props(render(properties_for(spec, "n4", "10.0.0.4")))
    assert props["broker.id"] == "4"
    assert props["zookeeper.connect"] == "n1:2181,n2:2181,n3:2181"
    assert "process.roles" not in props and "node.id" not in props


def test_replication_defaults_follow_cluster_size() -> None:
    one = _props(render(properties_for(ClusterSpec(nodes=1, controllers=1), "n1", "a")))
    five = _props(render(properties_for(ClusterSpec(nodes=5), "n1", "a")))
    assert one["offsets.topic.replication.factor"] == "1"
    assert one["transaction.state.log.min.isr"] == "1"
    assert five["offsets.topic.replication.factor"] == "3"
    assert five["transaction.state.log.min.isr"] == "2"


def test_defaults_unknown_to_the_version_are_left_out() -> None:
    known = frozenset({"log.dirs", "unclean.leader.election.enable", "broker.id"})
    spec = ClusterSpec(mode="zookeeper", kafka_version="0.10.2.2")
    props = _props(render(properties_for(spec, "n1", "a"), known))
    assert "transaction.state.log.replication.factor" not in props
    assert props["unclean.leader.election.enable"] == "false"
    assert props["broker.id"] == "1"  # wiring is always rendered


def test_overrides_win_over_defaults() -> None:
    spec = ClusterSpec(
        broker_config={"unclean.leader.election.enable": "true", "replica.lag.time.max.ms": "7000"}
    )
    props = _props(render(properties_for(spec, "n1", "a")))
    assert props["unclean.leader.election.enable"] == "true"
    assert props["replica.lag.time.max.ms"] == "7000"


@pytest.mark.parametrize(
    "item",
    ["no-equals", "=value", "node.id=7", "listeners=PLAINTEXT://x:1"],
    ids=["no-equals", "empty-key", "reserved-node-id", "reserved-listeners"],
)
def test_bad_overrides_are_rejected(item: str) -> None:
    with pytest.raises(UsageError):
        parse_overrides([item], "kraft")


def test_good_overrides_parse() -> None:
    assert parse_overrides(["a.b=1", " c = x=y "], "kraft") == {"a.b": "1", "c": "x=y"}


def test_followers_leave_the_isr_within_a_fault_by_default() -> None:
    """Kafka's 30 s default would outlast most faults: acks=all writes would only stall."""
    props = _props(render(properties_for(ClusterSpec(), "n1", "a")))
    assert int(props["replica.lag.time.max.ms"]) <= 5000


def test_an_isr_shrink_finds_a_new_controller_within_a_fault_by_default() -> None:
    """The AlterPartition channel waits this long on a cut-off old controller; Kafka's
    30 s would stall every acks=all write for the whole of most faults."""
    props = _props(render(properties_for(ClusterSpec(), "n1", "a")))
    assert int(props["controller.socket.timeout.ms"]) <= 5000


def test_leadership_goes_back_to_preferred_replicas_within_a_run_by_default() -> None:
    """Kafka's 300 s check would leave a restarted broker leading nothing for the rest
    of most runs, and every leader on the nodes the next fault may take."""
    props = _props(render(properties_for(ClusterSpec(), "n1", "a")))
    assert props["leader.imbalance.check.interval.seconds"] == "10"
    assert props.get("auto.leader.rebalance.enable", "true") == "true"
