"""A simulator Kafka for the queue workload's ``--txn`` mode: transactions, one group's offsets.

An outcome function for ``harness.gen.simulate``, as ``sim_kafka.FakeKafka`` is,
completing ops the way the queue's transactional client records them
(docs/HISTORY-GROUPS.md): an ``assign`` with ``"seek": "committed"`` starts each
new key at the group's committed offset (0 where none) and records the lookup as
its ``committed`` field; a dropped key loses its position. A ``txn`` (or a
``send``, which runs as a transaction) appends its sends when it commits, and
its ``["commit"]`` commits the process's position of every key it holds. With
probability ``abort_p`` it aborts instead (``fail``): nothing is appended or
committed and the process is back where it stood. With ``unknown_p`` it ends
``info`` with no value, as an op abandoned at its deadline, and whether it
committed is drawn. Every process reads its keys on its own from its position,
so the group's committed offset moves back when a slower member commits.

With probability ``late_p``, an ``ok`` transaction's offsets land late, as before
Kafka 2.5 (no stable offset fetch): its markers are written after EndTxn returned,
so reads in between return the older offsets. They land at a later op's completion
(at each with probability ``land_p``), and at the latest when the same process's next
transaction that sends or commits offsets completes: the transaction coordinator
refuses that one (CONCURRENT_TRANSACTIONS) until every marker of the previous one is
written.

Broken coordinators, each for one of the group anomalies: ``keeps_aborted_offsets``
applies an aborted transaction's offsets (``garbage-commit``); ``forgets_after``
forgets every committed offset once, after that many commits (``lost-commit``);
``skews`` stores each offset that much above the one sent (``commit-skip``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from harness.base.contract import NEMESIS
from harness.base.history import Op


class TxnKafka:
    def __init__(self, *, abort_p: float = 0.2, unknown_p: float = 0.0, batch: int = 3,
                 keeps_aborted_offsets: bool = False, forgets_after: int | None = None,
                 skews: int = 0, late_p: float = 0.0, land_p: float = 1 / 3) -> None:
        self.abort_p = abort_p
        self.unknown_p = unknown_p
        self.batch = batch
        self.keeps_aborted_offsets = keeps_aborted_offsets
        self.forgets_after = forgets_after
        self.skews = skews
        self.late_p = late_p
        self.land_p = land_p
        #: process -> offsets of its ok transaction whose markers are not written yet
        self.unmarked: dict[Any, dict[str, int]] = {}
        self.commits = 0
        self.logs: dict[str, list[int]] = defaultdict(list)
        self.assigned: dict[Any, list[str]] = {}
        self.pos: dict[tuple[Any, str], int] = {}
        self.committed: dict[str, int] = {}  # the one group's offsets

    def __call__(self, op: Op, rng: random.Random) -> Mapping[str, Any]:
        p, f = op["process"], op["f"]
        for q in [q for q in self.unmarked if rng.random() < self.land_p]:
            self._store(self.unmarked.pop(q))
        if p == NEMESIS or f == "crash":
            return {"type": "info"}
        if f == "committed":
            keys = op["value"][0][1]
            return {"type": "ok", "value": [["committed",
                                             {k: self.committed.get(k) for k in keys}]]}
        if f in ("assign", "subscribe"):
            return self._assign(p, op)
        if f == "poll":
            return {"type": "ok", "value": [["poll", self._poll(p)]]}
        return self._txn(p, op, rng)

    def _assign(self, p: Any, op: Op) -> Mapping[str, Any]:
        keys: list[str] = list(op["value"])
        held = self.assigned.get(p, [])
        for key in held:
            if key not in keys:
                self.pos.pop((p, key), None)
        new = [k for k in keys if k not in held]
        seek = op.get("seek")
        for key in new:
            self.pos[(p, key)] = self.committed.get(key, 0) if seek == "committed" else 0
        self.assigned[p] = keys
        if seek == "committed":
            return {"type": "ok", "fields": {"committed": {k: self.committed.get(k)
                                                           for k in new}}}
        return {"type": "ok"}

    def _poll(self, p: Any) -> dict[str, list[list[int]]]:
        reads: dict[str, list[list[int]]] = {}
        for key in self.assigned.get(p, []):
            start = self.pos[(p, key)]
            records = self.logs[key][start:start + self.batch]
            self.pos[(p, key)] = start + len(records)
            if records:
                reads[key] = [[start + i, v] for i, v in enumerate(records)]
        return reads

    def _txn(self, p: Any, op: Op, rng: random.Random) -> Mapping[str, Any]:
        before = {k: o for (q, k), o in self.pos.items() if q == p}
        out: list[Any] = []
        sends: list[tuple[int, str, int]] = []
        offsets: dict[str, int] | None = None
        for mop in op["value"]:
            if mop[0] == "send":
                sends.append((len(out), mop[1], mop[2]))
                out.append(mop)
            elif mop[0] == "poll":
                out.append(["poll", self._poll(p)])
            else:
                offsets = {k: self.pos[(p, k)] for k in self.assigned.get(p, [])}
                out.append(["commit", offsets])
        if (sends or offsets) and p in self.unmarked:
            self._store(self.unmarked.pop(p))
        draw = rng.random()
        if draw < self.abort_p:
            for key, o in before.items():
                self.pos[(p, key)] = o  # the client seeks back over what it read
            if self.keeps_aborted_offsets and offsets:
                self._store(offsets)
            return {"type": "fail", "value": out, "error": "aborted on purpose"}
        unknown = draw < self.abort_p + self.unknown_p
        if unknown and rng.random() < 0.5:
            return {"type": "info", "value": None, "error": "abandoned, never committed"}
        for i, key, value in sends:
            self.logs[key].append(value)
            out[i] = ["send", key, [len(self.logs[key]) - 1, value]]
        if offsets and not unknown and self.late_p and rng.random() < self.late_p:
            self.unmarked[p] = offsets
        elif offsets:
            self._store(offsets)
        if unknown:
            return {"type": "info", "value": None, "error": "abandoned, committed"}
        return {"type": "ok", "value": out}

    def _store(self, offsets: dict[str, int]) -> None:
        self.commits += 1
        if self.commits == self.forgets_after:
            self.committed.clear()
            return
        self.committed.update((k, o + self.skews) for k, o in offsets.items())
