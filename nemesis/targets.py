"""Symbolic targets resolved against the nodes and the cluster's live metadata.

A generator names targets symbolically (``one``, ``majority``, ``leaders``,
``leader:t0-0``) so a schedule stays meaningful whatever the cluster does; the
nemesis resolves them at the moment of the fault and records the concrete
nodes. Resolution is pure: the metadata arrives through the ``Facts`` callbacks,
asked only when a target needs them.

Targets mean what a Kafka operator means by them: ``leaders`` is *the leader
of one workload partition* (drawn with the run's seeded RNG), ``leaders:N`` the
leaders of N drawn partitions (which may share a node); ``primaries`` is an
alias of ``leaders`` (Jepsen's word). On three nodes the leaders of *all* the
partitions sit on every node, so "every leader" would mean "every node".
``non-controllers`` is every *registered* broker but the active controller: a
broker that is starting and has not registered yet is not among them, which is
what lets a script act on "the other broker" while one it restarted comes up
(KIP-101's sequence: the follower must register while its leader is paused,
and the controller that tells it to follow must not be the one paused).

``coordinator:ID`` is the transaction coordinator of transactional id ``ID``:
the leader of the ``__transaction_state`` partition Kafka maps the id to
(:func:`txn_partition`, as ``TransactionStateManager.partitionFor`` does), so a
fault can pause the broker that must write a transaction's markers while its
producer and its partitions' leaders carry on (KAFKA-17754's delayed EndTxn).
``ID`` is named as the run names it, without the run's prefix: client thread N's
producer has ``txn-N`` (``<prefix>txn-N`` on the cluster, as groups and topics are
prefixed), so a script can name a transactional id before the run exists.

Consumer groups have targets of their own: ``group-coordinator:GROUP`` is the
broker that coordinates GROUP (as the history names it; on the cluster its id
carries the run's prefix, as topic names do) right now, the leader of the ``__consumer_offsets``
partition Kafka places the group in (:func:`offsets_partition`, the same
placement rule over the group id); and ``offsets-leaders`` /
``offsets-leaders:N`` are the leaders of N drawn ``__consumer_offsets``
partitions. Neither is among the default targets: a random run draws them only
when ``--nemesis-targets`` names them.

Whether a resolved set may take the whole cluster or the KRaft quorum down is
decided apart, in ``nemesis.impact``: only the targets ``is_explicit`` names
are taken as asking for that.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from cluster.metadata import PartitionState
from harness.base.errors import UsageError

#: Targets that need no metadata, then those that do. Also: ``leaders:N``,
#: ``primaries:N``, ``leader:KEY``, ``followers:KEY`` (the followers of one
#: partition), ``coordinator:ID`` (a transactional id's coordinator), a node name,
#: or a list of names.
PLAIN_TARGETS = ("one", "minority", "majority", "all")
METADATA_TARGETS = ("leaders", "primaries", "controller", "non-controllers")
TARGETS = PLAIN_TARGETS + METADATA_TARGETS
#: Targets that ask outright for every node or a majority: never narrowed.
WIDE_TARGETS = ("all", "majority")
#: What the random generator draws from when ``--nemesis-targets`` names none:
#: no ``all`` or ``majority`` (they stay available by asking), no alias twice.
DEFAULT_TARGETS = ("one", "minority", "leaders", "controller")
#: The same, for kinds that take plain targets only (packet faults).
DEFAULT_PLAIN_TARGETS = ("one", "minority")

Target = str | Sequence[str]
NON_CONTROLLERS = "non-controllers"
COORDINATOR = "coordinator:"
#: Kafka's internal topic of transaction state; its partition leaders are the coordinators.
TXN_STATE_TOPIC = "__transaction_state"
#: Kafka's internal topic of committed offsets and group metadata
OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_LEADERS = "offsets-leaders"
GROUP_COORDINATOR = "group-coordinator:"
T = TypeVar("T")


@dataclass(frozen=True)
class Facts:
    """How to ask the cluster who leads: each callback runs only when needed.

    ``brokers`` (the registered brokers) is only asked by the recovery check;
    None when the source cannot tell.
    """

    partitions: Callable[[], Mapping[str, PartitionState]]
    controller: Callable[[], str]
    brokers: Callable[[], Collection[str]] | None = None
    #: which of the named nodes' brokers answer a metadata request sent to each alone;
    #: asked only by the recovery check. Registration outlives a broker that lost its
    #: power: until its session expires, metadata still names it, and as a leader.
    answering: Callable[[Collection[str]], Collection[str]] | None = None
    #: the partitions of ``__transaction_state`` by number; None when the source cannot tell
    txn_state: Callable[[], Mapping[int, PartitionState]] | None = None
    #: the partitions of ``__consumer_offsets`` by number; None when the source cannot tell
    offsets: Callable[[], Mapping[int, PartitionState]] | None = None
    #: what a group's ``group.id`` and a transactional id start with on the cluster: the
    #: run's prefix, as its topics' names do (a history's group ``g0`` is ``<prefix>g0``
    #: there, and client thread N's transactional id ``txn-N`` is ``<prefix>txn-N``)
    id_prefix: str = ""

    def once(self) -> Facts:
        """These facts with each callback asked at most once: one fault's look at the
        cluster, shared by what it records and whom it hits (a ``group-coordinator``
        fault reads ``__consumer_offsets`` for both)."""
        def memo(ask: Callable[[], T] | None) -> Callable[[], T] | None:
            return None if ask is None else functools.cache(ask)

        return replace(self, partitions=functools.cache(self.partitions),
                       controller=functools.cache(self.controller), brokers=memo(self.brokers),
                       txn_state=memo(self.txn_state), offsets=memo(self.offsets))


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (a signed 32-bit int over UTF-16 code units)."""
    h, data = 0, text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def txn_partition(txn_id: str, partitions: int) -> int:
    """The ``__transaction_state`` partition of ``txn_id``: Kafka's
    ``Utils.abs(transactionalId.hashCode) % partitions`` (``abs(MIN_VALUE)`` is 0)."""
    h = java_hash(txn_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def coordinator(facts: Facts, txn_id: str) -> list[str]:
    """The coordinator of ``txn_id`` right now; empty while its partition has no leader
    (or before any transaction made the topic)."""
    if facts.txn_state is None:
        raise UsageError(f"target {COORDINATOR}{txn_id} needs the {TXN_STATE_TOPIC} "
                         "partitions, which this cluster's metadata source cannot give")
    parts = facts.txn_state()
    if not parts:
        return []
    state = parts.get(txn_partition(facts.id_prefix + txn_id, len(parts)))
    return [] if state is None or state.leader is None else [state.leader]


def offsets_partition(group: str, count: int) -> int:
    """The ``__consumer_offsets`` partition that holds ``group`` among ``count``:
    ``Utils.abs(groupId.hashCode) % count``, the group coordinator's placement."""
    h = java_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % count


def _offsets(facts: Facts, target: str) -> Mapping[int, PartitionState]:
    if facts.offsets is None:
        raise UsageError(f"target {target!r} needs the {OFFSETS_TOPIC} partitions, which "
                         "this cluster's metadata source cannot give")
    return facts.offsets()


def group_partition(facts: Facts, group: str) -> PartitionState | None:
    """The ``__consumer_offsets`` partition that holds ``group`` right now; None before any
    group made the topic (or while the metadata lacks that partition)."""
    parts = _offsets(facts, GROUP_COORDINATOR + group)
    if not parts:
        return None
    return parts.get(offsets_partition(facts.id_prefix + group, len(parts)))


def offsets_partition_seen(facts: Facts, target: object) -> dict[str, Any]:
    """For a ``group-coordinator:GROUP`` target, the group's ``__consumer_offsets``
    partition as the metadata shows it: ``{"offsets-partition": {"key", "leader",
    "replicas", "isr"}}``, so a fault on a coordinator records how many replicas the
    group's committed offsets had (brokers before 0.11 create the topic with as many as
    were alive, KAFKA-3959). ``{}`` for any other target, with no metadata asked;
    ``{"offsets-partition": None}`` before any group made the topic."""
    if not isinstance(target, str) or not target.startswith(GROUP_COORDINATOR):
        return {}
    p = group_partition(facts, target.removeprefix(GROUP_COORDINATOR))
    if p is None:
        return {"offsets-partition": None}
    return {"offsets-partition": {"key": p.key, "leader": p.leader,
                                  "replicas": list(p.replicas), "isr": list(p.isr)}}


def group_coordinator(facts: Facts, group: str) -> list[str]:
    """The coordinator of ``group``: the leader of its ``__consumer_offsets`` partition.
    Empty when that partition has no leader, or before any group made the topic."""
    p = group_partition(facts, group)
    return [] if p is None or p.leader is None else [p.leader]


def offsets_leaders(facts: Facts, rng: random.Random, count: int = 1) -> list[str]:
    """The leaders of ``count`` drawn ``__consumer_offsets`` partitions (distinct nodes)."""
    parts = _offsets(facts, OFFSETS_LEADERS)
    led = sorted(n for n, p in parts.items() if p.leader is not None)
    out: list[str] = []
    for n in rng.sample(led, min(count, len(led))):
        leader = parts[n].leader
        if leader is not None and leader not in out:
            out.append(leader)
    return out


def offsets_count(target: str) -> int | None:
    """N for ``offsets-leaders:N`` (1 without ``:N``); None for other targets."""
    return _count_after(target, (OFFSETS_LEADERS,), "offsets partitions")


def leader_count(target: str) -> int | None:
    """N for ``leaders:N`` / ``primaries:N`` (1 without ``:N``); None for other targets.

    ``UsageError`` for a count that is not a positive integer.
    """
    return _count_after(target, ("leaders", "primaries"), "partitions")


def _count_after(target: str, bases: tuple[str, ...], what: str) -> int | None:
    """The N of ``BASE:N`` for one of ``bases`` (1 without ``:N``), None for another base;
    ``what`` names what N counts in the hint refusing a count that is not >= 1."""
    base, colon, count = target.partition(":")
    if base not in bases:
        return None
    if not colon:
        return 1
    if not count.isdigit() or int(count) < 1:
        raise UsageError(f"bad target {target!r}: the count after {base}: must be >= 1",
                         hint=f"e.g. {base}:2 for the leaders of two {what}")
    return int(count)


def is_target(target: str) -> bool:
    """Whether ``--nemesis-targets`` may name ``target`` as a node target."""
    if target.startswith(COORDINATOR) and len(target) > len(COORDINATOR):
        return True
    if target.startswith(GROUP_COORDINATOR) and len(target) > len(GROUP_COORDINATOR):
        return True
    try:
        return (
            target in TARGETS
            or leader_count(target) is not None
            or offsets_count(target) is not None
        )
    except UsageError:
        return False


#: A node's name: ``n1`` to ``nN`` on N nodes (``cluster.spec``).
NODE_NAME = re.compile(r"^n([1-9][0-9]*)$")


def node_problem(name: object, nodes: int | None) -> str | None:
    """Why ``name`` is no node of a cluster of ``nodes`` (any count when None), or None."""
    m = NODE_NAME.match(name) if isinstance(name, str) else None
    if m is None:
        return f"{name!r} is not a node name (n1, n2, ...)"
    if nodes is not None and int(m.group(1)) > nodes:
        return f"node {name!r} is not among the run's {nodes} nodes (n1 to n{nodes})"
    return None


def target_problem(target: object, nodes: int | None) -> str | None:
    """Why ``target`` can name no node (of ``nodes``, when known), or None if it may.

    Checked before a run starts, so that a script naming ``n9`` on three nodes or
    ``leaders:0`` is refused at once rather than failing at its step, mid-run.
    A list names nodes only, as :func:`resolve` takes it.
    """
    if isinstance(target, list | tuple):
        if not target:
            return "an empty list of nodes"
        return next((p for p in (node_problem(n, nodes) for n in target) if p), None)
    if not isinstance(target, str):
        return f"{target!r} is not a target"
    if NODE_NAME.match(target):
        return node_problem(target, nodes)
    try:
        if leader_count(target) is not None or offsets_count(target) is not None:
            return None
    except UsageError as err:
        return err.message
    key = named_partition(target)
    if is_target(target) or key:
        return None
    return (f"unknown target {target!r}: use {', '.join(TARGETS)}, leaders:N, leader:KEY, "
            "followers:KEY, coordinator:TXN_ID, group-coordinator:GROUP, offsets-leaders[:N] "
            "or node names")


def named_partition(target: object) -> str | None:
    """The key a ``leader:KEY`` or ``followers:KEY`` target names; None for any other."""
    if isinstance(target, str):
        for prefix in ("leader:", "followers:"):
            if target.startswith(prefix):
                return target.removeprefix(prefix)
    return None


def is_explicit(target: Target, nodes: Collection[str]) -> bool:
    """Whether ``target`` asks outright for what it hits: ``all``, ``majority``,
    ``non-controllers``, names, a list, the replicas of one named partition
    (``leader:KEY``, ``followers:KEY``), or one transactional id's coordinator.

    A scenario that partitions or pauses the followers of one partition means
    exactly those nodes, whatever else they host: narrowing them would quietly
    turn the scenario into another one. Everything drawn at random (``one``,
    ``minority``, ``leaders``, ``controller``) is narrowed rather than allowed to
    take down every node or a majority of the KRaft controllers.
    """
    if not isinstance(target, str) or target in WIDE_TARGETS or target in nodes:
        return True
    if target == NON_CONTROLLERS or target.startswith((COORDINATOR, GROUP_COORDINATOR)):
        return True
    return named_partition(target) is not None


def _partition(facts: Facts, key: str) -> PartitionState:
    parts = facts.partitions()
    if key not in parts:
        raise UsageError(f"no partition {key!r} in the cluster's metadata")
    return parts[key]


def leaders(facts: Facts, rng: random.Random, count: int = 1) -> list[str]:
    """The leaders of ``count`` workload partitions drawn from those that have one.

    Distinct, in draw order; empty when no partition has a leader right now.
    """
    parts = facts.partitions()
    led = sorted(k for k, p in parts.items() if p.leader is not None)
    drawn = rng.sample(led, min(count, len(led)))
    out: list[str] = []
    for key in drawn:
        leader = parts[key].leader
        if leader is not None and leader not in out:
            out.append(leader)
    return out


def non_controllers(facts: Facts) -> list[str]:
    """The registered brokers other than the active controller.

    ``UsageError`` when the source cannot tell which brokers are registered.
    """
    if facts.brokers is None:
        raise UsageError(f"target {NON_CONTROLLERS!r} needs the registered brokers, "
                         "which this cluster's metadata source cannot give")
    controller = facts.controller()
    return [b for b in facts.brokers() if b != controller]


def resolve(target: Target, nodes: Sequence[str], rng: random.Random, facts: Facts) -> list[str]:
    """The concrete nodes ``target`` names right now, in node order."""
    order = {n: i for i, n in enumerate(nodes)}
    chosen: list[str]
    if not isinstance(target, str):
        chosen = [str(t) for t in target]
    elif target in order:
        chosen = [target]
    elif target == "all":
        chosen = list(nodes)
    elif target == "one":
        chosen = [rng.choice(list(nodes))]
    elif target == "minority":
        chosen = rng.sample(list(nodes), rng.randint(1, max(1, (len(nodes) - 1) // 2)))
    elif target == "majority":
        chosen = rng.sample(list(nodes), len(nodes) // 2 + 1)
    elif (count := leader_count(target)) is not None:
        chosen = leaders(facts, rng, count)
    elif target == "controller":
        chosen = [facts.controller()]
    elif target == NON_CONTROLLERS:
        chosen = non_controllers(facts)
    elif (offsets := offsets_count(target)) is not None:
        chosen = offsets_leaders(facts, rng, offsets)
    elif target.startswith(GROUP_COORDINATOR):
        chosen = group_coordinator(facts, target.removeprefix(GROUP_COORDINATOR))
    elif target.startswith(COORDINATOR):
        chosen = coordinator(facts, target.removeprefix(COORDINATOR))
    elif target.startswith("leader:"):
        leader = _partition(facts, target.removeprefix("leader:")).leader
        chosen = [] if leader is None else [leader]
    elif target.startswith("followers:"):
        p = _partition(facts, target.removeprefix("followers:"))
        chosen = [r for r in p.replicas if r != p.leader]
    else:
        raise UsageError(
            f"unknown target {target!r}",
            hint=f"use one of {', '.join(TARGETS)}, leaders:N, leader:KEY, followers:KEY, "
                 "coordinator:TXN_ID, group-coordinator:GROUP, offsets-leaders[:N] or node "
                 "names",
        )
    unknown = [n for n in chosen if n not in order]
    if unknown:
        raise UsageError(f"target {target!r} names unknown nodes {unknown}")
    return sorted(set(chosen), key=order.__getitem__)
