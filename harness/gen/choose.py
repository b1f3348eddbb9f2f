"""Combinators that decide *what* runs: ``limit``, ``time_limit``, ``mix``, ``interleave``,
``any_of``, ``until_done``. The constructor functions (seconds, plain values) are in
``combinators``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.base.history import Op
from harness.gen.core import (
    Context,
    Gen,
    Pending,
    Step,
    min_wake,
    soonest,
)


def _updated(gens: tuple[Gen, ...], ctx: Context, event: Op) -> tuple[Gen, ...]:
    """Each of ``gens`` updated with ``event``; ``gens`` itself when none changed, so the
    combinator can stay as it is (most events change nothing but the workload's state)."""
    new = tuple(g.update(ctx, event) for g in gens)
    return gens if all(a is b for a, b in zip(new, gens, strict=True)) else new


def _child(ctx: Context, salt: int) -> Context:
    """The context a combinator hands to its ``salt``-th child: independent randomness."""
    return ctx.with_rng(ctx.rng.fork(salt + 3))


@dataclass(frozen=True, slots=True)
class Limit(Gen):
    """At most ``remaining`` ops from ``gen``."""

    remaining: int
    gen: Gen | None

    def op(self, ctx: Context) -> Step:
        if self.remaining <= 0 or self.gen is None:
            return None
        step = self.gen.op(ctx)
        if step is None:
            return None
        x, nxt = step
        used = 0 if isinstance(x, Pending) else 1
        if not used and nxt is self.gen:
            return x, self
        return x, Limit(self.remaining - used, nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        gen = self.gen if self.gen is None else self.gen.update(ctx, event)
        return self if gen is self.gen else Limit(self.remaining, gen)


@dataclass(frozen=True, slots=True)
class TimeLimit(Gen):
    """Ops of ``gen`` whose time is before ``cutoff``: ``dt`` ns after it was first asked.

    It ends at the cutoff, not before. When the soonest op ``gen`` offers lies at or past
    the cutoff, it answers pending until then, where Jepsen's ``time-limit`` ends at once:
    behind an ``any_of``, that op is the nemesis's next fault whenever every client thread
    is busy, and ``gen`` may still offer client ops before the cutoff once one is free. The
    interpreter asks no more after an end, so ending there would cut main phases short by
    up to a fault interval (46 s of a 60 s run, measured on 4.1.2).
    """

    dt: int
    gen: Gen | None
    cutoff: int | None = None

    def op(self, ctx: Context) -> Step:
        cutoff = ctx.time + self.dt if self.cutoff is None else self.cutoff
        if self.gen is None or ctx.time >= cutoff:
            return None
        step = self.gen.op(ctx)
        if step is None:
            return None
        x, nxt = step
        same = nxt is self.gen and cutoff == self.cutoff
        if isinstance(x, Pending):
            wake = cutoff if x.wake is None else min(x.wake, cutoff)
            return Pending(wake), self if same else TimeLimit(self.dt, nxt, cutoff)
        if x["time"] >= cutoff:  # nothing before the cutoff yet: ask again, by then at last
            return Pending(cutoff), self if cutoff == self.cutoff else TimeLimit(
                self.dt, self.gen, cutoff)
        return x, self if same else TimeLimit(self.dt, nxt, cutoff)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.gen is None:
            return self
        gen = self.gen.update(ctx, event)
        return self if gen is self.gen else TimeLimit(self.dt, gen, self.cutoff)


@dataclass(frozen=True, slots=True)
class Mix(Gen):
    """A random generator per op, drawn by weight; exhausted ones drop out.

    The draw for the next op is made when this op is returned and kept while
    the chosen generator is pending (as in Jepsen), so a generator that is
    often pending still gets its share.
    """

    gens: tuple[Gen, ...]
    weights: tuple[float, ...]
    chosen: int | None = None

    def op(self, ctx: Context) -> Step:
        rng, child = ctx.split()
        gens, weights, i = list(self.gens), list(self.weights), self.chosen
        while gens:
            if i is None:
                i, rng = rng.weighted(weights)
            step = gens[i].op(child)
            x, nxt = (None, None) if step is None else step
            if x is None or (nxt is None and isinstance(x, Pending)):
                del gens[i], weights[i]
                i = None
                continue
            if isinstance(x, Pending):
                assert nxt is not None
                gens[i] = nxt
                if i == self.chosen and len(gens) == len(self.gens) and nxt is self.gens[i]:
                    return x, self  # the same draw, waiting as it was
                return x, Mix(tuple(gens), tuple(weights), i)
            if nxt is None:
                del gens[i], weights[i]
            else:
                gens[i] = nxt
            following = rng.weighted(weights)[0] if gens else None
            return x, Mix(tuple(gens), tuple(weights), following)
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        gens = _updated(self.gens, ctx, event)
        return self if gens is self.gens else Mix(gens, self.weights, self.chosen)


@dataclass(frozen=True, slots=True)
class Interleave(Gen):
    """One op from each generator in turn; exhausted ones drop out.

    Why not ``mix``: for nemesis packages, a random draw can pick one kind many
    times in a row and leave another kind's fault in force for the whole run.
    In turn, each kind's start/heal cycle advances at the same pace: with k
    kinds a fault is healed k ops after it started, while faults of different
    kinds still overlap. A pending generator keeps its turn, as in ``Mix``.
    """

    gens: tuple[Gen, ...]
    turn: int = 0

    def op(self, ctx: Context) -> Step:
        _, child = ctx.split()
        gens, i = list(self.gens), self.turn
        while gens:
            i %= len(gens)
            step = gens[i].op(child)
            x, nxt = (None, None) if step is None else step
            if x is None or (nxt is None and isinstance(x, Pending)):
                del gens[i]
                continue
            if isinstance(x, Pending):
                assert nxt is not None
                gens[i] = nxt
                if i == self.turn and len(gens) == len(self.gens) and nxt is self.gens[i]:
                    return x, self  # the same turn, waiting as it was
                return x, Interleave(tuple(gens), i)
            if nxt is None:
                del gens[i]  # the next generator now sits at i
            else:
                gens[i] = nxt
                i += 1
            return x, Interleave(tuple(gens), i)
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        gens = _updated(self.gens, ctx, event)
        return self if gens is self.gens else Interleave(gens, self.turn)


@dataclass(frozen=True, slots=True)
class AnyOf(Gen):
    """Whichever generator offers the soonest op; done when all are."""

    gens: tuple[Gen, ...]

    def op(self, ctx: Context) -> Step:
        kept: list[Gen | None] = list(self.gens)
        best: tuple[int, Op, Gen | None] | None = None
        wakes: list[int | None] = []
        for i, g in enumerate(self.gens):
            step = g.op(_child(ctx, i))
            if step is None:
                kept[i] = None
                continue
            x, nxt = step
            if isinstance(x, Pending):
                kept[i] = nxt  # waiting has state: keep it
                wakes.append(x.wake)
            elif best is None or soonest(x, best[1]):
                best = (i, x, nxt)
        if best is not None:
            kept[best[0]] = best[2]
        if all(a is b for a, b in zip(kept, self.gens, strict=True)):
            rest = self  # every child stayed as it was (all pending): no new state
        else:
            rest = AnyOf(tuple(g for g in kept if g is not None))
        if best is not None:
            return best[1], rest
        if rest.gens:
            return min_wake(wakes), rest
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        gens = _updated(self.gens, ctx, event)
        return self if gens is self.gens else AnyOf(gens)


@dataclass(frozen=True, slots=True)
class Until(Gen):
    """The ops of ``lead`` and ``rest``, soonest first (as :class:`AnyOf`), until ``tail``
    ns after ``lead`` is done: a fault script and the workload, the run's main phase
    ending a little after the script's last step instead of at a time limit sized for
    the slowest cluster.

    ``lead`` is done once it has no more ops *and* its last op has completed: a script's
    last step is often a wait (``await-state`` until recovered) that takes longer than
    the tail, and a cutoff counted from that step's invocation ended the main phase
    before the cluster came back, so nothing was written after recovery (a 4.1
    power-loss-all run: recovery took 42 s, the tail 20 s). ``busy``: the processes
    running a ``lead`` op; ``cutoff`` is set when ``lead`` is found done with none.

    The children get the contexts ``AnyOf((rest, lead))`` would give them, so with a
    ``lead`` that never ends the ops are the same as ``any_of(rest, lead)``'s.
    """

    lead: Gen | None
    rest: Gen | None
    tail: int
    cutoff: int | None = None
    busy: frozenset[object] = frozenset()

    def op(self, ctx: Context) -> Step:
        if self.lead is None:
            return self._rest_op(ctx)
        lead_step = self.lead.op(_child(ctx, 1))
        if lead_step is None:
            return self._lead_done(ctx, self.rest, self.busy).op(ctx)
        rest_step = None if self.rest is None else self.rest.op(_child(ctx, 0))
        lead_x, lead_next = lead_step
        rest_x, rest_next = (None, None) if rest_step is None else rest_step
        # As AnyOf: a child that waits keeps its new state, one that offered an op not
        # taken keeps its old one; the soonest op wins, the rest on a tie.
        lead = lead_next if isinstance(lead_x, Pending) else self.lead
        rest = rest_next if isinstance(rest_x, Pending) or rest_x is None else self.rest
        busy = self.busy
        x: Op | Pending
        if rest_x is not None and not isinstance(rest_x, Pending) and not soonest(lead_x, rest_x):
            x, rest = rest_x, rest_next
        elif not isinstance(lead_x, Pending):
            x, lead = lead_x, lead_next
            busy = busy | {lead_x["process"]}
        else:
            x = min_wake([lead_x.wake, rest_x.wake if isinstance(rest_x, Pending) else None])
        if lead is None:
            return x, self._lead_done(ctx, rest, busy)
        if lead is self.lead and rest is self.rest and busy is self.busy:
            return x, self
        return x, Until(lead, rest, self.tail, None, busy)

    def _lead_done(self, ctx: Context, rest: Gen | None, busy: frozenset[object]) -> Until:
        """``lead`` has no more ops: the cutoff starts now if none of its ops is running."""
        return Until(None, rest, self.tail, None if busy else ctx.time + self.tail, busy)

    def _rest_op(self, ctx: Context) -> Step:
        """Once ``lead`` has no more ops: ``rest``'s, without limit while its last op runs,
        then before ``cutoff``."""
        if self.rest is None:
            return None
        if self.cutoff is None:
            if not self.busy:
                return None
            step = self.rest.op(_child(ctx, 0))
            if step is None:
                return None
            x, nxt = step
            return x, self if nxt is self.rest else Until(None, nxt, self.tail, None, self.busy)
        step = TimeLimit(0, self.rest, self.cutoff).op(_child(ctx, 0))
        if step is None:
            return None
        x, limited = step
        assert isinstance(limited, TimeLimit)
        return x, self if limited.gen is self.rest else Until(None, limited.gen, self.tail,
                                                              self.cutoff)

    def update(self, ctx: Context, event: Op) -> Gen:
        lead = None if self.lead is None else self.lead.update(ctx, event)
        rest = None if self.rest is None else self.rest.update(ctx, event)
        busy, cutoff = self.busy, self.cutoff
        if busy and event["type"] != "invoke" and event["process"] in busy:
            busy = busy - {event["process"]}
            if lead is None and not busy and cutoff is None:
                cutoff = ctx.time + self.tail
        if lead is self.lead and rest is self.rest and busy is self.busy:
            return self
        return Until(lead, rest, self.tail, cutoff, busy)
