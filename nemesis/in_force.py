"""What the faults in force take away, so that overlapping faults never add up to a dead cluster.

``nemesis.impact`` narrows each fault on its own, but faults of different
kinds overlap. Seen on a real 3-node run: a partition isolated n1, a kill of
"the leader" then killed n1, and a pause of "the leader" paused n2. Each
alone spared the quorum; together they took 2 of the 3 controllers, and the
rest of the run tested nothing.

So the run's ``Resolver``, which every kind's nemesis shares, keeps a
``Ledger`` of what is in force, and which heal ends it:

* ``killed``: nodes a kill took down, until ``start`` (or teardown) brings them back;
* ``paused``: nodes a pause stopped, until ``resume``;
* ``grudge``: the cut in force, until ``stop-partition`` (``start-partition``
  replaces it).

Clock and packet faults take no node away (``nemesis.impact`` never counts
them: a skewed or slowed broker still votes and serves), so they are not kept.

A kill, pause or partition whose target is not explicit
(``targets.is_explicit``) is narrowed against the union
(``impact.of_state``): it may not add a whole-cluster or quorum-majority
outcome the faults in force did not already have. If nothing is left, the
fault is *withheld*: nothing is done and its completion says why
(``"withheld": true, "because": ...``). Explicit targets are applied as asked
and record what the union then is. ``await-recovery`` waits only for what can
recover (``kept_down``).

``InForce`` is a frozen value; the ``Ledger`` swaps it under a lock, and
``Ledger.decide`` makes a decision and claims what it took in one step, so two
threads can never both take the last node the quorum could spare.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from nemesis.grudge import majority
from nemesis.impact import Impact, added, linked, of_state, spare, spare_with

T = TypeVar("T")
#: What a fault that takes nodes down does to them.
How = Literal["killed", "paused"]
VERB: Mapping[How, str] = {"killed": "killing", "paused": "pausing"}


def names(nodes: Iterable[str], order: Sequence[str]) -> str:
    """``n1, n3`` in node order."""
    rank = {n: i for i, n in enumerate(order)}
    return ", ".join(sorted(nodes, key=lambda n: (rank.get(n, len(rank)), n)))


@dataclass(frozen=True)
class InForce:
    """The faults in force that take nodes away: a value, replaced on every change."""

    killed: frozenset[str] = frozenset()
    paused: frozenset[str] = frozenset()
    #: node -> the nodes whose packets it drops (``nemesis.grudge``); never mutated
    grudge: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def down(self) -> frozenset[str]:
        return self.killed | self.paused

    @property
    def empty(self) -> bool:
        return not self.down and not any(self.grudge.values())

    def impact(self, nodes: Sequence[str], controllers: Collection[str], *,
               also: Collection[str] = (), grudge: Mapping[str, Collection[str]] | None = None
               ) -> Impact:
        """What the faults in force take away, with ``also`` down and ``grudge`` if given."""
        cut = self.grudge if grudge is None else grudge
        return of_state(self.down | set(also), cut, nodes, controllers)

    # -- changes ------------------------------------------------------------------------

    def claim(self, how: How, nodes: Collection[str]) -> InForce:
        """``nodes`` taken down, before the fault is applied (``settle`` corrects it)."""
        return replace(self, **{how: getattr(self, how) | frozenset(nodes)})

    def settle(self, how: How, claimed: Collection[str], done: Collection[str]) -> InForce:
        """After the fault: of the ``claimed`` nodes only those ``done`` (hit, or found so
        already) stay; a killed node is no longer counted as paused."""
        out = replace(self, **{how: getattr(self, how) - (frozenset(claimed) - set(done))})
        return replace(out, paused=out.paused - set(done)) if how == "killed" else out

    def healed(self, how: How, nodes: Collection[str]) -> InForce:
        """``start``/``resume`` brought ``nodes`` back."""
        return replace(self, **{how: getattr(self, how) - set(nodes)})

    def cut(self, grudge: Mapping[str, Collection[str]]) -> InForce:
        """A new partition replaces the one in force."""
        return replace(self, grudge={n: frozenset(v) for n, v in grudge.items() if v})

    def uncut(self, nodes: Collection[str]) -> InForce:
        """``nodes`` flushed their rules: they drop nothing any more."""
        return replace(self, grudge={n: v for n, v in self.grudge.items() if n not in nodes})

    # -- reading --------------------------------------------------------------------------

    def cut_off(self, nodes: Sequence[str], controllers: Collection[str]) -> list[str]:
        """Live nodes the cut in force keeps from working, in node order.

        KRaft: a node linked to no live controller that could lead the quorum (one
        linked to a majority of the controllers, itself included): its broker cannot
        register. ZooKeeper mode: a node that hears from fewer than a majority of
        the nodes, itself included.
        """
        if not any(self.grudge.get(n) for n in nodes):
            return []
        live = [n for n in nodes if n not in self.down]
        g = self.grudge
        if controllers:
            voters = [c for c in controllers if c in live]
            need = majority(len(controllers))
            leads = [c for c in voters
                     if 1 + sum(linked(g, c, d) for d in voters if d != c) >= need]
            return [n for n in live if not any(n == c or linked(g, n, c) for c in leads)]
        need = majority(len(nodes))
        return [n for n in live if 1 + sum(linked(g, n, m) for m in live if m != n) < need]

    def kept_down(self, nodes: Sequence[str], controllers: Collection[str]) -> dict[str, str]:
        """Node -> why a fault in force keeps its broker away: killed, paused, cut off."""
        out = {n: "killed" for n in nodes if n in self.killed}
        out.update({n: "paused" for n in nodes if n in self.paused and n not in out})
        out.update({n: "cut off" for n in self.cut_off(nodes, controllers)})
        return dict(sorted(out.items(), key=lambda kv: list(nodes).index(kv[0])))

    def describe(self, nodes: Sequence[str], *, partition: bool = True) -> str:
        """What is in force, for a ``because``: ``n1 killed and n2 paused``."""
        parts = []
        if self.killed:
            parts.append(f"{names(self.killed, nodes)} killed")
        if self.paused - self.killed:
            parts.append(f"{names(self.paused - self.killed, nodes)} paused")
        pairs = [f"{a}-{b}" for i, a in enumerate(nodes) for b in nodes[i + 1:]
                 if not linked(self.grudge, a, b)]
        if partition and pairs:
            parts.append(f"the partition in force (cut {', '.join(pairs)})")
        return " and ".join(parts) or "nothing in force"


def narrow_down(hit: Sequence[str], state: InForce, nodes: Sequence[str],
                controllers: Collection[str], rng: random.Random, *, explicit: bool, how: How
                ) -> tuple[list[str], dict[str, Any]]:
    """The nodes of ``hit`` to kill or pause, and what the completion records about them.

    Explicit targets are taken as asked. Others are narrowed: with nothing in
    force exactly as ``impact.spare`` always did (so a seed replays the same
    choices), otherwise against the union (``impact.spare_with``). Nothing left of
    a non-empty ``hit``: ``"withheld": true`` and ``"because"``. Either way the
    record says what the union then is (``whole-cluster``, ``quorum-majority``).
    """
    chosen: list[str] = list(hit)
    record: dict[str, Any] = {}
    if not explicit and state.empty:
        chosen, record = spare(hit, nodes, controllers, rng)
    elif not explicit:
        chosen = spare_with(hit, down=state.down, grudge=state.grudge, nodes=nodes,
                            controllers=controllers, rng=rng)
        if chosen != list(hit):
            fresh = [n for n in hit if n not in state.down]
            more = added(state.impact(nodes, controllers, also=hit),
                         state.impact(nodes, controllers))
            record = {"narrowed-from": list(hit), "narrowed-because": (
                f"with {state.describe(nodes)}, {VERB[how]} {names(fresh, nodes)} "
                f"{more.reason(controllers, together=True)}")}
    if hit and not chosen:
        record = {"narrowed-from": record["narrowed-from"], "withheld": True,
                  "because": record["narrowed-because"]}
    record.update(state.impact(nodes, controllers, also=chosen).record())
    return chosen, record


class Ledger:
    """The ``InForce`` of one run, safe to read and change from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = InForce()

    @property
    def state(self) -> InForce:
        with self._lock:
            return self._state

    def decide(self, fn: Callable[[InForce], tuple[T, InForce]]) -> T:
        """Run ``fn`` on the state in force and install the state it returns, atomically.

        If ``fn`` raises, nothing changes.
        """
        with self._lock:
            result, self._state = fn(self._state)
            return result

    def update(self, fn: Callable[[InForce], InForce]) -> InForce:
        """Replace the state by ``fn(state)``, atomically; returns the new state."""
        with self._lock:
            self._state = fn(self._state)
            return self._state
