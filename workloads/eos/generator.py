"""The exactly-once workload's main-phase generator (pure, tested by simulation).

Producer threads (:func:`~workloads.eos.shape.is_producer`) send batches of
fresh values to random input keys. Every other thread's process is a member of
the group: it subscribes (``group``, ``reset``: docs/HISTORY-GROUPS.md), then
polls and transforms in turn. Its ``txn`` op is left empty here: the client
fills it, before the invoke is recorded, with one output per input record its
last poll returned and the offsets it consumed (``EosClient.plan``). A fresh
process (after an ``info`` the worker replaces the client) subscribes again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.base.history import Op, Process
from harness.gen.core import PENDING, Context, Gen, Step
from workloads.eos.shape import GROUP, INPUT_KEYS, is_producer
from workloads.queue.shape import OFFSET_RESET

#: Most records one producer op writes, all to one input key.
SENDS_PER_OP = 4
#: A member's next op after each of its own: it polls, then transforms what it polled.
NEXT = {"subscribe": "poll", "poll": "txn", "txn": "poll"}


@dataclass(frozen=True, slots=True)
class EosGen(Gen):
    """The main phase: producers fill the inputs, members poll and transform."""

    last: Mapping[Process, str] = field(default_factory=dict)  # a member's last op
    sent: Mapping[str, int] = field(default_factory=dict)  # input key -> values sent

    def op(self, ctx: Context) -> Step:
        free = [t for t in ctx.free_threads() if isinstance(t, int)]
        if not free:
            return PENDING, self
        rng = ctx.rng.fork(1)
        i, rng = rng.below(len(free))
        thread = free[i]
        process = ctx.workers[thread]
        base: dict[str, Any] = {"process": process, "time": ctx.time, "type": "invoke"}
        if is_producer(thread):
            k, rng = rng.below(len(INPUT_KEYS))
            n, rng = rng.below(SENDS_PER_OP)
            key = INPUT_KEYS[k]
            first = self.sent.get(key, 0)
            value = [["send", key, first + j] for j in range(n + 1)]
            return ({**base, "f": "send", "value": value},
                    replace(self, sent={**self.sent, key: first + n + 1}))
        f = NEXT.get(self.last.get(process, ""), "subscribe")
        op: Op = {**base, "f": f}
        if f == "subscribe":
            op.update(value=list(INPUT_KEYS), group=GROUP, reset=OFFSET_RESET)
        elif f == "poll":
            op["value"] = [["poll"]]
        else:
            op["value"] = []  # planned by the client (EosClient.plan)
        return op, replace(self, last={**self.last, process: f})

    def update(self, ctx: Context, event: Op) -> Gen:
        return self


__all__ = ["NEXT", "SENDS_PER_OP", "EosGen"]
