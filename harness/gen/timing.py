"""Combinators that decide *when* things run: ``stagger``, ``sleep``, ``synchronize``,
``phases``. The constructor functions (seconds, plain values) are in ``combinators``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.base.history import Op
from harness.gen.core import (
    PENDING,
    Context,
    Gen,
    Pending,
    Step,
)


@dataclass(frozen=True, slots=True)
class Stagger(Gen):
    """Delays ops so consecutive ones are uniformly 0 to ``span`` ns apart (mean span/2).

    The spacing is across *all* threads, so ``stagger(1/rate)`` gives ``rate``
    ops per second in total, as long as a thread is free when an op is due.

    ``catch_up`` (ns, default 0): with 0, the next gap starts when an op really
    ran, so every op that ran late (every thread busy, or a loaded host that woke
    the interpreter late) pushes all later ones back, and the rate reached falls
    well below the one asked as soon as the clients are near their capacity
    (measured: 445 ops/s of 1000 asked, with threads free half the time). With
    ``catch_up`` > 0 the next gap starts when the op was *due*, so later ops make
    up for lost time, by at most ``catch_up`` ns: a long stall (a fault) is
    followed by a burst of at most that much, not by every op it held back. The
    nemesis keeps 0: a fault held back by a recovery wait must not bring the next
    one forward.
    """

    span: int
    gen: Gen | None
    next_time: int | None = None
    catch_up: int = 0

    def op(self, ctx: Context) -> Step:
        if self.gen is None:
            return None
        rng, child = ctx.split()
        step = self.gen.op(child)
        if step is None:
            return None
        x, nxt = step
        if isinstance(x, Pending):
            if nxt is self.gen:
                return x, self
            return x, Stagger(self.span, nxt, self.next_time, self.catch_up)
        due = ctx.time if self.next_time is None else self.next_time
        if x["time"] < due:
            x = {**x, "time": due}
        gap = rng.below(self.span)[0] if self.span > 0 else 0
        start = max(due, x["time"] - self.catch_up) if self.catch_up else x["time"]
        return x, Stagger(self.span, nxt, start + gap, self.catch_up)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.gen is None:
            return self
        gen = self.gen.update(ctx, event)
        return self if gen is self.gen else Stagger(self.span, gen, self.next_time, self.catch_up)



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
        gen = self.gen if self.gen is None else self.gen.update(ctx, event)
        return self if gen is self.gen else Synchronize(gen)


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
            if i == 0 and nxt is g:
                return x, self  # the current phase stayed as it was
            return x, Phases((nxt, *self.gens[i + 1:]))
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        gens = tuple(None if g is None else g.update(ctx, event) for g in self.gens)
        if all(a is b for a, b in zip(gens, self.gens, strict=True)):
            return self  # nobody changed: no new state
        return Phases(gens)



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
