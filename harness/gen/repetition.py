"""Combinators that run a generator again or change its ops: ``repeat``, ``cycle``,
``map_ops``. The constructor functions are in ``combinators``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.base.history import Op
from harness.gen.core import (
    Context,
    Gen,
    Pending,
    Seq,
    Step,
)


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
