"""Combinators that decide *where* ops run: ``on_threads`` (``clients``, ``nemesis``) and
``each_thread``. The constructor functions are in ``combinators``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from harness.base.contract import NEMESIS
from harness.base.history import Op
from harness.gen.core import (
    Context,
    Gen,
    Pending,
    Step,
    Thread,
    min_wake,
    soonest,
)


@lru_cache(maxsize=1024)
def _only(thread: Thread) -> Callable[[Thread], bool]:
    """A predicate for one thread; the same one each time, so ``Context.restrict`` finds
    its answer cached."""
    return lambda t: t == thread


def _thread_salt(thread: Thread) -> int:
    return thread if isinstance(thread, int) else zlib.crc32(str(thread).encode())



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
        return x, self if nxt is self.gen else OnThreads(self.pred, nxt)

    def update(self, ctx: Context, event: Op) -> Gen:
        if self.gen is None:
            return self
        thread = ctx.thread_of(event.get("process"))
        if thread is None or not self.pred(thread):
            return self
        gen = self.gen.update(ctx, event)
        return self if gen is self.gen else OnThreads(self.pred, gen)


def is_client(thread: Thread) -> bool:
    return thread != NEMESIS


def is_nemesis(thread: Thread) -> bool:
    return thread == NEMESIS


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
            mine = ctx.restrict(_only(thread)).with_rng(ctx.rng.fork(_thread_salt(thread)))
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
