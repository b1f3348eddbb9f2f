"""Jepsen's core combinators, as immutable values.

Each wraps one or more generators and changes *what* they may run (``limit``,
``time_limit``, ``mix``, ``interleave``), *when* (``stagger``, ``sleep``, ``phases``) or *where*
(``clients``, ``nemesis``, ``each_thread``). Times given to the constructor
functions are seconds; inside, everything is integer nanoseconds.

This module holds those constructor functions, the public surface; the
generator classes live by job in ``choose`` (what), ``timing`` (when),
``threads`` (where) and ``repetition`` (again), and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.base.history import Op
from harness.gen.choose import AnyOf, Interleave, Limit, Mix, TimeLimit, Until
from harness.gen.core import (
    Gen,
    GenLike,
    Thread,
    lift,
)
from harness.gen.repetition import Cycle, MapOps, Repeat
from harness.gen.threads import EachThread, OnThreads, is_client, is_nemesis
from harness.gen.timing import Phases, Sleep, Stagger, Synchronize

NS = 1_000_000_000


def ns(seconds: float) -> int:
    """Seconds → integer nanoseconds."""
    return round(seconds * NS)


# -- constructor functions: accept plain values, take seconds -------------------


def limit(n: int, gen: GenLike) -> Gen:
    return Limit(n, lift(gen))


def time_limit(seconds: float, gen: GenLike) -> Gen:
    return TimeLimit(ns(seconds), lift(gen))


def stagger(mean_interval: float, gen: GenLike, *, catch_up: float = 0.0) -> Gen:
    """Ops spaced ``mean_interval`` seconds apart on average (``1/rate`` for ``--rate``);
    ops that ran late are made up for, by at most ``catch_up`` seconds (``Stagger``)."""
    return Stagger(2 * ns(mean_interval), lift(gen), catch_up=ns(catch_up))


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


def until_done(lead: GenLike, rest: GenLike, *, tail: float) -> Gen:
    """The ops of both, soonest first, until ``tail`` seconds after ``lead`` is done."""
    return Until(lift(lead), lift(rest), ns(tail))


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


__all__ = [
    "NS",
    "AnyOf",
    "Cycle",
    "EachThread",
    "Interleave",
    "Limit",
    "MapOps",
    "Mix",
    "OnThreads",
    "Phases",
    "Repeat",
    "Sleep",
    "Stagger",
    "Synchronize",
    "TimeLimit",
    "any_of",
    "clients",
    "cycle",
    "each_thread",
    "interleave",
    "is_client",
    "is_nemesis",
    "limit",
    "map_ops",
    "mix",
    "nemesis",
    "ns",
    "on_threads",
    "once",
    "phases",
    "repeat",
    "sleep",
    "stagger",
    "synchronize",
    "time_limit",
]
