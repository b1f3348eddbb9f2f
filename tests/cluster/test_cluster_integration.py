"""A real cluster end to end: up, 1,000 acks=all writes read back in order,
a SIGKILLed broker rejoining the ISR, and a ``down`` that leaves nothing.

KRaft on 4.1.x runs by default; ZooKeeper mode on 3.9.x is marked slow (it
costs another ~2 minutes of CI and exercises the same code paths plus the
ZooKeeper ensemble).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.cimpl import NewTopic

from cluster import Cluster, provisioner_for
from cluster.docker.containers import labelled_ids
from cluster.kafka_clients import admin, consumer, producer
from cluster.metadata import active_controller, partitions
from cluster.remote import sh
from cluster.spec import ClusterSpec
from cluster.wait import wait_until

pytestmark = pytest.mark.integration

TOPIC = "it-acks-all"
MESSAGES = 1000


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(("it-kraft", "4.1.x", "kraft"), id="4.1-kraft"),
        pytest.param(("it-zk", "3.9.x", "zookeeper"), id="3.9-zookeeper", marks=pytest.mark.slow),
    ],
)
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    name, version, mode = request.param
    spec = ClusterSpec(name=name, nodes=3, kafka_version=version, mode=mode)
    try:
        yield provisioner_for().up(spec, fresh=True, say=lambda _msg: None)
    finally:
        provisioner_for().down(name)
        assert labelled_ids("container", name) == [], "containers left behind"
        assert labelled_ids("network", name) == [], "network left behind"
        assert labelled_ids("volume", name) == [], "volumes left behind"


def test_every_node_runs_a_registered_broker(cluster: Cluster) -> None:
    assert [n.state() for n in cluster.nodes.values()] == ["running"] * 3
    assert active_controller(cluster) in cluster.nodes


def test_each_node_reports_where_the_clients_come_from(cluster: Cluster) -> None:
    """``client_source`` is what the partition nemesis drops to cut the clients off:
    on Docker it must be the node's default gateway, where the host's traffic arrives."""
    for node in cluster.nodes.values():
        route = sh(node.remote, "ip -4 route show default").stdout.split()
        assert "via" in route, route
        assert node.client_source == route[route.index("via") + 1]
        assert sh(node.remote, f"ls {node.kafka_home}/libs | head -1").stdout.strip()


def test_acks_all_writes_are_read_back_in_order(cluster: Cluster) -> None:
    client = admin(cluster.bootstrap)
    new = NewTopic(
        TOPIC, num_partitions=1, replication_factor=3, config={"min.insync.replicas": "2"}
    )
    client.create_topics([new])[TOPIC].result(30)
    acked: list[int] = []
    failed: list[str] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            failed.append(str(err))
        else:
            acked.append(msg.offset())  # type: ignore[attr-defined]

    prod = producer(cluster.bootstrap, acks="all", **{"enable.idempotence": True})
    for i in range(MESSAGES):
        prod.produce(TOPIC, str(i).encode(), on_delivery=on_delivery)
    assert prod.flush(60) == 0
    assert failed == [] and len(acked) == MESSAGES

    cons = consumer(cluster.bootstrap)
    cons.assign([TopicPartition(TOPIC, 0, 0)])
    seen: list[tuple[int, int]] = []
    try:
        while len(seen) < MESSAGES:
            msg = cons.poll(15)
            assert msg is not None, f"only {len(seen)} of {MESSAGES} records read back"
            assert msg.error() is None, msg.error()
            offset, value = msg.offset(), msg.value()
            assert offset is not None and value is not None
            seen.append((offset, int(value)))
    finally:
        cons.close()
    assert [v for _, v in seen] == list(range(MESSAGES))
    assert [o for o, _ in seen] == sorted(acked)


def test_killed_broker_rejoins_the_isr(cluster: Cluster) -> None:
    victim = cluster.nodes["n2"]
    old_pid = victim.kill()
    assert old_pid is not None and victim.state() == "stopped"

    def shrunk() -> bool:
        return all("n2" not in p.isr for p in partitions(cluster.bootstrap, [TOPIC]).values())

    wait_until(shrunk, timeout_s=90, message="n2 leaves the ISR after SIGKILL")
    new_pid = victim.start()
    assert new_pid != old_pid

    def rejoined() -> bool:
        states = partitions(cluster.bootstrap).values()
        return all("n2" in p.isr for p in states if "n2" in p.replicas)

    wait_until(rejoined, timeout_s=120, message="n2 back in every ISR it belongs to")


def test_a_broker_started_right_after_its_kill_stays_up(cluster: Cluster) -> None:
    """In ZooKeeper mode the killed broker's registration outlives it by a session timeout
    (18 s on 3.9); started before it expired, the broker died at startup ("already
    registered"). The start waits it out (``KafkaNode``'s prelude), and the broker stays."""
    victim = cluster.nodes["n3"]
    assert victim.kill() is not None
    began = time.monotonic()
    victim.start()
    waited = time.monotonic() - began
    if cluster.spec.mode == "zookeeper":
        assert waited > 15, f"started {waited:.1f}s after the kill: inside the old session"

    def rejoined() -> bool:
        states = partitions(cluster.bootstrap).values()
        return all("n3" in p.isr for p in states if "n3" in p.replicas)

    wait_until(rejoined, timeout_s=120, message="n3 back in every ISR it belongs to")
    time.sleep(5)
    assert victim.state() == "running", "the restarted broker died"
