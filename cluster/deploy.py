"""Kafka on nodes a provisioner made: the part of ``up`` every provisioner shares.

The ducktape template done Jepsen-style: first resolve everything that can
fail on bad input (version, mode, config keys) before a node exists; then,
once the provisioner has nodes with Kafka installed at their ``kafka_home``,
write the configs, format KRaft storage (or start ZooKeeper), start the
daemons, and wait for a readiness probe that is a real ``acks=all`` write to a
topic replicated like the workload's. Everything here reaches nodes only
through their ``Remote``, so it runs the same whatever provisioner made them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from cluster import jvm
from cluster.config_keys import known_broker_keys, validate_keys
from cluster.kafka_dist import spec_distribution, spec_version
from cluster.model import Cluster, Say, each_node
from cluster.readiness import unanswering_brokers, wait_ready, wait_zookeeper
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion

LOG = logging.getLogger("insync.cluster")


@dataclass(frozen=True)
class Release:
    """The Kafka build a spec runs: its version, its files here, the broker keys it knows."""

    version: KafkaVersion
    #: The distribution on this machine; the provisioner puts it at each node's kafka_home.
    root: Path
    known_keys: frozenset[str]


def check_version(spec: ClusterSpec) -> KafkaVersion:
    """The Kafka version ``spec`` asks for, if it runs in the spec's mode."""
    return spec_version(spec)


def release_for(spec: ClusterSpec) -> Release:
    """Resolve and fetch the Kafka build for ``spec`` and check its broker config keys."""
    dist = spec_distribution(spec)
    version = dist.version
    known = known_broker_keys(dist)
    validate_keys(spec.broker_config.keys(), known)
    return Release(version, dist.root, known)


def reuse(cluster: Cluster, *, say: Say, ready_timeout_s: float) -> bool:
    """Take over ``cluster`` as it runs if every broker is up and answers; False if it
    must be rebuilt (a catalogue reused a 0.10.2 cluster whose halted broker hung in
    its shutdown: three runs in a row failed at topic creation)."""
    if not all(n.state() == "running" for n in cluster.nodes.values()):
        return False
    silent = unanswering_brokers(cluster)
    if silent:
        say(f"not reusing the running cluster {cluster.spec.name!r}: the broker on "
            f"{', '.join(silent)} runs but answers no request (hung, e.g. in a shutdown)")
        return False
    say(
        f"reusing the running cluster {cluster.spec.name!r} (same settings); "
        "pass --fresh to rebuild it"
    )
    wait_ready(cluster, timeout_s=ready_timeout_s)
    return True


def start(cluster: Cluster, known_keys: frozenset[str] | None) -> None:
    """Configure fresh nodes, format KRaft storage (or start ZooKeeper), start the brokers.

    ``known_keys``: the broker keys the build knows (``Release.known_keys``), used to
    render only settings this Kafka understands; ``None`` renders every one.
    """
    t0 = time.monotonic()
    each_node(lambda n: n.configure(known_keys), cluster.nodes.values())
    LOG.info("configured at %.1fs", time.monotonic() - t0)
    if cluster.spec.mode == "zookeeper":
        for node in cluster.nodes.values():
            if node.zookeeper is not None:
                node.zookeeper.start()
        waited = wait_zookeeper(cluster)
        LOG.info("ZooKeeper serving after %.1fs more", waited)
    else:
        cluster_id = jvm.new_cluster_id()
        # a dynamic quorum's voters are named by node id and metadata directory id
        directories = {cluster.spec.node_id(n): jvm.new_cluster_id()
                       for n in cluster.spec.controller_nodes}
        each_node(lambda n: n.format_storage(cluster_id, directories), cluster.nodes.values())
        LOG.info("storage formatted at %.1fs", time.monotonic() - t0)
    each_node(lambda n: n.start(), cluster.nodes.values())
    LOG.info("daemons started at %.1fs", time.monotonic() - t0)


def wait_until_ready(cluster: Cluster, *, ready_timeout_s: float) -> None:
    """Block until ``cluster`` serves ``acks=all`` writes; ``ClusterError`` names a node if not."""
    waited = wait_ready(cluster, timeout_s=ready_timeout_s)
    LOG.info("ready after waiting %.1fs", waited)
