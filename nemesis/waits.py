"""A fault script's waits for cluster state: the nemesis that runs ``await-state``.

Reported Kafka loss bugs need precise sequences ("partition the followers
until the ISR is the leader alone, then kill the leader"). A script says so
with a wait step (``nemesis.schedule``); the generator issues it as the op
``{"f": "await-state", "value": {"until", "key", "node"?, "timeout-s", "step"}}``
and moves on only when it completes (``nemesis.script``). ``StateNemesis``
executes it on the nemesis thread: it resolves ``node`` once, when the wait
starts (``nemesis.targets.resolve``: a wait acts on nothing, so it does not
count as acting on ``leader:KEY``), then polls KEY's leader and ISR from the
metadata (``cluster.metadata.partitions``, through the run's ``Resolver``) with
the loop ``await-recovery`` uses (``nemesis.polling``) until the condition
holds or the timeout (or the end of the main phase, ``within-s``) passes.

The completion keeps the invoke's fields and adds ``held``, ``seconds``,
``polls`` and the last ``observed`` ``{leader, isr}`` (or the ``error`` of a
metadata request that failed), the resolved ``nodes``, and for
``leader-changed`` the ``from-leader`` it compared with: the leader the script
last acted on through ``leader:KEY`` (``Resolver.acted_on``, kept in the nemesis,
not the generator), or the leader when the wait began. ``recovered`` runs the
``await-recovery`` wait itself (``RecoveryNemesis.wait``) and records its
fields with ``held``.

``key = "*"`` waits for the condition on *any* workload partition: a script
that acts on ``non-controllers`` cannot name the partitions that node leads, and
KIP-101's loss lands on whichever of them the restarted broker followed.

``await-state`` is not a fault kind: it starts and stops no fault window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cluster.metadata import PartitionState
from harness.base.waits import AWAIT_STATE
from nemesis.nodes import Resolver, completion
from nemesis.polling import POLL_S, Polled, Poller, bounded
from nemesis.recovery import RecoveryNemesis
from nemesis.targets import Facts, resolve

if TYPE_CHECKING:
    from cluster import Cluster

#: What one poll saw: the partition, or why the metadata could not say.
Seen = PartitionState | str
#: A wait's ``key`` meaning "any workload partition".
ANY_KEY = "*"


def holds(until: str, p: PartitionState, nodes: Sequence[str], baseline: str | None) -> bool:
    """Whether ``until`` holds of ``p`` (the nodes a target resolved to, the leader before)."""
    isr = set(p.isr)
    if until == "isr-is-leader":
        return p.leader is not None and isr == {p.leader}
    if until == "left-isr":
        return bool(nodes) and not isr & set(nodes)
    if until == "in-isr":
        return bool(nodes) and set(nodes) <= isr
    if until == "leader-changed":
        return p.leader is not None and p.leader != baseline
    if until == "leader-is":
        return p.leader in nodes
    raise ValueError(f"no wait condition {until!r}")


def observed(seen: Seen) -> dict[str, Any]:
    """The ``observed`` field of a completion: leader and ISR, or the error."""
    if isinstance(seen, str):
        return {"error": seen}
    return {"leader": seen.leader, "isr": list(seen.isr)}


def _partitions(facts: Facts) -> Mapping[str, PartitionState] | str:
    """Every workload partition, or why the metadata could not say (then: look again)."""
    try:
        return facts.partitions()
    except Exception as err:  # the cluster cannot answer now
        return f"metadata: {type(err).__name__}: {err}"


def _polled(wait: Mapping[str, Any], polled: Polled[Any], seen: Mapping[str, Any],
            nodes: Sequence[str], *, cut: bool) -> dict[str, Any]:
    """A polled wait's completion fields: the wait as asked, what the polls found and
    saw, the nodes a ``node`` target resolved to, and whether the phase cut it short."""
    value: dict[str, Any] = {**wait, "held": polled.held, "seconds": polled.seconds,
                             "polls": polled.polls, "observed": dict(seen)}
    if wait.get("node") is not None:
        value["nodes"] = list(nodes)
    if cut and not polled.held:
        value["cut-short"] = True
    return value


class StateNemesis:
    """Handles ``await-state``: polls KEY's metadata until the wait's condition holds.

    ``recovery`` answers ``wait = "recovered"``; ``clock`` and ``sleep`` are
    injectable so tests run in no time.
    """

    def __init__(
        self,
        resolver: Resolver,
        recovery: RecoveryNemesis,
        *,
        poll_s: float = POLL_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.resolver = resolver
        self.recovery = recovery
        self.poller = Poller(poll_s, clock, sleep)

    def fs(self) -> frozenset[str]:
        return frozenset({AWAIT_STATE})

    def setup(self, cluster: Cluster) -> None:
        """Nothing to prepare: it only reads metadata."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        asked = dict(op.get("value") or {})
        wait = {k: v for k, v in asked.items() if k != "within-s"}
        timeout, cut = bounded(float(asked.get("timeout-s", 0)), asked)
        until = asked.get("until")
        if until == "recovered":
            found = self.recovery.wait(cluster, timeout, cut_short=cut)
            found.pop("timeout-s", None)  # the wait's own timeout stays the script's
            return completion({**wait, "held": found.pop("recovered"), **found})
        key = str(asked.get("key"))
        facts = self.resolver.facts(cluster)
        try:
            nodes = ([] if asked.get("node") is None else
                     resolve(asked["node"], list(cluster.nodes), self.resolver.rng, facts))
        except Exception as err:  # a target that cannot be resolved: the wait cannot hold
            return completion({**wait, "held": False, "seconds": 0.0, "polls": 0},
                              f"resolving {asked.get('node')!r}: {type(err).__name__}: {err}")
        if asked.get("node") is not None and not nodes:
            return completion({**wait, "held": False, "seconds": 0.0, "polls": 0},
                              f"{asked['node']!r} names no node right now")

        if key == ANY_KEY:
            return self._any(wait, str(until), nodes, facts, timeout=timeout, cut=cut)

        def look() -> Seen:
            parts = _partitions(facts)
            if isinstance(parts, str):
                return parts
            return parts.get(key) or f"no partition {key!r} in the metadata"

        # leader-changed compares with the leader the script last acted on, or else
        # with the leader at the wait's first good look (which then cannot hold)
        baseline = self.resolver.acted_on.get(key)
        known = key in self.resolver.acted_on or until != "leader-changed"

        def good(seen: Seen) -> bool:
            nonlocal baseline, known
            if isinstance(seen, str):
                return False
            if not known:
                baseline, known = seen.leader, True
                return False
            return holds(str(until), seen, nodes, baseline)

        polled = self.poller.until(look, good, timeout)
        value = _polled(wait, polled, observed(polled.last), nodes, cut=cut)
        if until == "leader-changed":
            value["from-leader"] = baseline
        return completion(value)

    def _any(self, wait: Mapping[str, Any], until: str,
             nodes: Sequence[str], facts: Facts, *, timeout: float, cut: bool
             ) -> dict[str, Any]:
        """``key = "*"``: the wait holds when its condition holds of any workload partition.

        ``leader-changed`` compares each partition with its leader at the wait's first
        good look; a partition that appears later, or had no leader then, is not compared
        (a 0.10.2 hw-truncation run's wait held at once on a partition coming back online
        when the restarted broker registered, and resumed the paused broker 40 s before
        the change it was there for). The completion names the first partition that
        held (``observed.key``; for ``leader-changed`` its ``from-leader``) and, in
        ``held-on``, every partition that held at that look with its leader: which
        broker took each over is what tells a KIP-101 run from a plain failover.
        """
        baselines: dict[str, str | None] | None = None if until == "leader-changed" else {}
        found: list[str] = []

        def good(seen: Mapping[str, PartitionState] | str) -> bool:
            nonlocal baselines
            if isinstance(seen, str):
                return False
            if baselines is None:
                baselines = {k: p.leader for k, p in seen.items()}
                return False
            for k in sorted(seen):
                if until == "leader-changed" and baselines.get(k) is None:
                    continue  # new, or leaderless when the wait began: coming online is no change
                if holds(until, seen[k], nodes, baselines.get(k)):
                    found.append(k)
            return bool(found)

        polled = self.poller.until(lambda: _partitions(facts), good, timeout)
        last = polled.last
        seen: dict[str, Any]
        if isinstance(last, str):
            seen = {"error": last}
        elif found:
            seen = {"key": found[0], **observed(last[found[0]])}
        else:
            seen = {"partitions": len(last)}
        value = _polled(wait, polled, seen, nodes, cut=cut)
        if found and not isinstance(last, str):
            # every partition it held on, with its leader: which broker took each over
            value["held-on"] = {k: last[k].leader for k in found}
            if until == "leader-changed" and baselines is not None:
                value["from-leader"] = baselines.get(found[0])
        return completion(value)

    def teardown(self, cluster: Cluster) -> None:
        """Nothing to heal."""
