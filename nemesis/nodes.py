"""Doing one thing on many nodes at once, and saying which nodes it failed on.

A fault hits several nodes at (nearly) the same moment, so per-node work runs
in parallel; one node's failure must not hide what was done on the others, so
results and errors come back per node instead of the first exception. How
simultaneous it really was is measured: the moment each node's action
returned, and the spread from the first node to the last (``Landed.spread_ms``),
which fault completions record as ``spread-ms``.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cluster.broker_config import DATA_DIR
from cluster.metadata import PartitionState, active_controller, partitions, registered
from cluster.readiness import answering
from cluster.remote import sh
from nemesis.impact import of_nodes
from nemesis.in_force import How, InForce, Ledger, narrow_down
from nemesis.targets import (
    OFFSETS_TOPIC,
    TXN_STATE_TOPIC,
    Facts,
    Target,
    is_explicit,
    offsets_partition_seen,
    resolve,
)

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

LOG = logging.getLogger("insync.nemesis")
T = TypeVar("T")


@dataclass(frozen=True)
class Landed(Generic[T]):
    """What one action on many nodes did: per node its result or error, and when it landed."""

    results: dict[str, T]
    errors: dict[str, str]
    #: ``time.monotonic()`` when each node's action returned successfully
    at: dict[str, float]

    def spread_ms(self, only: Iterable[str] | None = None) -> float | None:
        """Milliseconds from the first node's action landing to the last's, among ``only``
        (default: every node it succeeded on); ``None`` when there is none."""
        times = list(self.at.values()) if only is None else [
            self.at[n] for n in only if n in self.at]
        if not times:
            return None
        return round((max(times) - min(times)) * 1000, 1)

    def recorded(self, value: dict[str, Any], only: Iterable[str] | None = None
                 ) -> dict[str, Any]:
        """``value`` with ``spread-ms`` added when any node (of ``only``) was acted on."""
        spread = self.spread_ms(only)
        return value if spread is None else {**value, "spread-ms": spread}


def on_nodes_timed(
    fn: Callable[[KafkaNode], T], cluster: Cluster, names: Iterable[str]
) -> Landed[T]:
    """Run ``fn`` on the named nodes in parallel, each in its own thread from the start."""
    names = list(names)
    results: dict[str, T] = {}
    errors: dict[str, str] = {}
    at: dict[str, float] = {}
    if not names:
        return Landed(results, errors, at)

    def timed(node: KafkaNode) -> tuple[T, float]:
        out = fn(node)
        return out, time.monotonic()

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = {n: pool.submit(timed, cluster.nodes[n]) for n in names}
    for name, fut in futures.items():
        try:
            results[name], at[name] = fut.result()
        except Exception as err:  # recorded per node, never dropped
            LOG.warning("on %s: %s", name, err)
            errors[name] = f"{type(err).__name__}: {err}"
    return Landed(results, errors, at)


def on_nodes(
    fn: Callable[[KafkaNode], T], cluster: Cluster, names: Iterable[str]
) -> tuple[dict[str, T], dict[str, str]]:
    """Run ``fn`` on the named nodes in parallel: (results, errors) keyed by node."""
    landed = on_nodes_timed(fn, cluster, names)
    return landed.results, landed.errors


def completion(value: Any, errors: Mapping[str, str] | str | None = None) -> dict[str, Any]:
    """A nemesis completion: the value, plus ``error`` when anything failed."""
    out: dict[str, Any] = {"value": value}
    if errors:
        out["error"] = errors if isinstance(errors, str) else dict(sorted(errors.items()))
    return out


def workload_partitions(
    cluster: Cluster, topics: Iterable[str] | None, prefix: str = ""
) -> dict[str, PartitionState]:
    """The partitions of ``topics``, by default every topic but Kafka's and insync's own,
    keyed as the history keys them.

    ``prefix``: the run's topic-name prefix. Only topics that carry it are the run's;
    they are returned without it (topic ``<prefix>t0`` → key ``t0-1``), so a
    scenario's ``leader:t0-1`` and a wait on ``t0-1`` name the partition the
    history's sends went to, and a reused cluster's older topics are not drawn.
    """
    wanted = None if topics is None else [prefix + t for t in topics]
    parts = partitions(cluster.bootstrap, wanted)
    if topics is None:
        parts = {
            k: p for k, p in parts.items()
            if not p.topic.startswith("__") and not p.topic.startswith("insync-")
        }
    if not prefix:
        return parts
    ours = (replace(p, topic=p.topic.removeprefix(prefix))
            for p in parts.values() if p.topic.startswith(prefix))
    return {p.key: p for p in ours}


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
        states, _ = on_nodes(lambda n: sh(n.remote, 'cat -- "$1"', n.at(QUORUM_STATE)).stdout,
                             cluster, cluster.spec.controller_nodes)
        leader = newest_quorum_leader(states)
        if leader is not None:
            return leader
    return active_controller(cluster)


def cluster_facts(cluster: Cluster, topics: Iterable[str] | None = None,
                  prefix: str = "") -> Facts:
    """Facts that ask the live cluster (metadata request, quorum state) when needed;
    partitions keyed as the history keys them (``workload_partitions``)."""
    wanted = None if topics is None else tuple(topics)
    return Facts(
        partitions=lambda: workload_partitions(cluster, wanted, prefix),
        controller=lambda: controller_of(cluster),
        brokers=lambda: registered(cluster),
        answering=lambda names: answering(cluster, names),
        txn_state=lambda: {p.partition: p for p in partitions(
            cluster.bootstrap, [TXN_STATE_TOPIC]).values()},
        offsets=lambda: {p.partition: p for p in partitions(
            cluster.bootstrap, [OFFSETS_TOPIC]).values()},
        id_prefix=prefix,
    )


@dataclass(frozen=True)
class Hit:
    """The nodes a fault acts on, and what its completion records about them."""

    nodes: list[str]
    #: ``narrowed-from``/``narrowed-because`` if narrowed, ``withheld``/``because`` if
    #: nothing is left; ``whole-cluster``, ``quorum-majority`` if it hits that much
    #: (``nemesis.impact``; for kills and pauses, with the faults in force)
    record: dict[str, Any] = field(default_factory=dict)
    #: the nodes this fault newly counts as down in the ledger, until it settles
    claimed: frozenset[str] = frozenset()


class Resolver:
    """Resolves symbolic targets for one run: a seeded RNG, the live-metadata facts, and
    the ledger of what the faults in force take away (``nemesis.in_force``)."""

    def __init__(
        self,
        seed: int | None = None,
        facts_for: Callable[[Cluster], Facts] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self._facts_for = facts_for or cluster_facts
        self.in_force = Ledger()
        #: KEY -> the leader a fault last resolved ``leader:KEY`` to (what a script's
        #: ``leader-changed`` wait compares with, ``nemesis.waits``)
        self.acted_on: dict[str, str] = {}

    def facts(self, cluster: Cluster) -> Facts:
        return self._facts_for(cluster)

    def nodes(self, cluster: Cluster, target: Target, facts: Facts | None = None) -> list[str]:
        """``target``'s nodes for a fault (from ``facts`` if given, else a fresh look); a
        ``leader:KEY`` resolved is kept in ``acted_on``."""
        chosen = resolve(target, list(cluster.nodes), self.rng,
                         facts if facts is not None else self._facts_for(cluster))
        if isinstance(target, str) and target.startswith("leader:") and chosen:
            self.acted_on[target.removeprefix("leader:")] = chosen[0]
        return chosen

    def seen(self, cluster: Cluster, target: Target, facts: Facts | None = None
             ) -> dict[str, Any]:
        """What the completion of a fault on ``target`` records of the cluster as it
        found it (``targets.offsets_partition_seen``: a group coordinator's partition)."""
        return offsets_partition_seen(facts if facts is not None else self._facts_for(cluster),
                                      target)

    def hit(self, cluster: Cluster, target: Target) -> Hit:
        """``target``'s nodes for a fault that takes no node away (clock, packet): never
        narrowed, recorded when it hits every node or a quorum majority."""
        chosen = self.nodes(cluster, target)
        return Hit(chosen, of_nodes(chosen, list(cluster.nodes),
                                    cluster.spec.controller_nodes).record())

    def take_down(self, cluster: Cluster, target: Target, how: How,
                  facts: Facts | None = None) -> Hit:
        """``target``'s nodes to kill or pause (``how``), counted as down at once.

        A target that is not explicit (``targets.is_explicit``) is narrowed so that,
        with the faults in force, it adds neither a whole-cluster nor a
        quorum-majority outcome (``in_force.narrow_down``). The ledger counts the
        nodes as ``how`` in the same step, so no other fault can spend the same
        margin; ``settle`` keeps only those the fault really hit.
        """
        nodes = list(cluster.nodes)
        controllers = cluster.spec.controller_nodes
        chosen = self.nodes(cluster, target, facts)  # metadata: asked before taking the lock
        explicit = is_explicit(target, nodes)

        def decide(state: InForce) -> tuple[Hit, InForce]:
            kept, record = narrow_down(chosen, state, nodes, controllers, self.rng,
                                       explicit=explicit, how=how)
            claimed = frozenset(kept) - getattr(state, how)
            return Hit(kept, record, claimed), state.claim(how, claimed)

        return self.in_force.decide(decide)

    def settle(self, how: How, hit: Hit, done: Iterable[str]) -> None:
        """After a kill or pause: of ``hit``'s claimed nodes only those ``done`` stay down."""
        self.in_force.update(lambda s: s.settle(how, hit.claimed, set(done)))
