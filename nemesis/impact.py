"""How much of the cluster a fault takes away, and narrowing a fault that would take too much.

A run tests something only while the cluster can still take writes. Two
outcomes stop a Kafka cluster outright, so insync only causes them when asked
to (``targets.is_explicit``):

* **whole-cluster**: the fault hits every node (kills or pauses them all, or
  leaves every node alone on its side of a partition);
* **quorum-majority**: it takes a majority of the KRaft controllers
  (``ClusterSpec.controller_nodes``) out of the quorum; with no quorum there
  are no leader elections, no broker registrations, no ISR changes.

Every fault op records either outcome in its completion (``"whole-cluster":
true``, ``"quorum-majority": true``). A symbolic target that would cause one is
*narrowed* first: controllers beyond what the quorum can lose are dropped (drawn
with the run's seeded RNG), then one more node if every node is still hit; the
completion keeps ``narrowed-from`` (the nodes first resolved) and
``narrowed-because``.

Partitions are judged by what TCP can still do: a node that drops a peer's
packets cuts the link both ways (the peer's connection never completes), so
two nodes are *linked* only when neither holds a grudge against the other.

Pure functions of node names; ZooKeeper-mode clusters have no controller
nodes, so only the whole-cluster rule applies to them.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nemesis.grudge import majority


@dataclass(frozen=True)
class Impact:
    """What a fault takes away from the cluster as a whole."""

    whole_cluster: bool = False
    quorum_majority: bool = False

    @property
    def harmful(self) -> bool:
        return self.whole_cluster or self.quorum_majority

    def record(self) -> dict[str, bool]:
        """The completion fields: only the outcomes that happened."""
        out: dict[str, bool] = {}
        if self.whole_cluster:
            out["whole-cluster"] = True
        if self.quorum_majority:
            out["quorum-majority"] = True
        return out

    def reason(self, controllers: Collection[str], *, cut: bool = False) -> str:
        """Why a fault with this impact was narrowed (or, ``cut``, a partition rewritten)."""
        parts = []
        if self.whole_cluster:
            parts.append("would cut every node off from every other" if cut
                         else "would hit every node")
        if self.quorum_majority:
            parts.append(f"would {'cut' if cut else 'take'} a majority of the "
                         f"{len(controllers)} KRaft controllers ({', '.join(controllers)}) "
                         f"{'off' if cut else 'out of'} the quorum")
        return " and ".join(parts)


def of_nodes(hit: Collection[str], nodes: Collection[str], controllers: Collection[str]
             ) -> Impact:
    """The impact of killing, pausing (or skewing, slowing) exactly ``hit``."""
    down = set(hit)
    return Impact(
        whole_cluster=bool(nodes) and set(nodes) <= down,
        quorum_majority=bool(controllers)
        and len(down & set(controllers)) >= majority(len(controllers)),
    )


def linked(grudge: Mapping[str, Collection[str]], a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` can still talk over TCP (neither drops the other)."""
    return b not in grudge.get(a, ()) and a not in grudge.get(b, ())


def of_grudge(grudge: Mapping[str, Collection[str]], nodes: Sequence[str],
              controllers: Collection[str]) -> Impact:
    """The impact of a partition.

    Whole-cluster: some link is cut and no node keeps a link to any other.
    Quorum-majority: no controller keeps links to a majority of the controllers
    (itself included), so no quorum leader can be elected or keep its term.
    """
    cut = any(grudge.get(n) for n in nodes)
    alone = all(not any(linked(grudge, a, b) for b in nodes if b != a) for a in nodes)
    quorum = list(controllers)
    need = majority(len(quorum)) - 1 if quorum else 0
    reachable = any(sum(linked(grudge, c, d) for d in quorum if d != c) >= need
                    for c in quorum)
    return Impact(whole_cluster=cut and len(nodes) > 1 and alone,
                  quorum_majority=cut and bool(quorum) and not reachable)


def spare(hit: Sequence[str], nodes: Sequence[str], controllers: Collection[str],
          rng: random.Random) -> tuple[list[str], dict[str, Any]]:
    """``hit`` narrowed so it neither hits every node nor a quorum majority.

    Returns the nodes to act on (in ``hit``'s order) and the fields to add to the
    completion: ``narrowed-from`` and ``narrowed-because`` when anything was
    dropped. Draws from ``rng`` only when it has to drop something.
    """
    impact = of_nodes(hit, nodes, controllers)
    if not impact.harmful:
        return list(hit), {}
    keep = list(hit)
    quorum = [n for n in keep if n in set(controllers)]
    budget = majority(len(controllers)) - 1
    if len(quorum) > budget:
        dropped = set(rng.sample(quorum, len(quorum) - budget))
        keep = [n for n in keep if n not in dropped]
    if nodes and set(nodes) <= set(keep):
        keep.remove(rng.choice(keep))
    return keep, {"narrowed-from": list(hit), "narrowed-because": impact.reason(controllers)}
