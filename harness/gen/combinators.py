"""Jepsen's core combinators, as immutable values.

Each wraps one or more generators and changes *what* they may run (``limit``,
``time_limit``, ``mix``, ``interleave``), *when* (``stagger``, ``sleep``, ``phases``) or *where*
(``clients``, ``nemesis``, ``each_thread``). Times given to the constructor
functions are seconds; inside, everything is integer nanoseconds.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.base.history import NEMESIS, Op
from harness.gen.core import (
    PENDING,
    Context,
    Gen,
    GenLike,
    Pending,
    Seq,
    Step,
    Thread,
    lift,
    min_wake,
    soonest,
)

NS = 1_000_000_000


def ns(seconds: float) -> int:
    """Seconds → integer nanoseconds."""
    return round(seconds * NS)


def _child(ctx: Context, salt: int) -> Context:
    """The context a combinator hands to its ``salt``-th child: independent randomness."""
    return replace(ctx, rng=ctx.rng.fork(salt + 3))


def _only(thread: Thread) -> Callable[[Thread], bool]:
    return lambda t: t == thread


def _thread_salt(thread: Thread) -> int:
    return thread if isinstance(thread, int) else zlib.crc32(str(thread).encode())


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
        return x, Limit(self.remaining - used, nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if self.gen is None else Limit(self.remaining, self.gen.update(ctx, event))


@dataclass(frozen=True, slots=True)
class TimeLimit(Gen):
    """Ops of ``gen`` whose time is before ``cutoff``: ``dt`` ns after it was first asked."""

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
        if isinstance(x, Pending):
            wake = cutoff if x.wake is None else min(x.wake, cutoff)
            return Pending(wake), TimeLimit(self.dt, nxt, cutoff)
        if x["time"] >= cutoff:
            return None
        return x, TimeLimit(self.dt, nxt, cutoff)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.gen is None:
            return self
        return TimeLimit(self.dt, self.gen.update(ctx, event), self.cutoff)


@dataclass(frozen=True, slots=True)
class Stagger(Gen):
    """Delays ops so consecutive ones are uniformly 0 to ``span`` ns apart (mean span/2).

    The spacing is across *all* threads, so ``stagger(1/rate)`` gives ``rate``
    ops per second in total, as long as a thread is free when an op is due.
    """

    span: int
    gen: Gen | None
    next_time: int | None = None

    def op(self, ctx: Context) -> Step:
        if self.gen is None:
            return None
        rng, child = ctx.split()
        step = self.gen.op(child)
        if step is None:
            return None
        x, nxt = step
        if isinstance(x, Pending):
            return x, Stagger(self.span, nxt, self.next_time)
        due = ctx.time if self.next_time is None else self.next_time
        if x["time"] < due:
            x = {**x, "time": due}
        gap = rng.below(self.span)[0] if self.span > 0 else 0
        return x, Stagger(self.span, nxt, x["time"] + gap)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.gen is None:
            return self
        return Stagger(self.span, self.gen.update(ctx, event), self.next_time)


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
                return x, Mix(tuple(gens), tuple(weights), i)
            if nxt is None:
                del gens[i], weights[i]
            else:
                gens[i] = nxt
            following = rng.weighted(weights)[0] if gens else None
            return x, Mix(tuple(gens), tuple(weights), following)
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        return replace(self, gens=tuple(g.update(ctx, event) for g in self.gens))


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
                return x, Interleave(tuple(gens), i)
            if nxt is None:
                del gens[i]  # the next generator now sits at i
            else:
                gens[i] = nxt
                i += 1
            return x, Interleave(tuple(gens), i)
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        return replace(self, gens=tuple(g.update(ctx, event) for g in self.gens))


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
        rest = AnyOf(tuple(g for g in kept if g is not None))
        if best is not None:
            return best[1], rest
        if rest.gens:
            return min_wake(wakes), rest
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        return AnyOf(tuple(g.update(ctx, event) for g in self.gens))


@dataclass(frozen=True, slots=True)
class OnThreads(Gen):
    """``gen`` may only use threads matching ``pred``, and hears only their events."""

    pred: Callable[[Thread], bool]
    gen: Gen | None

    def op(self, ctx: Context) -> Step:
        if self.gen is None:
            return None
        step = self.gen.op(ctx.restrict(self.pred))
        if step is None:
            return None
        x, nxt = step
        return x, OnThreads(self.pred, nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        thread = ctx.thread_of(event.get("process"))
        if self.gen is None or thread is None or not self.pred(thread):
            return self
        return OnThreads(self.pred, self.gen.update(ctx, event))


def is_client(thread: Thread) -> bool:
    return thread != NEMESIS


def is_nemesis(thread: Thread) -> bool:
    return thread == NEMESIS


@dataclass(frozen=True, slots=True)
class Synchronize(Gen):
    """Waits until every thread is free, then behaves as ``gen``."""

    gen: Gen | None

    def op(self, ctx: Context) -> Step:
        if self.gen is None:
            return None
        if not ctx.all_free():
            return PENDING, self
        return self.gen.op(ctx)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if self.gen is None else Synchronize(self.gen.update(ctx, event))


@dataclass(frozen=True, slots=True)
class Phases(Gen):
    """Each generator in turn, each starting once the previous is exhausted *and* idle.

    Unlike a plain sequence, every event also reaches the phases still to come,
    so a later phase can learn from earlier ones (the final drain learns every
    key the main phase used).
    """

    gens: tuple[Gen | None, ...]

    def op(self, ctx: Context) -> Step:
        for i, g in enumerate(self.gens):
            if g is None:
                continue
            step = g.op(ctx)
            if step is None:
                continue
            x, nxt = step
            return x, Phases((nxt, *self.gens[i + 1:]))
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        return Phases(tuple(None if g is None else g.update(ctx, event) for g in self.gens))


@dataclass(frozen=True, slots=True)
class EachThread(Gen):
    """Every thread runs its own copy of ``template``; the soonest op wins."""

    template: Gen
    per: dict[Thread, Gen | None] = field(default_factory=dict)

    def op(self, ctx: Context) -> Step:
        per = dict(self.per)
        best: tuple[Thread, Op, Gen | None] | None = None
        wakes: list[int | None] = []
        alive = False
        for thread in ctx.threads:
            gen = per.get(thread, self.template)
            if gen is None:
                continue
            mine = replace(ctx.restrict(_only(thread)), rng=ctx.rng.fork(_thread_salt(thread)))
            step = gen.op(mine)
            if step is None:
                per[thread] = None
                continue
            alive = True
            x, nxt = step
            if isinstance(x, Pending):
                per[thread] = nxt
                wakes.append(x.wake)
            elif best is None or soonest(x, best[1]):
                best = (thread, x, nxt)
        if best is not None:
            per[best[0]] = best[2]
            return best[1], EachThread(self.template, per)
        if alive:
            return min_wake(wakes), EachThread(self.template, per)
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        thread = ctx.thread_of(event.get("process"))
        if thread is None:
            return self
        gen = self.per.get(thread, self.template)
        if gen is None:
            return self
        return EachThread(self.template, {**self.per, thread: gen.update(ctx, event)})


@dataclass(frozen=True, slots=True)
class Sleep(Gen):
    """No ops for ``dt`` ns from when it is first asked, then done."""

    dt: int
    deadline: int | None = None

    def op(self, ctx: Context) -> Step:
        deadline = ctx.time + self.dt if self.deadline is None else self.deadline
        if ctx.time >= deadline:
            return None
        return Pending(deadline), Sleep(self.dt, deadline)


@dataclass(frozen=True, slots=True)
class Repeat(Gen):
    """``gen``'s first op, again and again (``remaining`` times, or forever if None)."""

    gen: Gen
    remaining: int | None = None

    def op(self, ctx: Context) -> Step:
        if self.remaining is not None and self.remaining <= 0:
            return None
        step = self.gen.op(ctx)
        if step is None:
            return None
        x = step[0]
        if isinstance(x, Pending):
            return x, self
        return x, Repeat(self.gen, None if self.remaining is None else self.remaining - 1)


