"""Doing one thing on many nodes at once, and saying which nodes it failed on.

A fault hits several nodes at (nearly) the same moment, so per-node work runs
in parallel; one node's failure must not hide what was done on the others, so
results and errors come back per node instead of the first exception.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from cluster.broker_config import DATA_DIR
from cluster.metadata import PartitionState, active_controller, partitions, registered_brokers
from cluster.remote import sh
from nemesis.impact import of_nodes, spare
from nemesis.targets import Facts, Target, is_explicit, resolve

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

LOG = logging.getLogger("insync.nemesis")
T = TypeVar("T")


def on_nodes(
    fn: Callable[[KafkaNode], T], cluster: Cluster, names: Iterable[str]
) -> tuple[dict[str, T], dict[str, str]]:
    """Run ``fn`` on the named nodes in parallel: (results, errors) keyed by node."""
    names = list(names)
    results: dict[str, T] = {}
    errors: dict[str, str] = {}
    if not names:
        return results, errors
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = {n: pool.submit(fn, cluster.nodes[n]) for n in names}
    for name, fut in futures.items():
        try:
            results[name] = fut.result()
        except Exception as err:  # recorded per node, never dropped
            LOG.warning("on %s: %s", name, err)
            errors[name] = f"{type(err).__name__}: {err}"
    return results, errors


def completion(value: Any, errors: Mapping[str, str] | str | None = None) -> dict[str, Any]:
    """A nemesis completion: the value, plus ``error`` when anything failed."""
    out: dict[str, Any] = {"value": value}
    if errors:
        out["error"] = errors if isinstance(errors, str) else dict(sorted(errors.items()))
    return out


def workload_partitions(
    cluster: Cluster, topics: Iterable[str] | None
) -> dict[str, PartitionState]:
    """The partitions of ``topics``; by default every topic but Kafka's and insync's own."""
    parts = partitions(cluster.bootstrap, topics)
    if topics is None:
        parts = {
            k: p for k, p in parts.items()
            if not p.topic.startswith("__") and not p.topic.startswith("insync-")
        }
    return parts


QUORUM_STATE = f"{DATA_DIR}/__cluster_metadata-0/quorum-state"


def newest_quorum_leader(states: Mapping[str, str]) -> str | None:
    """The leader of the highest epoch among the nodes' KRaft ``quorum-state`` files."""
    best: tuple[int, int] | None = None
    for text in states.values():
        try:
            data = json.loads(text)
            epoch, leader = int(data["leaderEpoch"]), int(data["leaderId"])
        except (ValueError, KeyError, TypeError):
            continue
        if leader >= 0 and (best is None or epoch > best[0]):
            best = (epoch, leader)
    return None if best is None else f"n{best[1]}"


def controller_of(cluster: Cluster) -> str:
    """The active controller: in KRaft, the newest leader any voter has persisted.

    Reading every node's quorum-state file takes one ``cat`` per node, where the
    quorum tool starts a JVM (10-50 s on a loaded host, and it may ask the very
    node a partition just isolated). Falls back to the tool if no file names a
    leader, and always asks the cluster in ZooKeeper mode.
    """
    if cluster.spec.mode == "kraft":
        states, _ = on_nodes(lambda n: sh(n.remote, f"cat {QUORUM_STATE}").stdout,
                             cluster, cluster.spec.controller_nodes)
        leader = newest_quorum_leader(states)
        if leader is not None:
            return leader
    return active_controller(cluster)


def cluster_facts(cluster: Cluster, topics: Iterable[str] | None = None) -> Facts:
    """Facts that ask the live cluster (metadata request, quorum state) when needed."""
    wanted = None if topics is None else tuple(topics)
    return Facts(
        partitions=lambda: workload_partitions(cluster, wanted),
        controller=lambda: controller_of(cluster),
        brokers=lambda: registered_brokers(cluster.bootstrap),
    )


@dataclass(frozen=True)
class Hit:
    """The nodes a fault acts on, and what its completion records about them."""

    nodes: list[str]
    #: ``narrowed-from``/``narrowed-because`` if narrowed; ``whole-cluster``,
    #: ``quorum-majority`` if it hits that much (``nemesis.impact``)
    record: dict[str, Any] = field(default_factory=dict)


class Resolver:
    """Resolves symbolic targets for one run: a seeded RNG plus the live-metadata facts."""

    def __init__(
        self,
        seed: int | None = None,
        facts_for: Callable[[Cluster], Facts] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self._facts_for = facts_for or cluster_facts

    def facts(self, cluster: Cluster) -> Facts:
        return self._facts_for(cluster)

    def nodes(self, cluster: Cluster, target: Target) -> list[str]:
        return resolve(target, list(cluster.nodes), self.rng, self._facts_for(cluster))

    def hit(self, cluster: Cluster, target: Target, *, narrow: bool) -> Hit:
        """``target``'s nodes for a fault; ``narrow``: spare the cluster and the quorum.

        A fault that takes nodes down (kill, pause) narrows a target that is not
        explicit (``targets.is_explicit``) so it hits neither every node nor a
        majority of the KRaft controllers; what it then hits is recorded either way.
        """
        nodes = list(cluster.nodes)
        controllers = cluster.spec.controller_nodes
        chosen = self.nodes(cluster, target)
        record: dict[str, Any] = {}
        if narrow and not is_explicit(target, nodes):
            chosen, record = spare(chosen, nodes, controllers, self.rng)
        record.update(of_nodes(chosen, nodes, controllers).record())
        return Hit(chosen, record)
