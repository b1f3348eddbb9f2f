"""Run a generator against fake workers in virtual time: no threads, no clock, no Kafka.

This is the generator's test bench (Jepsen tests its generators the same way).
It plays the interpreter's part: it asks the generator for ops, "invokes" each
on the thread owning the op's process, finishes it after ``latency_fn`` ns of
virtual time with whatever ``outcome_fn`` says, feeds every invocation and
completion back through ``gen.update``, and retires a client's process after an
``info``, exactly as the real runner must. Once the generator answers ``None`` it
is not asked again (ops in flight still complete and update it), as in the runner:
a simulator that asked again would hide main phases that end early. With
``op_timeout`` it abandons, as the interpreter does, a client op that would run
longer: the op completes ``info`` at its deadline, with no value (what it did is
unknown), and its process is retired. The
fakes are plain functions (a handler, like ``httpx.MockTransport``), so a test
states its Kafka in a few lines.

The history is written through :class:`harness.base.history_writer.HistoryWriter`, so a
simulated history obeys the same format and pairing rules as a real one, and an
op addressed to a busy process is caught at once.
"""

from __future__ import annotations

import heapq
import io
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.base.contract import NEMESIS
from harness.base.history import Op, ProcessTable
from harness.base.history_writer import HistoryWriter
from harness.gen.core import Context, GenLike, Pending, Rng, Thread, lift

LatencyFn = Callable[[Op, random.Random], int]
"""How long (ns) an invoked op takes, given the invoke op and the simulation's RNG."""

OutcomeFn = Callable[[Op, random.Random], Mapping[str, Any]]
"""How an invoked op ends: ``{"type": "ok"|"fail"|"info", "value"?: ..., "error"?: ...,
"fields"?: {...}}``. A missing ``value`` keeps the invoke's value; ``fields`` are further
fields of the completion line (an ``assign``'s ``committed``, docs/HISTORY-GROUPS.md)."""

_SET_HERE = frozenset({"index", "time", "process", "type", "f", "value"})
POLL_INTERVAL = 1_000_000  # ns: how often a pending generator with no wake time is asked again
ABANDONED = "no completion within the op timeout: client replaced"


class SimulationError(Exception):
    """The generator misbehaved (an op for a busy process) or never finished."""


def fixed_latency(ns: int = 1_000_000) -> LatencyFn:
    return lambda op, rng: ns


def ok_outcome(op: Op, rng: random.Random) -> Mapping[str, Any]:
    """Every client op succeeds unchanged, except as the real runner completes them:
    the nemesis reports ``info``, and a ``crash`` ends ``info`` (the client is gone)."""
    return {"type": "info" if op["process"] == NEMESIS or op["f"] == "crash" else "ok"}


@dataclass(order=True)
class _InFlight:
    done: int
    seq: int
    thread: Thread
    invoke: Op
    abandoned: bool = False


def simulate(
    gen: GenLike,
    *,
    concurrency: int,
    seed: int = 0,
    latency_fn: LatencyFn | None = None,
    outcome_fn: OutcomeFn | None = None,
    max_ops: int = 200_000,
    max_time: int = 24 * 3600 * 1_000_000_000,
    max_idle: int = 10 * 1_000_000_000,
    op_timeout: int | None = None,
) -> list[Op]:
    """Run ``gen`` on ``concurrency`` client threads plus the nemesis; return the history.

    Deterministic: the same generator, seed and functions give the same history.
    Raises :class:`SimulationError` if the history passes ``max_ops`` ops or
    virtual time passes ``max_time`` ns (a generator that never ends), or if the
    generator stays pending for ``max_idle`` ns with nothing in flight and no wake
    time (it waits for an event that cannot come). ``op_timeout`` (ns): the
    interpreter's deadline for client ops (``harness.run.interpreter``).
    """
    latency = latency_fn or fixed_latency()
    outcome = outcome_fn or ok_outcome
    rnd = random.Random(seed)
    root = Rng(seed)
    table = ProcessTable(concurrency)
    threads: tuple[Thread, ...] = (*range(concurrency), NEMESIS)
    free: set[Thread] = set(threads)
    inflight: list[_InFlight] = []
    now = 0
    history = HistoryWriter(io.BytesIO(), clock=lambda: now, start_ns=0)
    ops: list[Op] = []
    g = lift(gen)
    asking = g is not None  # an exhausted generator is not asked again, as in the runner
    step = 0
    idle_since: int | None = None

    def context() -> Context:
        workers: dict[Thread, Any] = {NEMESIS: NEMESIS}
        workers.update(table.snapshot().items())
        return Context(now, threads, frozenset(free), workers, root.fork(step))

    def complete_next() -> None:
        nonlocal now, g
        done = heapq.heappop(inflight)
        now = max(now, done.done)
        free.add(done.thread)
        end: Mapping[str, Any] = ({"type": "info", "value": None, "error": ABANDONED}
                                  if done.abandoned else outcome(done.invoke, rnd))
        completion: Op = {"process": done.invoke["process"], "type": end["type"],
                          "f": done.invoke["f"], "value": end.get("value", done.invoke["value"])}
        if end.get("error") is not None:
            completion["error"] = end["error"]
        if end.get("fields"):
            completion.update(end["fields"])
        ops.append(history.append(completion))
        if g is not None:
            g = g.update(context(), ops[-1])
        if end["type"] == "info" and isinstance(done.thread, int):
            table.retire(done.thread)

    while True:
        if len(ops) > max_ops or now > max_time:
            raise SimulationError(f"no end after {len(ops)} ops and {now} ns (seed {seed})")
        ctx = context()
        step += 1
        answer = g.op(ctx) if asking and g is not None else None
        if answer is None:
            asking = False
            if not inflight:
                return ops
            complete_next()
            continue
        x, nxt = answer
        if isinstance(x, Pending):
            g = nxt
            wake = x.wake if x.wake is not None and x.wake > now else None
            if inflight and (wake is None or inflight[0].done <= wake):
                complete_next()
            elif wake is not None:
                now = wake
            else:
                idle_since = now if idle_since is None else idle_since
                if now - idle_since >= max_idle:
                    raise SimulationError(f"pending for {now - idle_since} ns with nothing in "
                                          f"flight and no wake time (seed {seed}): {g!r:.300}")
                now += POLL_INTERVAL
                continue
            idle_since = None
            continue
        idle_since = None
        if x["time"] > now and inflight and inflight[0].done < x["time"]:
            complete_next()  # something finishes first: ask again afterwards, as Jepsen does
            continue
        now = max(now, x["time"])
        thread = ctx.thread_of(x["process"])
        if thread is None or thread not in free:
            raise SimulationError(f"op for process {x['process']!r}, which is not free: {x}")
        free.discard(thread)
        invoke = history.append({"process": x["process"], "type": "invoke", "f": x["f"],
                                 "value": x.get("value"),
                                 **{k: v for k, v in x.items() if k not in _SET_HERE}})
        ops.append(invoke)
        g = None if nxt is None else nxt.update(context(), invoke)
        took = latency(invoke, rnd)
        late = op_timeout is not None and thread != NEMESIS and took > op_timeout
        if late:
            assert op_timeout is not None
            took = op_timeout
        heapq.heappush(inflight, _InFlight(now + took, step, thread, invoke, late))