_EXHAUSTED = Seq(())


@dataclass(frozen=True, slots=True)
class Cycle(Gen):
    """``gen`` from the start each time it is exhausted (``remaining`` rounds, or forever)."""

    original: Gen
    remaining: int | None = None
    current: Gen | None = None

    def op(self, ctx: Context) -> Step:
        if self.remaining is not None and self.remaining <= 0:
            return None
        fresh = self.current is None
        step = (self.original if self.current is None else self.current).op(ctx)
        if step is None:
            if fresh:
                return None  # an empty generator cycles to nothing, not to a busy loop
            left = None if self.remaining is None else self.remaining - 1
            return Cycle(self.original, left).op(ctx)
        x, nxt = step
        return x, Cycle(self.original, self.remaining, _EXHAUSTED if nxt is None else nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.current is None:
            return self
        return Cycle(self.original, self.remaining, self.current.update(ctx, event))


@dataclass(frozen=True, slots=True)
class MapOps(Gen):
    """``gen`` with ``fn`` applied to each op it yields."""

    fn: Callable[[Op], Op]
    gen: Gen | None

    def op(self, ctx: Context) -> Step:
        step = None if self.gen is None else self.gen.op(ctx)
        if step is None:
            return None
        x, nxt = step
        return (x if isinstance(x, Pending) else self.fn(x)), MapOps(self.fn, nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if self.gen is None else MapOps(self.fn, self.gen.update(ctx, event))


# -- constructor functions: accept plain values, take seconds -------------------


def limit(n: int, gen: GenLike) -> Gen:
    return Limit(n, lift(gen))


def time_limit(seconds: float, gen: GenLike) -> Gen:
    return TimeLimit(ns(seconds), lift(gen))


def stagger(mean_interval: float, gen: GenLike) -> Gen:
    """Ops spaced ``mean_interval`` seconds apart on average (``1/rate`` for ``--rate``)."""
    return Stagger(2 * ns(mean_interval), lift(gen))


def mix(gens: Sequence[GenLike], weights: Sequence[float] | None = None) -> Gen:
    ws = [1.0] * len(gens) if weights is None else list(weights)
    if len(ws) != len(gens):
        raise ValueError("mix() needs one weight per generator")
    pairs = [(g, w) for g, w in zip((lift(x) for x in gens), ws, strict=True)
             if g is not None and w > 0]
    return Mix(tuple(g for g, _ in pairs), tuple(w for _, w in pairs))


def interleave(gens: Sequence[GenLike]) -> Gen:
    """One op from each of ``gens`` in turn (see ``Interleave``)."""
    return Interleave(tuple(g for g in map(lift, gens) if g is not None))


def any_of(*gens: GenLike) -> Gen:
    return AnyOf(tuple(g for g in map(lift, gens) if g is not None))


def on_threads(pred: Callable[[Thread], bool], gen: GenLike) -> Gen:
    return OnThreads(pred, lift(gen))


def clients(gen: GenLike) -> Gen:
    """``gen`` on client threads only."""
    return OnThreads(is_client, lift(gen))


def nemesis(gen: GenLike) -> Gen:
    """``gen`` on the nemesis thread only."""
    return OnThreads(is_nemesis, lift(gen))


def synchronize(gen: GenLike) -> Gen:
    return Synchronize(lift(gen))


def phases(*gens: GenLike) -> Gen:
    return Phases(tuple(Synchronize(lift(g)) for g in gens))


def each_thread(gen: GenLike) -> Gen:
    g = lift(gen)
    if g is None:
        raise ValueError("each_thread() needs a generator")
    return EachThread(g)


def sleep(seconds: float) -> Gen:
    return Sleep(ns(seconds))


def once(op: dict[str, Any]) -> Gen:
    g = lift(op)
    assert g is not None
    return g


def repeat(gen: GenLike, n: int | None = None) -> Gen:
    g = lift(gen)
    if g is None:
        raise ValueError("repeat() needs a generator")
    return Repeat(g, n)


def cycle(gen: GenLike, n: int | None = None) -> Gen:
    g = lift(gen)
    if g is None:
        raise ValueError("cycle() needs a generator")
    return Cycle(g, n)


def map_ops(fn: Callable[[Op], Op], gen: GenLike) -> Gen:
    return MapOps(fn, lift(gen))
