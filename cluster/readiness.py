"""When is a cluster ready? When every broker is registered and an ``acks=all``
write to a topic replicated like the workload's succeeds.

A node whose JVM died, or that never registers, is named in the error with
the tail of its log: that is what a user needs to see first.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING

from confluent_kafka import KafkaException
from confluent_kafka.cimpl import NewTopic

from cluster.kafka_clients import admin, producer
from cluster.metadata import registered as registered_for
from cluster.metadata import registered_brokers
from cluster.remote import sh
from cluster.spec import BROKER_PORT, ZK_CLIENT_PORT
from harness.base.errors import ClusterError

if TYPE_CHECKING:
    from cluster.model import Cluster

PROBE_TOPIC = "insync-ready"


def unanswering_brokers(cluster: Cluster, timeout_s: float = 5.0) -> list[str]:
    """The nodes whose broker answers no metadata request sent to it alone.

    A running JVM is not a serving broker: a 0.10.2 broker that halts ("log
    truncation is not allowed") can hang in its own shutdown with its socket
    server closed, and a write replicated to two brokers still succeeds around it.
    """
    up = set(answering(cluster, list(cluster.nodes), timeout_s))
    return [name for name in cluster.nodes if name not in up]


def answering(cluster: Cluster, names: Collection[str], timeout_s: float = 5.0) -> list[str]:
    """Those of ``names`` whose broker answers a metadata request sent to it alone."""
    from cluster.model import each_node  # model imports nothing of this module's users

    def answers(node_address: str) -> bool:
        try:
            registered_brokers(f"{node_address}:{BROKER_PORT}", timeout_s)
        except Exception:  # refused, timed out, or the client failed: it did not answer
            return False
        return True

    asked = [cluster.nodes[n] for n in names if n in cluster.nodes]
    answered = each_node(lambda n: answers(n.address), asked)
    return [name for name, ok in answered.items() if ok]


def _dead_node_error(cluster: Cluster) -> ClusterError | None:
    for node in cluster.nodes.values():
        if node.state() == "stopped":
            tail = " | ".join(node.tail_log(8).strip().splitlines()[-6:])
            return ClusterError(
                f"the broker on {node.name} exited during startup: {tail}",
                hint=f"see `insync cluster logs {node.name}`",
            )
    return None


def _probe_write(bootstrap: str, rf: int, timeout_s: float, *, ask_first: bool = True) -> None:
    """``ask_first`` False: create the probe topic without asking whether it exists (brokers
    whose metadata fails while the cluster has no topic, ``brokers_in_metadata``)."""
    client = admin(bootstrap)
    topics = client.list_topics(timeout=timeout_s).topics if ask_first else {}
    if PROBE_TOPIC not in topics:
        new = NewTopic(
            PROBE_TOPIC,
            num_partitions=1,
            replication_factor=rf,
            # The probe's record has no key: its topic is never compacted, whatever the
            # brokers' log.cleanup.policy (a compacted topic refuses records without a key).
            config={"min.insync.replicas": str(min(2, rf)), "cleanup.policy": "delete"},
        )
        try:
            client.create_topics([new], request_timeout=timeout_s)[PROBE_TOPIC].result(timeout_s)
        except KafkaException as err:
            if "TOPIC_ALREADY_EXISTS" not in str(err):
                raise
    prod = producer(bootstrap, acks="all", **{"message.timeout.ms": int(timeout_s * 1000)})
    errors: list[str] = []
    prod.produce(
        PROBE_TOPIC,
        b"ready",
        on_delivery=lambda err, _msg: errors.append(str(err)) if err else None,
    )
    if prod.flush(timeout_s) > 0:
        raise ClusterError("the probe write was not acknowledged in time")
    if errors:
        raise ClusterError(f"the probe write failed: {errors[0]}")


def wait_ready(cluster: Cluster, *, timeout_s: float = 180.0) -> float:
    """Block until ``cluster`` serves ``acks=all`` writes; return the seconds waited."""
    start = time.monotonic()
    deadline = start + timeout_s
    wanted = set(cluster.nodes)
    last_error = "no answer yet"
    registered: set[str] = set()
    while time.monotonic() < deadline:
        dead = _dead_node_error(cluster)
        if dead is not None:
            raise dead
        try:
            registered = registered_for(cluster)
            if wanted <= registered:
                _probe_write(cluster.bootstrap, cluster.spec.replication_factor(), 10.0,
                             ask_first=cluster.version.can("brokers_in_metadata"))
                return time.monotonic() - start
            last_error = f"registered brokers: {', '.join(sorted(registered)) or 'none'}"
        except Exception as err:  # not ready yet: remember why, try again
            last_error = str(err)
        time.sleep(0.5)
    missing = sorted(wanted - registered) or sorted(wanted)
    node = cluster.nodes[missing[0]]
    tail = " | ".join(node.tail_log(8).strip().splitlines()[-6:])
    raise ClusterError(
        f"{', '.join(missing)} not ready after {timeout_s:.0f}s ({last_error}); "
        f"{node.name} log: {tail}",
        hint=f"see `insync cluster logs {node.name}`",
    )


def zk_mode_script(port: int = ZK_CLIENT_PORT) -> str:
    """Shell that asks the ZooKeeper server on this node for its ``srvr`` report (a
    whitelisted four-letter word) and prints its ``Mode:`` (leader, follower, standalone),
    or nothing while it does not serve."""
    return (
        "python3 -c \"import socket\n"
        "try:\n"
        f" s = socket.create_connection(('127.0.0.1', {port}), 2); s.sendall(b'srvr')\n"
        " out = b''\n"
        " while (chunk := s.recv(4096)): out += chunk\n"
        " print(*[l.split(':', 1)[1].strip() for l in out.decode().splitlines()"
        " if l.startswith('Mode:')])\n"
        "except OSError: pass\""
    )


def wait_zookeeper(cluster: Cluster, *, timeout_s: float = 90.0) -> float:
    """Block until a majority of the ZooKeeper servers serve (leader, follower or standalone);
    return the seconds waited.

    Brokers started before the ensemble has a leader give up in ``initZk`` after
    ``zookeeper.connection.timeout.ms`` (6 s on 0.10.2): on the loaded 2-core VM a 5-node
    0.10.2 cluster lost a broker that way and the whole catalogue stopped.
    """
    servers = [cluster.nodes[n] for n in cluster.spec.zookeeper_nodes]
    start = time.monotonic()
    modes: dict[str, str] = {}
    while time.monotonic() - start < timeout_s:
        modes = {n.name: sh(n.remote, zk_mode_script(), check=False).stdout.strip()
                 for n in servers}
        serving = [m for m in modes.values() if m in ("leader", "follower", "standalone")]
        if len(serving) > len(servers) // 2:
            return time.monotonic() - start
        time.sleep(0.5)
    seen = ", ".join(f"{name}: {mode or 'not serving'}" for name, mode in modes.items())
    raise ClusterError(f"the ZooKeeper ensemble did not form within {timeout_s:.0f}s ({seen})",
                       hint=f"see `insync cluster logs {servers[0].name}`")
