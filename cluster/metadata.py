"""Who leads what: partition leaders, ISRs and the active controller.

Targeted faults (isolate the leaders, kill the controller) need the cluster's
own answer, asked at the moment of the fault. Leaders and ISRs come from a
metadata request; the active KRaft controller comes from the quorum tool run
inside a node (clients are only told a random broker in KRaft mode), and the
ZooKeeper-mode controller from DescribeCluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cluster.kafka_clients import admin
from cluster.spec import BROKER_PORT
from harness.base.errors import ClusterError

if TYPE_CHECKING:
    from cluster.model import Cluster


def node_name(node_id: int) -> str:
    return f"n{node_id}"


@dataclass(frozen=True)
class PartitionState:
    """One topic-partition as the cluster reports it; nodes by name (``n2``)."""

    topic: str
    partition: int
    leader: str | None
    replicas: tuple[str, ...]
    isr: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.topic}-{self.partition}"


def partitions(
    bootstrap: str, topics: Iterable[str] | None = None, timeout_s: float = 10.0
) -> dict[str, PartitionState]:
    """Leader, replicas and ISR of every partition of ``topics`` (default: all)."""
    try:
        md = admin(bootstrap).list_topics(timeout=timeout_s)
    except Exception as err:
        raise ClusterError(f"cannot read cluster metadata from {bootstrap}: {err}") from err
    wanted = set(topics) if topics is not None else None
    out: dict[str, PartitionState] = {}
    for name, topic in md.topics.items():
        if wanted is not None and name not in wanted:
            continue
        for pid, p in topic.partitions.items():
            state = PartitionState(
                topic=name,
                partition=pid,
                leader=node_name(p.leader) if p.leader >= 0 else None,
                replicas=tuple(node_name(r) for r in p.replicas),
                isr=tuple(node_name(r) for r in p.isrs),
            )
            out[state.key] = state
    return out


def registered_brokers(bootstrap: str, timeout_s: float = 5.0) -> set[str]:
    """Names of the brokers the cluster currently lists as registered."""
    md = admin(bootstrap).list_topics(timeout=timeout_s)
    return {node_name(b) for b in md.brokers}


def registered_in_zookeeper(cluster: Cluster) -> set[str]:
    """Names of the brokers registered in ZooKeeper (``/brokers/ids``): for brokers whose
    metadata cannot list them (``CLIENT_FEATURES["brokers_in_metadata"]``)."""
    from cluster.zk_state import registered_ids

    return {node_name(i) for i in registered_ids(cluster.zookeeper)}


def registered(cluster: Cluster) -> set[str]:
    """The brokers ``cluster`` lists as registered, asked where its version can say."""
    if cluster.version.can("brokers_in_metadata"):
        return registered_brokers(cluster.bootstrap)
    return registered_in_zookeeper(cluster)


def zookeeper_controller(cluster: Cluster) -> str:
    """The controller as ZooKeeper's ``/controller`` names it (before Metadata v1)."""
    from cluster.zk_state import controller_id

    try:
        found = controller_id(cluster.zookeeper)
    except ConnectionError as err:
        raise ClusterError(f"ZooKeeper cannot name the controller: {err}") from err
    if found is None:
        raise ClusterError("the cluster reports no controller right now")
    return node_name(found)


def zk_controller(bootstrap: str, timeout_s: float = 10.0) -> str:
    """The controller broker in ZooKeeper mode."""
    client = admin(bootstrap)  # keep a reference: a collected client cancels its futures
    try:
        desc = client.describe_cluster(request_timeout=timeout_s).result(timeout_s)
    except Exception as err:
        raise ClusterError(f"cannot describe the cluster at {bootstrap}: {err}") from err
    if desc.controller is None:
        raise ClusterError("the cluster reports no controller right now")
    return node_name(desc.controller.id)


def parse_quorum_status(text: str) -> str:
    """The leader's node name from ``kafka-metadata-quorum describe --status`` output."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "LeaderId":
            leader = int(value.strip())
            if leader < 0:
                raise ClusterError("the KRaft quorum has no leader right now")
            return node_name(leader)
    raise ClusterError(f"no LeaderId in the quorum tool's output: {text.strip()[:200]!r}")


def active_controller(cluster: Cluster) -> str:
    """The node that is the active controller right now, by the cluster's own word."""
    if cluster.spec.mode == "zookeeper":
        if not cluster.version.can("controller_in_metadata"):
            return zookeeper_controller(cluster)
        return zk_controller(cluster.bootstrap)
    from cluster import jvm

    last: Exception | None = None
    for node in cluster.nodes.values():
        if node.state() != "running":
            continue
        argv = jvm.quorum_argv(
            cluster.version, kafka_home=node.kafka_home, bootstrap=f"localhost:{BROKER_PORT}"
        )
        result = node.remote.exec(argv, timeout=60, check=False)
        try:
            return parse_quorum_status(result.stdout)
        except ClusterError as err:
            last = err
    raise ClusterError(f"no running node could name the active controller: {last}")
