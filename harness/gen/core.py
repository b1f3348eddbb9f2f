"""The generator protocol: pure values that say which op to run next, on which thread, when.

A generator is an immutable value. Asked ``gen.op(ctx)``, it answers

* ``None``: it is exhausted;
* ``(op, next_gen)``: run ``op`` (a dict with ``f``, ``value``, ``time``,
  ``process``, ``type="invoke"``) no earlier than ``op["time"]``, then continue
  with ``next_gen``;
* ``(PENDING-like, next_gen)``: nothing to run yet (threads busy, a phase
  waiting for stragglers, a sleep). A :class:`Pending` may carry ``wake``, the
  context time at which asking again can help even if no op completes before.

Pending answers carry a next generator too (as in Jepsen) because waiting has
state: a sleep remembers its deadline, a time limit its cutoff. The interpreter
also calls ``gen.update(ctx, event)`` with every invocation and completion it
records, so generators can react to outcomes.

Nothing here reads a clock or a global RNG: the context carries the time and a
:class:`Rng` value, so the same seed and the same completions always give the
same ops. That is what makes generators testable by simulation.

Plain values lift to generators (see :func:`lift`): a dict is one op, a list or
tuple runs its elements in turn, a function ``ctx -> dict | None`` yields an op
per call until it returns None.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeAlias

from harness.base.history import Op, Process

Thread = int | str

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_SALT = 0xD1B54A32D192ED03


@dataclass(frozen=True, slots=True)
class Rng:
    """A splitmix64 state: a random-number generator that is a value.

    Every draw returns the number *and* the next state, so randomness is as
    pure as the generators using it.
    """

    state: int

    def next64(self) -> tuple[int, Rng]:
        s = (self.state + _GAMMA) & _MASK
        return _mix(s), Rng(s)

    def random(self) -> tuple[float, Rng]:
        """A float uniform in [0, 1)."""
        s = (self.state + _GAMMA) & _MASK  # next64(), inlined: drawn several times per op
        return (_mix(s) >> 11) * 2.0**-53, Rng(s)

    def below(self, n: int) -> tuple[int, Rng]:
        """An int uniform in [0, n) (bias below 2**-40 for the small n used here)."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        s = (self.state + _GAMMA) & _MASK  # next64(), inlined
        return _mix(s) % n, Rng(s)

    def weighted(self, weights: Sequence[float]) -> tuple[int, Rng]:
        """An index drawn with probability proportional to ``weights``."""
        total = sum(weights)
        if total <= 0:
            raise ValueError("weighted() needs a positive weight")
        x, nxt = self.random()
        x *= total
        for i, w in enumerate(weights):
            if x < w:
                return i, nxt
            x -= w
        return max(i for i, w in enumerate(weights) if w > 0), nxt

    def fork(self, salt: int) -> Rng:
        """An independent stream derived from this state and ``salt``: the first draw of
        the state ``state ^ salt * C``, computed without building that state's ``Rng``
        (combinators fork several times per op)."""
        return Rng(_mix((((self.state ^ (salt * _SALT)) & _MASK) + _GAMMA) & _MASK))


def _mix(s: int) -> int:
    """splitmix64's output function: the draw of an (already advanced) state ``s``."""
    z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


@dataclass(frozen=True, slots=True)
class Pending:
    """No op yet. ``wake``: a context time at which asking again can help."""

    wake: int | None = None


PENDING = Pending()


@dataclass(frozen=True, slots=True)
class Context:
    """What a generator may know when asked for an op.

    ``threads``: every thread this generator may use (combinators narrow it);
    ``free``: those idle now; ``workers``: thread → its current process
    (clients change process after an ``info``); ``rng``: fresh randomness for
    this question.
    """

    time: int
    threads: tuple[Thread, ...]
    free: frozenset[Thread]
    workers: Mapping[Thread, Process]
    rng: Rng = field(default=Rng(0))

    def free_threads(self) -> list[Thread]:
        return [t for t in self.threads if t in self.free]

    def all_free(self) -> bool:
        return all(t in self.free for t in self.threads)

    def thread_of(self, process: Any) -> Thread | None:
        for thread, p in self.workers.items():
            if p == process:
                return thread
        return None

    # Built directly, not with dataclasses.replace: combinators derive contexts several
    # times per op, and replace() costs about three times as much.

    def restrict(self, pred: Callable[[Thread], bool]) -> Context:
        """The same moment, seen by a generator that may only use threads matching ``pred``
        (a pure predicate of the thread alone: its answers are cached)."""
        return Context(self.time, _restricted(pred, self.threads), self.free, self.workers,
                       self.rng)

    def with_rng(self, rng: Rng) -> Context:
        """The same moment with other randomness."""
        return Context(self.time, self.threads, self.free, self.workers, rng)

    def split(self) -> tuple[Rng, Context]:
        """Randomness for the caller, and a context with independent randomness for children."""
        return self.rng.fork(1), self.with_rng(self.rng.fork(2))


