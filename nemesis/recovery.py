"""Waiting for the cluster to recover before the next fault: the ``await-recovery`` op.

After a heal, a Kafka cluster needs time: restarted brokers register again, the
KRaft quorum elects a leader, partitions elect theirs. Measured on real 3-node
clusters, a fault arriving before that kept the cluster down from the first
fault to the end of the run. So after every heal the random nemesis issues
``{"f": "await-recovery"}``, and the final (healing) generator ends with one,
so the drain starts on a recovered cluster.

The generator stays pure: it does not sleep or look at the cluster. The
nemesis thread runs one op at a time and the generator moves on only when an
op completes, so while ``RecoveryNemesis`` polls, no fault can start.
*Recovered* means every node is a registered broker (the metadata lists it)
that answers a metadata request sent to it alone, and every workload partition
(the resolver's ``Facts``) has a leader that answers, except
what a fault still in force keeps away (the resolver's ledger,
``nemesis.in_force``): a killed, paused or cut-off broker cannot register, and
a partition with no in-sync replica up (or no KRaft quorum at all) cannot get
a leader, so waiting for them would only run out the clock. Those are listed
under ``"not-waited-for": {"broker n1": "killed", ...}``. The op completes
with ``{"recovered": true, "seconds": 3.2, "waited-for": [...], "polls": 4}``
(``waited-for``: what was missing at the first poll), or after ``timeout_s``
with ``"recovered": false`` and ``still-missing``.

A wait inside the main phase must not outlast it: with the phase's length
known (``NemesisOptions.time_limit``), ``WithinPhase`` gives each
``await-recovery`` (and a script's ``await-state``) the seconds left
(``{"within-s": 12.5}``, computed from the generator's own time, so it stays
pure and simulable), and the wait gives up then (``"cut-short": true``). The
final generator's wait has no such bound.

``await-recovery`` is not a fault kind: it is not in ``harness.base.faults``,
starts and stops no fault, and reports that pair fault ops by the registry's
spans pass over it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from harness.base.history import Op
from harness.base.waits import AWAIT_RECOVERY, AWAIT_STATE
from harness.gen.core import Context, Gen, Pending, Step, fill_in
from nemesis.in_force import InForce
from nemesis.nodes import Resolver, completion
from nemesis.polling import POLL_S, Poller, bounded
from nemesis.targets import Facts

if TYPE_CHECKING:
    from cluster import Cluster

AWAIT = AWAIT_RECOVERY


def await_op() -> dict[str, Any]:
    """A fresh ``await-recovery`` op template (ops get filled in)."""
    return {"f": AWAIT, "value": None}


def missing(facts: Facts, nodes: list[str], kept: Mapping[str, str] | None = None) -> list[str]:
    """What stops the cluster from counting as recovered; empty when it has.

    ``kept``: node -> why a fault in force keeps it away (not waited for).
    """
    return look(facts, nodes, kept or {})[0]


def look(facts: Facts, nodes: list[str], kept: Mapping[str, str], no_quorum: bool = False
         ) -> tuple[list[str], dict[str, str]]:
    """(what is missing, what is not waited for and why).

    A metadata request that fails is itself missing (the cluster cannot answer).
    Brokers in ``kept`` are not waited for, nor partitions with no leader whose
    in-sync replicas are all in ``kept``, nor any leaderless partition when the
    KRaft quorum has no majority (``no_quorum``). A registered broker is asked
    directly (``Facts.answering``) whether it serves: a broker whose power was cut
    stays registered, and the leader of its partitions, until its session expires
    (measured on 4.1.2 and 4.4.0: a wait after a power-on held in 0.2-3.3 s on such
    metadata, while the broker was still starting). An empty ISR (Kafka 4's eligible
    leader replicas, KIP-966: the ISR emptied below ``min.insync.replicas``, the
    candidates kept in an ELR that metadata does not return) is excused when any
    replica is kept away: an ELR member that is up would already lead. Measured on
    5-node 4.1.2: a partition of n3/n4/n5 with n4 killed and n5 paused was waited
    for 60 s, until the wait ran out, because n3 (up, not eligible) looked like a
    candidate.
    """
    out: list[str] = []
    excused = {f"broker {n}": why for n, why in kept.items()}
    silent: set[str] = set()  # registered, but its broker does not answer
    if facts.brokers is not None:
        try:
            registered = set(facts.brokers())
        except Exception as err:  # unreachable cluster: not recovered, say why
            return [f"metadata: {type(err).__name__}: {err}"], excused
        out += [f"broker {n}" for n in nodes if n not in registered and n not in kept]
        asked = [n for n in nodes if n in registered and n not in kept]
        if facts.answering is not None and asked:
            silent = set(asked) - set(facts.answering(asked))
            out += [f"broker {n} (registered, does not answer)" for n in asked if n in silent]
    try:
        parts = facts.partitions()
    except Exception as err:
        return [*out, f"partitions: {type(err).__name__}: {err}"], excused
    for key, p in sorted(parts.items()):
        if p.leader in silent:
            out.append(f"leader of {key} ({p.leader}, which does not answer)")
        if p.leader is not None:
            continue
        eligible = p.isr or p.replicas
        if no_quorum:
            excused[f"leader of {key}"] = "the KRaft quorum has no majority"
        elif eligible and all(r in kept for r in eligible):
            excused[f"leader of {key}"] = "no in-sync replica is up (" + ", ".join(
                f"{r} {kept[r]}" for r in eligible) + ")"
        elif not p.isr and any(r in kept for r in p.replicas):
            excused[f"leader of {key}"] = "its ISR is empty (KIP-966 keeps the last in-sync " \
                "replicas as eligible leaders, which metadata does not show) and " + ", ".join(
                    f"{r} {kept[r]}" for r in p.replicas if r in kept)
        else:
            out.append(f"leader of {key}")
    return out, excused


class RecoveryNemesis:
    """Handles ``await-recovery``: polls the cluster until it has recovered or time is up.

    ``clock`` and ``sleep`` are injectable so tests run in no time; the loop is
    ``nemesis.polling``'s, shared with the script's ``await-state``.
    """

    def __init__(
        self,
        resolver: Resolver,
        timeout_s: float = 60.0,
        *,
        poll_s: float = POLL_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.resolver = resolver
        self.timeout_s = timeout_s
        self.poller = Poller(poll_s, clock, sleep)

    def fs(self) -> frozenset[str]:
        return frozenset({AWAIT})

    def setup(self, cluster: Cluster) -> None:
        """Nothing to prepare: it only reads metadata."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        timeout, cut = bounded(self.timeout_s, op.get("value"))
        return completion(self.wait(cluster, timeout, cut_short=cut))

    def wait(self, cluster: Cluster, timeout: float, *, cut_short: bool = False
             ) -> dict[str, Any]:
        """Poll until recovered or ``timeout`` s; the completion's value (``recovered``, ...).

        ``cut_short``: ``timeout`` is the main phase's end, not the wait's own.
        """
        nodes = list(cluster.nodes)
        controllers = cluster.spec.controller_nodes
        state: InForce = self.resolver.in_force.state  # no fault changes while this waits
        kept = state.kept_down(nodes, controllers)
        no_quorum = state.impact(nodes, controllers).quorum_majority
        polled = self.poller.until(
            lambda: look(self.resolver.facts(cluster), nodes, kept, no_quorum),
            lambda seen: not seen[0], timeout)
        now_missing, excused = polled.last
        value: dict[str, Any] = {"recovered": polled.held, "seconds": polled.seconds,
                                 "waited-for": polled.first[0], "polls": polled.polls}
        if excused:
            value["not-waited-for"] = excused
        if not polled.held:
            value.update({"still-missing": now_missing, "timeout-s": timeout})
            if cut_short:
                value["cut-short"] = True  # the main phase ends: stop waiting with it
        return value

    def teardown(self, cluster: Cluster) -> None:
        """Nothing to heal."""


