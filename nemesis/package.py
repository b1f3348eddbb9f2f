"""Composable fault packages, as in Jepsen's combined nemesis.

``build_package(NemesisOptions(...))`` gives one ``NemesisPackage``: a single
nemesis handling every requested fault kind, a generator that mixes their
faults (each kind alternates start and stop, ops spaced ``interval`` seconds
apart on average), and one final generator that heals everything before the
drain. Random choices in the generator come from the run's seed (pure, so a
simulation shows exactly the ops a run will issue); symbolic targets are
resolved when the fault happens, by a resolver seeded from the same seed.

After every heal the random generator issues ``await-recovery``, and the final
generator ends with one (``nemesis.recovery``): the next fault, and the drain,
wait until the cluster has recovered. The nemesis answering it is part of every
package with faults. With ``opts.time_limit`` known, a wait in the main phase
ends when the phase does (``recovery.WithinPhase``), so a cluster that does not
recover cannot stretch the phase by a whole recovery timeout.

Nothing here names a fault kind: the kinds, their ops, heals and report spans
come from ``harness.base.faults.FAULT_KINDS``, and what each kind does from its
module under ``nemesis.kinds``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from harness.base.faults import FaultKind, fault_spans, in_heal_order
from harness.gen.combinators import cycle, interleave, ns, sleep, stagger
from harness.gen.core import Context, Gen, GenLike, Rng, Step, fill_in, lift
from nemesis.compose import ComposedNemesis
from nemesis.kinds import load
from nemesis.nodes import Resolver, cluster_facts
from nemesis.protocol import Nemesis, NemesisPackage
from nemesis.recovery import AwaitAfterHeals, RecoveryNemesis, WithinPhase, await_op
from nemesis.script import schedule_gen
from nemesis.settings import NemesisOptions
from nemesis.waits import StateNemesis


@dataclass(frozen=True, slots=True)
class Draw(Gen):
    """One op made by ``make(rng)`` from the context's randomness, then done."""

    make: Callable[[Rng], dict[str, Any]]

    def op(self, ctx: Context) -> Step:
        rng, child = ctx.split()
        op = fill_in(self.make(rng), child, rng.fork(7))
        return op, (self if not isinstance(op, dict) else None)


def held(kind: FaultKind, opts: NemesisOptions) -> list[Any]:
    """One fault of ``kind``: its start (drawn at random), ``opts.min_in_force`` seconds
    in force at least, then its heal."""
    return [Draw(partial(load(kind).start_op, opts)), sleep(opts.min_in_force), kind.heal]


def fault_generator(kind: FaultKind, opts: NemesisOptions) -> Gen:
    """One kind's faults, forever: start, hold, heal, and again."""
    return cycle(held(kind, opts))


#: Up to this many nodes, two faults that each take a node away would take a majority
#: of the (at most 3) KRaft controllers, so the nemesis would withhold the second:
#: kinds then take turns one fault at a time instead of overlapping.
ONE_AT_A_TIME_NODES = 3


def one_at_a_time(kinds: Sequence[FaultKind], opts: NemesisOptions) -> Gen:
    """Each kind's fault started and healed before the next kind's starts, forever.

    On 3 nodes the interleaved schedule started a kill while a partition held
    one node away; the kill was withheld every time (it would have taken the
    quorum), so a ``partition,kill`` run never killed anything.
    """
    steps: list[Any] = []
    for kind in kinds:
        steps += held(kind, opts)
    return cycle(steps)


def final_generator(kinds: Sequence[FaultKind]) -> list[dict[str, Any]]:
    """Heal every kind in ``kinds`` once, in heal order (resume first, restart the dead
    last), then wait for the cluster to recover so the drain starts on a working one."""
    return [*(k.heal for k in in_heal_order(kinds)), await_op()]


def nemesis_for(kinds: Sequence[FaultKind], opts: NemesisOptions, *, waits: bool = False
                ) -> ComposedNemesis:
    """One nemesis handling every op of ``kinds``, ``await-recovery`` and (``waits``: the
    script has wait steps) ``await-state``, sharing one seeded resolver.

    Members (and so teardown) follow the heal order: resume, heal the network,
    reset clocks, restart the dead; the waits (nothing to tear down) last.
    """
    resolver = Resolver(opts.seed, lambda cluster: cluster_facts(cluster, opts.topics,
                                                                       opts.topic_prefix))
    members: list[Nemesis] = [load(k).make_nemesis(resolver, opts) for k in in_heal_order(kinds)]
    recovery = RecoveryNemesis(resolver, opts.recovery_timeout)
    state = [StateNemesis(resolver, recovery)] if waits else []
    return ComposedNemesis([*members, recovery, *state])


def build_package(opts: NemesisOptions) -> NemesisPackage:
    """The nemesis, its generator and its final (healing) generator for ``opts``."""
    steps = opts.steps()
    kinds = opts.kinds(steps)
    if not kinds and not steps:
        return NemesisPackage(nemesis=None)
    generator: GenLike
    if opts.schedule is not None:
        generator = schedule_gen(steps)
    else:
        # a warm-up of one interval lets clients connect and write before the first fault
        small = opts.nodes is not None and opts.nodes <= ONE_AT_A_TIME_NODES and len(kinds) > 1
        faults = (one_at_a_time(kinds, opts) if small
                  else interleave([fault_generator(k, opts) for k in kinds]))
        heals = frozenset(k.stop for k in kinds)
        generator = [sleep(opts.interval),
                     AwaitAfterHeals(stagger(opts.interval, faults), heals)]
    if opts.time_limit is not None:  # waits end with the main phase (scripted ones too)
        generator = WithinPhase(ns(opts.time_limit), lift(generator))
    return NemesisPackage(
        nemesis=nemesis_for(kinds, opts, waits=any(s.waits for s in steps)),
        generator=generator,
        final_generator=final_generator(kinds),
        fault_spans=fault_spans(k.name for k in kinds),
    )


__all__ = ["NemesisOptions", "build_package"]