@lru_cache(maxsize=256)
def _restricted(pred: Callable[[Thread], bool], threads: tuple[Thread, ...]) -> tuple[Thread, ...]:
    """The threads matching ``pred``: the same few predicates narrow the same thread tuple
    at every question, so the answer is remembered rather than asked thread by thread."""
    return tuple(t for t in threads if pred(t))


Step: TypeAlias = "tuple[Op | Pending, Gen | None] | None"


class Gen:
    """Base of every generator. Subclasses are frozen dataclasses."""

    def op(self, ctx: Context) -> Step:
        raise NotImplementedError

    def update(self, ctx: Context, event: Op) -> Gen:
        """React to an invocation or completion; by default, ignore it."""
        return self


GenLike: TypeAlias = "Gen | Mapping[str, Any] | Sequence[Any] | Callable[[Context], Any] | None"


def lift(x: GenLike) -> Gen | None:
    """Turn a plain value into a generator: dict → one op, list → in turn, fn → per call."""
    if x is None or isinstance(x, Gen):
        return x
    if isinstance(x, Mapping):
        return Once(dict(x))
    if isinstance(x, Sequence) and not isinstance(x, str | bytes):
        return Seq(tuple(x))
    if callable(x):
        return Fn(x)
    raise TypeError(f"not a generator: {x!r}")


def fill_in(template: Mapping[str, Any], ctx: Context, rng: Rng | None = None) -> Op | Pending:
    """Complete an op template: type, time (now) and a free process (random, else PENDING).

    A template that names its process waits (PENDING) until that process is free.
    """
    op = dict(template)
    op.setdefault("type", "invoke")
    op.setdefault("time", ctx.time)
    if "process" in op:
        if ctx.thread_of(op["process"]) not in ctx.free_threads():
            return PENDING
    else:
        free = ctx.free_threads()
        if not free:
            return PENDING
        i, _ = (rng or ctx.rng).below(len(free))
        op["process"] = ctx.workers[free[i]]
    return op


def soonest(a: Op | Pending, b: Op | Pending) -> bool:
    """Whether answer ``a`` should be preferred to ``b``: an op over pending, earlier op first."""
    if isinstance(a, Pending):
        return False
    if isinstance(b, Pending):
        return True
    return bool(a["time"] < b["time"])


def min_wake(wakes: Sequence[int | None]) -> Pending:
    """One Pending for several: the earliest known wake time, if any."""
    known = [w for w in wakes if w is not None]
    return Pending(min(known)) if known else PENDING


@dataclass(frozen=True, slots=True)
class Once(Gen):
    """One op from a template, then done."""

    template: Mapping[str, Any]

    def op(self, ctx: Context) -> Step:
        op = fill_in(self.template, ctx)
        if isinstance(op, Pending):
            return op, self
        return op, None


@dataclass(frozen=True, slots=True)
class Fn(Gen):
    """An op per call of ``fn(ctx)`` until it returns None. ``fn`` should be pure."""

    fn: Callable[[Context], Any]

    def op(self, ctx: Context) -> Step:
        rng, child = ctx.split()
        template = self.fn(child)
        if template is None:
            return None
        op = fill_in(template, ctx, rng)
        return op, self


@dataclass(frozen=True, slots=True)
class Seq(Gen):
    """Each generator in turn: the next starts once the previous is exhausted."""

    gens: tuple[GenLike, ...]

    def op(self, ctx: Context) -> Step:
        for i, g in enumerate(self.gens):
            gen = lift(g)
            if gen is None:
                continue
            step = gen.op(ctx)
            if step is None:
                continue
            x, nxt = step
            return x, Seq((nxt, *self.gens[i + 1:]))
        return None

    def update(self, ctx: Context, event: Op) -> Gen:
        for i, g in enumerate(self.gens):
            gen = lift(g)
            if gen is not None:
                return Seq((*self.gens[:i], gen.update(ctx, event), *self.gens[i + 1:]))
        return self