@dataclass(frozen=True, slots=True)
class AwaitAfterHeals(Gen):
    """``gen``, with an ``await-recovery`` after each op whose ``f`` is in ``heals``,
    unless ``gen``'s next op is another heal: then after the last heal of the run.

    The await is not staggered: it is issued as soon as the nemesis thread is
    free (when the heal completed), and the next op of ``gen`` waits for it to
    complete, however long the cluster takes. So no fault starts before the
    cluster has recovered; but a heal must not wait for it either. Overlapping
    faults heal one after another, and a wait between two heals waits with the
    later fault still in force, which may be what keeps the cluster from
    recovering: on 5 nodes (4.1.2) a clock freeze of the active
    controller kept two brokers unregistered after a partition healed, the wait
    ran out after 60 s, and the freeze, whose heal came after the wait, stayed
    in force for 156 s of a 150 s main phase.
    """

    gen: Gen | None
    heals: frozenset[str]
    owed: bool = False

    def op(self, ctx: Context) -> Step:
        if self.gen is None and not self.owed:
            return None
        step = None if self.gen is None else self.gen.op(ctx)
        if self.owed and not _heal_next(step, ctx, self.heals):
            op = fill_in(await_op(), ctx)
            if isinstance(op, Pending):
                return op, self
            return op, replace(self, owed=False)
        if step is None:
            return None
        x, nxt = step
        if isinstance(x, Pending):
            return x, replace(self, gen=nxt)
        return x, AwaitAfterHeals(nxt, self.heals, owed=x.get("f") in self.heals)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if self.gen is None else replace(self, gen=self.gen.update(ctx, event))


