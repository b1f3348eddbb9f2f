"""An in-memory Kafka for the simulator: an outcome function (a handler) over one log per key.

``simulate(gen, outcome_fn=FakeKafka())`` completes every op the way a correct
Kafka would, so simulated histories carry real-looking offsets and reads and
pass the checker; a test that wants a broken Kafka wraps it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from harness.base.contract import NEMESIS
from harness.base.history import Op


class FakeKafka:
    """One in-memory log per key; each process reads its assigned keys from its position.

    A transaction's sends are appended when it commits (its end), so its polls,
    like a ``read_committed`` consumer's, never see its own uncommitted sends.
    """

    def __init__(self, batch: int = 3) -> None:
        self.batch = batch
        self.logs: dict[str, list[int]] = defaultdict(list)
        self.assigned: dict[Any, list[str]] = {}
        self.pos: dict[tuple[Any, str], int] = {}

    def __call__(self, op: Op, rng: random.Random) -> Mapping[str, Any]:
        p, f = op["process"], op["f"]
        if p == NEMESIS or f == "crash":
            return {"type": "info"}
        if f in ("assign", "subscribe"):
            self.assigned[p] = list(op["value"])
            for key in op["value"]:
                if op.get("seek") == "beginning" or (p, key) not in self.pos:
                    self.pos[(p, key)] = 0
            return {"type": "ok"}
        out: list[list[Any]] = []
        pending: list[tuple[int, str, int]] = []
        for mop in op["value"]:
            if mop[0] == "send":
                pending.append((len(out), mop[1], mop[2]))
                out.append(mop)
            else:
                out.append(["poll", self._poll(p)])
        for i, key, value in pending:
            self.logs[key].append(value)
            out[i] = ["send", key, [len(self.logs[key]) - 1, value]]
        return {"type": "ok", "value": out}

    def _poll(self, p: Any) -> dict[str, list[list[int]]]:
        reads: dict[str, list[list[int]]] = {}
        for key in self.assigned.get(p, []):
            start = self.pos[(p, key)]
            records = self.logs[key][start:start + self.batch]
            self.pos[(p, key)] = start + len(records)
            reads[key] = [[start + i, v] for i, v in enumerate(records)]
        return reads
