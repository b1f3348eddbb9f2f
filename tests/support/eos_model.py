"""Histories of a correct exactly-once consume-transform-produce group (HISTORY-GROUPS.md).

A model Kafka: a producer appends to two input keys; members of one group hold
input keys (a crashed member's keys go to the next member, which starts them at
the group's committed offset), poll a batch from their position, and run one
transaction that sends one output per input (to ``o0``) and commits the offsets
it consumed. A transaction is drawn to commit (``ok``), abort (``fail``: the
member seeks back to the committed offset), or end unknown (``info``, no value:
applied or not, drawn; the member is a zombie from then on and never acts again,
which is what KIP-447's fencing guarantees). A reader reads the committed offsets
now and then and once at the end; a drain reads every key from the beginning at
read_committed. Whatever it draws, exactly-once holds, so no anomaly may be found.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

Op = dict[str, Any]
INPUTS = ("i0", "i1")
OUTPUT = "o0"
GROUP = "g1"
PRODUCER = 0
READER = 90
DRAIN = 91


@dataclass
class EosSettings:
    members: int = 2
    steps: int = 40
    abort: bool = True
    unknown: bool = True


@dataclass
class _Member:
    process: int
    held: list[str] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)  # keys to announce as assigned
    positions: dict[str, int] = field(default_factory=dict)


class EosModel:
    def __init__(self, seed: int, s: EosSettings) -> None:
        self.rng = random.Random(seed)
        self.s = s
        self.ops: list[Op] = []
        self.log: dict[str, list[int]] = {k: [] for k in (*INPUTS, OUTPUT)}
        self.committed: dict[str, int | None] = dict.fromkeys(INPUTS)
        self.next_value = 1
        self.next_process = 1
        self.members: list[_Member] = []
        for _ in range(s.members):
            self._join()

    def _emit(self, process: int, kind: str, f: str, value: Any, **extra: Any) -> None:
        op = {"index": len(self.ops), "time": len(self.ops) * 10, "process": process,
              "type": kind, "f": f, "value": value}
        op.update(extra)
        self.ops.append(op)

    def _value(self) -> int:
        self.next_value += 1
        return self.next_value

    def _join(self) -> None:
        m = _Member(self.next_process)
        self.next_process += 1
        self._emit(m.process, "invoke", "subscribe", list(INPUTS), group=GROUP, reset="earliest")
        self._emit(m.process, "ok", "subscribe", list(INPUTS), group=GROUP, reset="earliest")
        self.members.append(m)
        self._deal()

    def _deal(self) -> None:
        held = {k for m in self.members for k in m.held}
        for k in INPUTS:
            if k not in held and self.members:
                m = self.rng.choice(self.members)
                m.held.append(k)
                m.fresh.append(k)
                m.positions[k] = self.committed[k] or 0

    def _crash(self, m: _Member) -> None:
        self.members.remove(m)
        self._join()

    def produce(self) -> None:
        k = self.rng.choice(INPUTS)
        v = self._value()
        self.log[k].append(v)
        self._emit(PRODUCER, "invoke", "send", [["send", k, v]])
        self._emit(PRODUCER, "ok", "send", [["send", k, [len(self.log[k]) - 1, v]]])

    def transform(self, m: _Member) -> None:
        result: dict[str, list[list[int]]] = {}
        for k in m.held:
            start = m.positions[k]
            batch = self.log[k][start:start + self.rng.randint(1, 3)]
            if batch:
                result[k] = [[start + i, v] for i, v in enumerate(batch)]
        value: list[Any] = []
        if m.fresh:
            value.append(["assigned", list(m.fresh)])
            m.fresh = []
        value.append(["poll", result])
        self._emit(m.process, "invoke", "poll", [["poll"]])
        self._emit(m.process, "ok", "poll", value)
        if not result:
            return
        for k, records in result.items():
            m.positions[k] = records[-1][0] + 1
        outputs = [(k, v, self._value()) for k, records in result.items() for _, v in records]
        offsets = {k: records[-1][0] + 1 for k, records in result.items()}
        sends: list[Any] = [["send", OUTPUT, w] for _, _, w in outputs]
        derived = [[OUTPUT, w, k, v] for k, v, w in outputs]
        self._emit(m.process, "invoke", "txn", [*sends, ["commit", offsets]], **{"from": derived})
        roll = self.rng.random()
        if self.s.abort and roll < 0.15:
            self._emit(m.process, "fail", "txn", [*sends, ["commit", offsets]])
            for k in result:
                m.positions[k] = self.committed[k] or 0
            return
        if self.s.unknown and roll < 0.3:
            if self.rng.random() < 0.5:
                self._apply(outputs, offsets)
            self._emit(m.process, "info", "txn", None)
            del self.ops[-1]["value"]
            self._crash(m)
            return
        placed = self._apply(outputs, offsets)
        self._emit(m.process, "ok", "txn", [*placed, ["commit", offsets]])

    def _apply(self, outputs: list[tuple[str, int, int]], offsets: dict[str, int]) -> list[Any]:
        placed = []
        for _, _, w in outputs:
            self.log[OUTPUT].append(w)
            placed.append(["send", OUTPUT, [len(self.log[OUTPUT]) - 1, w]])
        self.committed.update(offsets)
        return placed

    def read_committed(self) -> None:
        self._emit(READER, "invoke", "committed", [["committed", list(INPUTS)]], group=GROUP)
        self._emit(READER, "ok", "committed", [["committed", dict(self.committed)]], group=GROUP)

    def run(self) -> list[Op]:
        for _ in range(self.s.steps):
            roll = self.rng.random()
            if roll < 0.4:
                self.produce()
            elif roll < 0.9:
                self.transform(self.rng.choice(self.members))
            else:
                self.read_committed()
        self.read_committed()
        keys = [*INPUTS, OUTPUT]
        self._emit(DRAIN, "invoke", "assign", keys, seek="beginning")
        self._emit(DRAIN, "ok", "assign", keys, seek="beginning")
        everything = {k: [[o, v] for o, v in enumerate(self.log[k])] for k in keys}
        self._emit(DRAIN, "invoke", "poll", [["poll"]])
        self._emit(DRAIN, "ok", "poll", [["poll", everything]])
        return self.ops


def generate(seed: int, s: EosSettings) -> list[Op]:
    return EosModel(seed, s).run()