#: How many timed waits (a fault's hold, a stagger) ``_heal_next`` looks past.
_LOOK_AHEAD = 4


def _heal_next(step: Step, ctx: Context, heals: frozenset[str]) -> bool:
    """Whether the next op ``step`` leads to is one of ``heals``.

    A kind's next op often waits first (its hold, ``sleep``, starts when its turn
    comes), so a pending answer with a wake time is looked past: the generator is
    pure, and asked again as of that time it says what comes then. A pending answer
    without a wake time (a busy thread) is not.
    """
    for _ in range(_LOOK_AHEAD):
        if step is None:
            return False
        x, nxt = step
        if not isinstance(x, Pending):
            return x.get("f") in heals
        if x.wake is None or x.wake <= ctx.time or nxt is None:
            return False
        ctx = replace(ctx, time=x.wake)
        step = nxt.op(ctx)
    return False


@dataclass(frozen=True, slots=True)
class WithinPhase(Gen):
    """``gen``, each wait it issues (``await-recovery``, a script's ``await-state``) bounded
    by the end of the phase.

    The phase lasts ``dt`` ns from when this is first asked (as ``time_limit``,
    which wraps the main phase, counts it); each wait gets ``{"within-s": ...}``,
    the seconds from its own time to then. Pure: it reads only the context's time.
    """

    dt: int
    gen: Gen | None
    end: int | None = None

    def op(self, ctx: Context) -> Step:
        end = ctx.time + self.dt if self.end is None else self.end
        if self.gen is None:
            return None
        step = self.gen.op(ctx)
        if step is None:
            return None
        x, nxt = step
        if not isinstance(x, Pending) and x.get("f") in (AWAIT, AWAIT_STATE):
            asked = x.get("value")
            within = {"within-s": round(max(0, end - x["time"]) / 1e9, 3)}
            x = {**x, "value": {**asked, **within} if isinstance(asked, Mapping) else within}
        return x, WithinPhase(self.dt, nxt, end)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if self.gen is None else replace(self, gen=self.gen.update(ctx, event))
