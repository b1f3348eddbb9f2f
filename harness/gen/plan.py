"""The phases of a run, as one list: main → heal → quiet → final drain.

* **main**: client ops (staggered to ``rate``, making up for ops that ran late
  by at most :data:`CATCH_UP_S`) and nemesis ops side by side, until ``time_limit_s``;
  then, on the nemesis thread, the nemesis package's final generator (end every
  fault) at once, while the last client ops complete: a heal never waits for
  clients, whose ops the interpreter bounds by their op timeout instead, so a
  fault in force at the time limit ends there (a heal behind client ops blocked on
  a paused leader would keep the pause, and those ops, going for minutes);
* **heal**: with a fault script (``script_tail_s``), the final generator as a
  phase of its own, once every main-phase op has completed (a script's last
  step is followed by its tail, so nothing is in force by then);
* **quiet**: nothing for a while, so the cluster settles (ISR catch-up, leader
  elections) before judging what it kept;
* **drain**: the workload's final generator (every client re-reads every key
  from the beginning), bounded by ``final_time_limit_s``; the runner may stop
  it earlier, once the workload's drain tracker says everything was read again.

:func:`run_phases` builds the one list both sides use. The simulator runs it as
one generator (:func:`plan_gen`, Jepsen's ``phases``). The runner runs it a
phase at a time, to know which phase it is in, each phase wrapped in
:class:`Ahead` so that, exactly as ``phases`` does, every event also reaches the
phases still to come (the drain learns every key the main phase used).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.base.history import Op
from harness.gen.combinators import (
    any_of,
    clients,
    nemesis,
    phases,
    sleep,
    stagger,
    time_limit,
    until_done,
)
from harness.gen.core import Context, Gen, GenLike, Step, lift

MAIN, HEAL, QUIET, DRAIN = "main", "heal", "quiet", "drain"
#: How far behind ``--rate`` the clients may fall and still catch up (``Stagger``): ops
#: held back by busy threads or a late wake-up are made up for, a fault's stall is not.
CATCH_UP_S = 0.1


@dataclass(frozen=True)
class Phase:
    """One phase of a run: its name, its generator, and how long it may last (None: until done)."""

    name: str
    gen: Gen
    limit_s: float | None = None


def run_phases(
    client_gen: GenLike,
    *,
    rate: float | None,
    time_limit_s: float,
    nemesis_gen: GenLike = None,
    final_nemesis: GenLike = None,
    quiet_s: float = 0.0,
    drain: GenLike = None,
    final_time_limit_s: float = 60.0,
    script_tail_s: float | None = None,
) -> tuple[Phase, ...]:
    """The phases around any workload's client generator; those with nothing to do are left out.

    ``rate``: client ops per second in total; None or 0 means as fast as clients go.
    ``script_tail_s``: the main phase also ends this long after the nemesis generator is
    done (a fault script's last step), if that is before ``time_limit_s``.
    """
    workload = lift(client_gen)
    paced = workload if not rate else stagger(1.0 / rate, workload, catch_up=CATCH_UP_S)
    scripted = script_tail_s is not None and lift(nemesis_gen) is not None
    if scripted:
        assert script_tail_s is not None
        main = time_limit(time_limit_s, until_done(nemesis(nemesis_gen), clients(paced),
                                                   tail=script_tail_s))
    else:
        then = [g for g in (time_limit(time_limit_s, nemesis_gen) if lift(nemesis_gen)
                            else None, lift(final_nemesis)) if g is not None]
        main = any_of(time_limit(time_limit_s, clients(paced)),
                      nemesis(then) if then else None)
    plan = [Phase(MAIN, main, time_limit_s)]
    if scripted and lift(final_nemesis) is not None:
        plan.append(Phase(HEAL, nemesis(final_nemesis)))
    if quiet_s > 0:
        plan.append(Phase(QUIET, sleep(quiet_s), quiet_s))
    if lift(drain) is not None:
        plan.append(Phase(DRAIN, clients(time_limit(final_time_limit_s, drain)),
                          final_time_limit_s))
    return tuple(plan)


def plan_gen(plan: Sequence[Phase]) -> Gen:
    """The whole plan as one generator: each phase once the previous one is done and idle."""
    return phases(*(p.gen for p in plan))


@dataclass(frozen=True, slots=True)
class Ahead(Gen):
    """One phase of a plan, with the phases still to come listening.

    Ops come from ``current`` alone; every event updates ``current`` *and*
    ``later``, as ``phases`` would. The runner hands this to the interpreter
    for one phase, takes ``later`` from the state it ends in, and starts the
    next phase from it: the phase-at-a-time run then sees what one ``phases``
    generator would (each phase starts once the previous is done and no op is
    in flight, which is what ``phases``' synchronisation waits for).
    """

    current: Gen | None
    later: tuple[Gen | None, ...] = ()

    @staticmethod
    def first(plan: Sequence[Phase]) -> Ahead:
        gens = [p.gen for p in plan]
        return Ahead(gens[0] if gens else None, tuple(gens[1:]))

    def next(self) -> Ahead:
        """The next phase, with the ones after it listening."""
        return Ahead(self.later[0] if self.later else None, self.later[1:])

    def op(self, ctx: Context) -> Step:
        if self.current is None:
            return None
        step = self.current.op(ctx)
        if step is None:
            return None
        x, nxt = step
        return x, self if nxt is self.current else Ahead(nxt, self.later)

    def update(self, ctx: Context, event: Op) -> Gen:
        current = None if self.current is None else self.current.update(ctx, event)
        later = tuple(None if g is None else g.update(ctx, event) for g in self.later)
        if current is self.current and all(a is b for a, b in zip(later, self.later,
                                                                   strict=True)):
            return self  # nobody changed (most events): no new state
        return Ahead(current, later)
