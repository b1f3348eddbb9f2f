"""Power loss on a real broker: what Kafka fsynced survives, the unflushed tail does not.

One KRaft node with its data on the power-loss filesystem (``--power-loss-fs``)
and a one-partition topic. The head is written with ``flush.messages=1``
(Kafka fsyncs the segment, and msyncs its mmapped indexes, after each
message); then the topic's flush setting goes back to Kafka's default (never
by count) and the tail is written. Every write is acknowledged (acks=1) and
read back before the power cut; after ``power-on`` the log holds the head and
at most a prefix of the tail. A plain SIGKILL in Docker would have kept all of
it (the host's page cache survives the container).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from confluent_kafka.cimpl import NewTopic

from cluster import Cluster, power_loss_fs, provisioner_for
from cluster.docker.containers import labelled_ids
from cluster.kafka_clients import admin, consumer, producer
from cluster.metadata import partitions
from cluster.spec import ClusterSpec
from cluster.wait import wait_until
from nemesis.nodes import Resolver
from nemesis.power_loss import PowerLossNemesis

pytestmark = pytest.mark.integration

NAME = "pl-it"
TOPIC = "pl"
HEAD, TAIL = 200, 300
NEVER = str(2**63 - 1)  # Kafka's default flush.messages: flush by count never


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    spec = ClusterSpec(name=NAME, nodes=1, controllers=1, power_loss_fs=True)
    try:
        yield provisioner_for().up(spec, fresh=True, say=lambda _msg: None)
    finally:
        provisioner_for().down(NAME)
        assert labelled_ids("container", NAME) == [], "containers left behind"


def produce(cluster: Cluster, values: range) -> None:
    acked: list[int] = []
    prod = producer(cluster.bootstrap, acks="1", **{"linger.ms": 0})
    for i in values:
        prod.produce(TOPIC, str(i).encode(),
                     on_delivery=lambda err, msg: acked.append(int(msg.value() or b"-1"))
                     if err is None else None)
        prod.poll(0)
    assert prod.flush(60) == 0
    assert acked == list(values), "every write acknowledged"


def read_all(cluster: Cluster) -> list[int]:
    cons = consumer(cluster.bootstrap)
    try:
        # Just after power-on the broker may answer NOT_LEADER for a moment after the
        # metadata names it leader (seen once, on a loaded host): ask again until it serves.
        (high,) = wait_until(
            lambda: (cons.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)[1],),
            timeout_s=60, backoff_s=1, message=f"{TOPIC}-0's end offset")
        cons.assign([TopicPartition(TOPIC, 0, 0)])
        seen: list[int] = []
        while len(seen) < high:
            msg = cons.poll(15)
            assert msg is not None, f"only {len(seen)} of {high} records read back"
            assert msg.error() is None, msg.error()
            seen.append(int(msg.value() or b"-1"))
        return seen
    finally:
        cons.close()


def set_flush(cluster: Cluster, messages: str) -> None:
    client = admin(cluster.bootstrap)
    entry = ConfigEntry("flush.messages", messages,
                        incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.TOPIC, TOPIC, incremental_configs=[entry])
    for fut in client.incremental_alter_configs([resource]).values():
        fut.result(30)
    time.sleep(3)  # the broker applies it to the live log through its metadata


def test_power_loss_keeps_the_flushed_head_and_drops_the_unflushed_tail(
    cluster: Cluster,
) -> None:
    node = cluster.nodes["n1"]
    client = admin(cluster.bootstrap)
    new = NewTopic(TOPIC, num_partitions=1, replication_factor=1,
                   config={"flush.messages": "1"})
    client.create_topics([new])[TOPIC].result(60)
    produce(cluster, range(HEAD))
    set_flush(cluster, NEVER)
    produce(cluster, range(HEAD, HEAD + TAIL))
    assert read_all(cluster) == list(range(HEAD + TAIL)), "all served before the cut"

    nem = PowerLossNemesis(Resolver())
    try:
        out = nem.invoke(cluster, {"f": "power-loss", "value": "n1"})
        assert "error" not in out, out
        lost = out["value"]["lost"]["n1"]
        assert lost["pid"] is not None and lost["bytes"] > 0, lost
        assert node.state() == "stopped" and not power_loss_fs.is_mounted(node.data_mount)

        on = nem.invoke(cluster, {"f": "power-on", "value": "all"})
        assert list(on["value"]["started"]) == ["n1"], on
        wait_until(lambda: partitions(cluster.bootstrap, [TOPIC])[f"{TOPIC}-0"].leader == "n1",
                   timeout_s=180, backoff_s=1, message=f"{TOPIC}-0 served again after power-on")
        after = read_all(cluster)
    finally:
        nem.teardown(cluster)

    assert after == list(range(len(after))), "what is left is a prefix, in order"
    assert len(after) >= HEAD, f"the flushed head was lost: {len(after)} of {HEAD} left"
    assert len(after) < HEAD + TAIL, "nothing of the unflushed tail was lost"
