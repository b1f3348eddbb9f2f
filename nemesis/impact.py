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

Faults overlap (a kill while a partition is in force), so what is judged is
the *union* of what the faults in force take away (``of_state``): nodes down
(killed, paused) plus the cut in force. Quorum-majority there means no live
controller is linked to a majority of the controllers (itself included), so
with an even number of controllers losing half of them counts too.

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

    def reason(self, controllers: Collection[str], *, cut: bool = False,
               together: bool = False) -> str:
        """Why a fault with this impact was narrowed (or, ``cut``, a partition rewritten);
        ``together``: judged with the faults already in force."""
        parts = []
        if self.whole_cluster:
            parts.append("would leave every node down or cut off" if together
                         else "would cut every node off from every other" if cut
                         else "would hit every node")
        if self.quorum_majority:
            parts.append(f"would {'cut' if cut else 'take'} a majority of the "
                         f"{len(controllers)} KRaft controllers ({', '.join(controllers)}) "
                         f"{'off' if cut else 'out of'} the quorum")
        return " and ".join(parts)


def of_state(down: Collection[str], grudge: Mapping[str, Collection[str]],
             nodes: Sequence[str], controllers: Collection[str]) -> Impact:
    """The impact of ``down`` nodes (killed, paused) and the cut ``grudge`` together.

    Whole-cluster: every node is down or, under a cut, linked to no other node.
    Quorum-majority: no live controller is linked to a majority of the
    controllers (itself included), so no quorum leader can be elected or keep
    its term. With nothing down this is exactly a partition's impact, with no
    cut exactly a kill's: one rule for a fault alone and for faults together.
    """
    gone = set(down)
    cut = any(grudge.get(n) for n in nodes)
    if cut and len(nodes) > 1:
        gone |= {a for a in nodes if not any(linked(grudge, a, b) for b in nodes if b != a)}
    live = [c for c in controllers if c not in set(down)]
    need = majority(len(controllers))
    leads = any(1 + sum(linked(grudge, c, d) for d in live if d != c) >= need for c in live)
    return Impact(whole_cluster=bool(nodes) and set(nodes) <= gone,
                  quorum_majority=bool(controllers) and not leads)


def of_nodes(hit: Collection[str], nodes: Sequence[str], controllers: Collection[str]
             ) -> Impact:
    """The impact of killing, pausing (or skewing, slowing) exactly ``hit``."""
    return of_state(hit, {}, nodes, controllers)


def linked(grudge: Mapping[str, Collection[str]], a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` can still talk over TCP (neither drops the other)."""
    return b not in grudge.get(a, ()) and a not in grudge.get(b, ())


def of_grudge(grudge: Mapping[str, Collection[str]], nodes: Sequence[str],
              controllers: Collection[str]) -> Impact:
    """The impact of a partition alone.

    Whole-cluster: some link is cut and no node keeps a link to any other.
    Quorum-majority: no controller keeps links to a majority of the controllers
    (itself included), so no quorum leader can be elected or keep its term.
    """
    return of_state((), grudge, nodes, controllers)


def added(after: Impact, before: Impact) -> Impact:
    """The outcomes ``after`` has that ``before`` had not: what one more fault would cause."""
    return Impact(whole_cluster=after.whole_cluster and not before.whole_cluster,
                  quorum_majority=after.quorum_majority and not before.quorum_majority)


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
    budget = len(controllers) - majority(len(controllers))  # may be down, quorum intact
    if quorum and len(quorum) > budget:
        dropped = set(rng.sample(quorum, len(quorum) - budget))
        keep = [n for n in keep if n not in dropped]
    if nodes and set(nodes) <= set(keep):
        keep.remove(rng.choice(keep))
    return keep, {"narrowed-from": list(hit), "narrowed-because": impact.reason(controllers)}


def spare_with(hit: Sequence[str], *, down: Collection[str],
               grudge: Mapping[str, Collection[str]], nodes: Sequence[str],
               controllers: Collection[str], rng: random.Random) -> list[str]:
    """The part of ``hit`` that can go down on top of ``down`` and ``grudge`` without adding
    a whole-cluster or quorum-majority outcome the faults in force did not already have.

    Nodes already down stay (killing a paused node takes nothing more away). The
    others are tried one at a time in an order drawn from ``rng`` (drawn only
    when not all of them can go), each kept if it adds no such outcome; the
    result keeps ``hit``'s order and may be empty.
    """
    before = of_state(down, grudge, nodes, controllers)
    fresh = [n for n in hit if n not in set(down)]

    def adds(extra: Collection[str]) -> bool:
        return added(of_state({*down, *extra}, grudge, nodes, controllers), before).harmful

    if not adds(fresh):
        return list(hit)
    chosen: set[str] = set()
    for node in rng.sample(fresh, len(fresh)):
        if not adds({*chosen, node}):
            chosen.add(node)
    return [n for n in hit if n in set(down) or n in chosen]
