"""Bring a cluster up, find it again, tear it down.

``up`` is the ducktape template done Jepsen-style: resolve everything that can
fail on bad input first (version, config keys), then the engine and image,
then containers, configs, storage, daemons, and a readiness probe that is a
real ``acks=all`` write to a topic replicated like the workload's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from cluster import containers, jvm
from cluster.config_keys import known_broker_keys, validate_keys
from cluster.distribution import ensure_distribution
from cluster.docker_remote import DockerRemote
from cluster.engine import ensure_engine
from cluster.image import ensure_image
from cluster.kafka_node import KafkaNode
from cluster.readiness import wait_ready
from cluster.spec import BROKER_PORT, ClusterSpec
from cluster.versions import KafkaVersion, resolve_for_mode
from harness.errors import ClusterError, UsageError

LOG = logging.getLogger("insync.cluster")
T = TypeVar("T")
Say = Callable[[str], None]


@dataclass
class Cluster:
    """A running cluster: its spec, resolved version and node handles."""

    spec: ClusterSpec
    version: KafkaVersion
    nodes: dict[str, KafkaNode]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{n.address}:{BROKER_PORT}" for n in self.nodes.values())

    def node(self, name: str) -> KafkaNode:
        try:
            return self.nodes[name]
        except KeyError:
            raise UsageError(f"no node {name!r}; nodes are {', '.join(self.nodes)}") from None


def each_node(fn: Callable[[KafkaNode], T], nodes: Iterable[KafkaNode]) -> dict[str, T]:
    """Run ``fn`` on every node at once; raise the first failure after all finish."""
    nodes = list(nodes)
    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        futures = {n.name: pool.submit(fn, n) for n in nodes}
    return {name: fut.result() for name, fut in futures.items()}


def _check_version(spec: ClusterSpec) -> KafkaVersion:
    return resolve_for_mode(spec.kafka_version, spec.mode)


def up(
    spec: ClusterSpec,
    *,
    fresh: bool = False,
    say: Say = print,
    ready_timeout_s: float = 180.0,
    on_create: Callable[[], None] | None = None,
) -> Cluster:
    """Create (or reuse) the cluster ``spec`` describes and wait until it serves writes.

    ``on_create`` is called just before the first container is created, so a caller
    whose ``up`` fails knows whether the half-built cluster is its own to clean up.
    """
    version = _check_version(spec)
    started = time.monotonic()
    dist = ensure_distribution(version)
    known = known_broker_keys(dist)
    validate_keys(spec.broker_config.keys(), known)
    ensure_engine()
    image = ensure_image(spec.base_image)
    LOG.info("version, keys, engine and image ready in %.1fs", time.monotonic() - started)

    existing = containers.cluster_nodes(spec.name)
    if existing and not fresh:
        reusable = (
            all(c.running and c.spec == spec for c in existing) and len(existing) == spec.nodes
        )
        if reusable:
            cluster = _attach_nodes(spec, version, existing)
            if all(n.state() == "running" for n in cluster.nodes.values()):
                say(
                    f"reusing the running cluster {spec.name!r} (same settings); "
                    "pass --fresh to rebuild it"
                )
                wait_ready(cluster, timeout_s=ready_timeout_s)
                return cluster
        say(f"removing leftover cluster {spec.name!r} (its settings or state differ)")
    if existing or containers.cluster_names().count(spec.name):
        removed = containers.remove(spec.name)
        if existing:
            LOG.info("removed %s", removed)

    if on_create is not None:
        on_create()
    try:
        cluster = _create(spec, version, image, dist.root, known)
        waited = wait_ready(cluster, timeout_s=ready_timeout_s)
        LOG.info("ready after waiting %.1fs", waited)
    except BaseException:
        say(
            f"cluster {spec.name!r} did not come up; its containers are kept for "
            f"`insync cluster logs` (remove with `insync cluster down --name {spec.name}`)"
        )
        raise
    LOG.info("cluster %s up in %.1fs", spec.name, time.monotonic() - started)
    return cluster


def _create(
    spec: ClusterSpec, version: KafkaVersion, image: str, kafka_root: Path, known: frozenset[str]
) -> Cluster:
    t0 = time.monotonic()
    containers.create_network(spec)
    with ThreadPoolExecutor(max_workers=spec.nodes) as pool:
        list(
            pool.map(
                lambda n: containers.create_node(spec, n, image, kafka_root),
                spec.node_names,
            )
        )
    cluster = _attach_nodes(spec, version, containers.cluster_nodes(spec.name))
    LOG.info("containers created in %.1fs", time.monotonic() - t0)
    each_node(lambda n: n.configure(known), cluster.nodes.values())
    LOG.info("configured at %.1fs", time.monotonic() - t0)
    if spec.mode == "zookeeper":
        for node in cluster.nodes.values():
            if node.zookeeper is not None:
                node.zookeeper.start()
    else:
        cluster_id = jvm.new_cluster_id()
        each_node(lambda n: n.format_storage(cluster_id), cluster.nodes.values())
        LOG.info("storage formatted at %.1fs", time.monotonic() - t0)
    each_node(lambda n: n.start(), cluster.nodes.values())
    LOG.info("daemons started at %.1fs", time.monotonic() - t0)
    return cluster


def _attach_nodes(
    spec: ClusterSpec, version: KafkaVersion, found: list[containers.NodeContainer]
) -> Cluster:
    nodes = {
        c.node: KafkaNode(c.node, c.address, DockerRemote(c.node, c.container), spec, version)
        for c in found
    }
    return Cluster(spec, version, nodes)


def attach(name: str = "insync") -> Cluster:
    """The running cluster ``name``, as an earlier ``up`` left it."""
    found = containers.cluster_nodes(name)
    if not found:
        raise ClusterError(
            f"no cluster named {name!r} is running", hint="start one with `insync cluster up`"
        )
    spec = found[0].spec
    return _attach_nodes(spec, _check_version(spec), found)


def down(name: str | None) -> containers.Removed:
    """Remove everything of cluster ``name`` (``None``: every insync cluster)."""
    return containers.remove(name)
