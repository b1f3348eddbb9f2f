"""An in-memory Kafka that produces *valid* histories, and faults to inject into them.

The model is deliberately simple but faithful to what the checker relies on:

* each key is one partition: an append-only list of slots (committed record,
  aborted record, or transaction marker); markers and aborted records are
  invisible to readers, so they become holes in the version order;
* every op takes effect atomically when it completes, so concurrency in the
  history (several processes with ops in flight) never breaks linearity;
* consumers read committed records from a per-key position that only an ``ok``
  op advances (a failed poll or an aborted txn leaves it where it was), and a
  transaction's polls stop at its own first open record (Kafka's last stable
  offset), so a transaction never sees its own sends;
* ``assign``/``subscribe`` keep positions of the keys still listed and start
  new keys from the beginning; an ``info`` completion retires the process and
  its client (a fresh process number takes over);
* a final reader assigns every key and polls everything, as Jepsen's final
  polls do, so every acknowledged value is seen.

``inject_*`` functions take such a history and plant exactly one kind of fault,
returning the (key, value) where the checker must find it.

The partitions are the benchmarks' in-memory Kafka (``harness.bench._synth.kafka``),
so the checker tests and the synthetic runs share one model of a log.
"""

from __future__ import annotations

import copy
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from harness.bench._synth.kafka import ABORTED, COMMITTED, MARKER, OPEN, Partition

Op = dict[str, Any]


@dataclass
class Client:
    """A worker slot: its current process number and consumer state."""

    process: int
    assigned: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    pending: tuple[str, Any] | None = None


@dataclass
class Settings:
    """Shape of a generated history."""

    ops: int = 60
    clients: int = 3
    keys: int = 2
    p_txn: float = 0.25
    p_fail: float = 0.1
    p_info: float = 0.07
    p_assign: float = 0.15
    p_crash: float = 0.03
    max_batch: int = 3


class KafkaModel:
    """Runs random clients against an in-memory log and records the history."""

    def __init__(self, seed: int, settings: Settings | None = None) -> None:
        self.rng = random.Random(seed)
        self.s = settings or Settings()
        self.keys = [f"t0-{i}" for i in range(self.s.keys)]
        self.logs: dict[str, Partition] = {k: Partition() for k in self.keys}
        self.ops: list[Op] = []
        self.next_process = 0
        self.next_value = 1
        self.clients = [Client(self._fresh_process()) for _ in range(self.s.clients)]

    # --- history -------------------------------------------------------------

    def _fresh_process(self) -> int:
        self.next_process += 1
        return self.next_process - 1

    def _emit(
        self, process: int | str, type_: str, f: str, value: Any, with_value: bool = True
    ) -> None:
        op: Op = {"index": len(self.ops), "time": 1000 * len(self.ops), "process": process,
                  "type": type_, "f": f}
        if with_value:
            op["value"] = value
        self.ops.append(op)

    # --- the run -------------------------------------------------------------

    def run(self) -> list[Op]:
        """Generate the whole history: random ops, then final polls."""
        for _ in range(self.s.ops):
            client = self.rng.choice(self.clients)
            if client.pending is None:
                self._invoke(client)
            else:
                self._complete(client)
            if self.rng.random() < 0.03:
                self._emit_nemesis()
        for client in self.clients:
            if client.pending is not None:
                self._complete(client)
        self._final_polls()
        return self.ops

    def _emit_nemesis(self) -> None:
        self._emit("nemesis", "info", "start-partition", {"isolated": [["n1"], ["n2", "n3"]]})

    def _invoke(self, client: Client) -> None:
        r = self.rng.random()
        s = self.s
        if r < s.p_crash:
            f, value = "crash", None
        elif r < s.p_crash + s.p_assign:
            f = self.rng.choice(["assign", "assign", "subscribe"])
            value = self.rng.sample(self.keys, self.rng.randint(1, len(self.keys)))
        elif r < s.p_crash + s.p_assign + s.p_txn:
            f, value = "txn", [self._mop() for _ in range(self.rng.randint(1, 4))]
        elif self.rng.random() < 0.5:
            f, value = "send", [self._send_mop() for _ in range(self.rng.randint(1, s.max_batch))]
        else:
            f, value = "poll", [["poll"] for _ in range(self.rng.randint(1, 2))]
        client.pending = (f, value)
        self._emit(client.process, "invoke", f, value)

    def _mop(self) -> list[Any]:
        return self._send_mop() if self.rng.random() < 0.5 else ["poll"]

    def _send_mop(self) -> list[Any]:
        value = self.next_value
        self.next_value += 1
        return ["send", self.rng.choice(self.keys), value]

    def _outcome(self) -> str:
        r = self.rng.random()
        if r < self.s.p_fail:
            return "fail"
        if r < self.s.p_fail + self.s.p_info:
            return "info"
        return "ok"

    def _complete(self, client: Client) -> None:
        assert client.pending is not None
        f, value = client.pending
        client.pending = None
        process = client.process
        if f == "crash":
            self._emit(process, "info", f, None, with_value=False)
            self._retire(client)
            return
        outcome = self._outcome()
        if f in ("assign", "subscribe"):
            if outcome != "fail":
                self._assign(client, value)
            self._emit(process, outcome, f, value, with_value=outcome == "ok")
        elif f == "send":
            self._send_op(client, value, outcome)
        else:
            self._txn_op(client, f, value, outcome)
        if outcome == "info":
            self._retire(client)

    def _retire(self, client: Client) -> None:
        client.process = self._fresh_process()
        client.assigned = []
        client.positions = {}

    def _assign(self, client: Client, keys: list[str]) -> None:
        client.positions = {k: client.positions.get(k, 0) for k in keys}
        client.assigned = list(keys)

    def _send_op(self, client: Client, value: list[Any], outcome: str) -> None:
        if outcome == "fail":
            self._emit(client.process, "fail", "send", None, with_value=False)
            return
        done = []
        # info: some prefix may have landed
        landed = len(value) if outcome == "ok" else self.rng.randint(0, len(value))
        for i, (_, k, v) in enumerate(value):
            if i < landed:
                done.append(["send", k, [self.logs[k].append(v, COMMITTED), v]])
        if outcome == "ok":
            self._emit(client.process, "ok", "send", done)
        else:
            self._emit(client.process, "info", "send", None, with_value=False)

    def _txn_op(self, client: Client, f: str, value: list[Any], outcome: str) -> None:
        """A poll or a transaction, atomically; polls stop at the txn's own open records."""
        commit = outcome == "ok" or (outcome == "info" and self.rng.random() < 0.5)
        transactional = f == "txn"
        positions = dict(client.positions)
        opened: list[tuple[str, int]] = []
        result: list[Any] = []
        for mop in value:
            if mop[0] == "send":
                _, k, v = mop
                offset = self.logs[k].append(v, OPEN if transactional else COMMITTED)
                opened.append((k, offset))
                result.append(["send", k, [offset, v]])
            else:
                result.append(["poll", self._poll(client, positions)])
        for k, offset in opened:
            states = self.logs[k].states
            if states[offset] == OPEN:
                states[offset] = COMMITTED if commit else ABORTED
        if transactional and opened:
            for k in {k for k, _ in opened}:
                self.logs[k].append(None, MARKER)
        if outcome == "ok":
            client.positions = positions
            self._emit(client.process, "ok", f, result)
        elif outcome == "fail" and self.rng.random() < 0.5:
            self._emit(client.process, "fail", f, result)
        else:
            self._emit(client.process, outcome, f, None, with_value=False)

    def _poll(
        self, client: Client, positions: dict[str, int], at_least: int = 0
    ) -> dict[str, list[list[int]]]:
        out: dict[str, list[list[int]]] = {}
        for k in client.assigned:
            want = self.rng.randint(at_least, 4)
            # stops at the last stable offset: never reads past an open transaction
            records, positions[k] = self.logs[k].read(positions.get(k, 0), want)
            if records or self.rng.random() < 0.3:
                out[k] = records
        return out

    def _final_polls(self) -> None:
        process = self._fresh_process()
        reader = Client(process)
        self._emit(process, "invoke", "assign", list(self.keys))
        self._assign(reader, list(self.keys))
        self._emit(process, "ok", "assign", list(self.keys))
        while any(
            COMMITTED in self.logs[k].states[reader.positions[k]:]
            for k in self.keys
        ):
            self._emit(process, "invoke", "poll", [["poll"]])
            positions = dict(reader.positions)
            records = self._poll(reader, positions, at_least=1)
            reader.positions = positions
            self._emit(process, "ok", "poll", [["poll", records]])


def generate(seed: int, settings: Settings | None = None) -> list[Op]:
    """A valid history."""
    return KafkaModel(seed, settings).run()


# --- fault injection ---------------------------------------------------------------


def _reads(ops: list[Op]) -> list[tuple[Op, str, list[list[int]]]]:
    """(op, key, record list) of every poll result in every completion."""
    out = []
    for op in ops:
        if op["type"] == "invoke" or op["f"] not in ("poll", "txn"):
            continue
        for mop in op.get("value") or []:
            if mop[0] == "poll" and len(mop) == 2:
                out.extend((op, k, recs) for k, recs in mop[1].items())
    return out


def _ok_sends(ops: list[Op]) -> list[tuple[Op, str, int, int]]:
    out = []
    for op in ops:
        if op["type"] == "ok" and op["f"] in ("send", "txn"):
            for mop in op["value"]:
                if mop[0] == "send":
                    out.append((op, mop[1], mop[2][0], mop[2][1]))
    return out


def _append_op(ops: list[Op], f: str, invoke: Any, type_: str, result: Any) -> int:
    process = 1 + max((op["process"] for op in ops if type(op["process"]) is int), default=0)
    for t, v in (("invoke", invoke), (type_, result)):
        op: Op = {"index": len(ops), "time": 1000 * len(ops), "process": process, "type": t,
                  "f": f}
        if v is not None:
            op["value"] = v
        ops.append(op)
    return len(ops) - 1


def _read_offsets(ops: list[Op]) -> dict[str, dict[int, int]]:
    """key -> offset -> value, from every read."""
    out: dict[str, dict[int, int]] = {}
    for _, k, recs in _reads(ops):
        for o, v in recs:
            out.setdefault(k, {})[o] = v
    return out


def _max_offset(ops: list[Op], key: str) -> int:
    offsets = [o for _, k, recs in _reads(ops) if k == key for o, _ in recs]
    offsets += [o for _, k, o, _ in _ok_sends(ops) if k == key]
    return max(offsets, default=-1)


def _fresh_value(ops: list[Op]) -> int:
    return 10**9 + len(ops)


def inject_lost_write(ops: list[Op], rng: random.Random) -> tuple[str, int] | None:
    """Drop an acknowledged record, that a later read went past, from every read."""
    read = _read_offsets(ops)
    candidates = [
        (k, o, v) for _, k, o, v in _ok_sends(ops)
        if o in read.get(k, {}) and max(read[k]) > o
    ]
    if not candidates:
        return None
    k, _o, v = rng.choice(candidates)
    for _, key, recs in _reads(ops):
        if key == k:
            recs[:] = [r for r in recs if r[1] != v]
    return k, v


def inject_duplicate(ops: list[Op], rng: random.Random) -> tuple[str, int] | None:
    """The broker appends the last record of a key a second time, at a new offset."""
    read = _read_offsets(ops)
    if not read:
        return None
    k = rng.choice(sorted(read))
    v = read[k][max(read[k])]
    _append_op(ops, "poll", [["poll"]], "ok", [["poll", {k: [[_max_offset(ops, k) + 1, v]]}]])
    return k, v


def inject_inconsistent_offsets(ops: list[Op], rng: random.Random) -> tuple[str, int] | None:
    """A second, acknowledged and read record claims an offset that already holds one."""
    read = _read_offsets(ops)
    if not read:
        return None
    k = rng.choice(sorted(read))
    o = rng.choice(sorted(read[k]))
    w = _fresh_value(ops)
    _append_op(ops, "send", [["send", k, w]], "ok", [["send", k, [o, w]]])
    _append_op(ops, "poll", [["poll"]], "ok", [["poll", {k: [[o, w]]}]])
    return k, o


def inject_int_reorder(ops: list[Op], rng: random.Random) -> tuple[str, list[int]] | None:
    """Swap two adjacent records inside one ok poll."""
    candidates = [(op, k, recs) for op, k, recs in _reads(ops)
                  if op["type"] == "ok" and len(recs) >= 2]
    if not candidates:
        return None
    _, k, recs = rng.choice(candidates)
    i = rng.randrange(len(recs) - 1)
    recs[i], recs[i + 1] = recs[i + 1], recs[i]
    return k, [recs[i][1], recs[i + 1][1]]


def inject_poll_reorder(ops: list[Op], rng: random.Random) -> tuple[str, list[int]] | None:
    """Swap the results of two successive ok polls of one process that both read a key."""
    by_process: dict[int, list[Op]] = {}
    for op in ops:
        if op["type"] != "invoke" and type(op["process"]) is int:
            by_process.setdefault(op["process"], []).append(op)
    candidates = []
    for seq in by_process.values():
        for a, b in itertools.pairwise(seq):
            if a["f"] == b["f"] == "poll" and a["type"] == b["type"] == "ok":
                ka = {k for m in a["value"] if len(m) == 2 for k, r in m[1].items() if r}
                kb = {k for m in b["value"] if len(m) == 2 for k, r in m[1].items() if r}
                for k in sorted(ka & kb):
                    candidates.append((a, b, k))
    if not candidates:
        return None
    a, b, k = rng.choice(candidates)
    a["value"], b["value"] = b["value"], a["value"]
    last_b = [r for m in a["value"] if len(m) == 2 for r in m[1].get(k, [])][-1][1]
    first_a = next(r for m in b["value"] if len(m) == 2 for r in m[1].get(k, []))[1]
    return k, [last_b, first_a]


def inject_g1a(ops: list[Op], rng: random.Random) -> tuple[str, int] | None:
    """A send that failed becomes visible to an ok read."""
    k = rng.choice(sorted({k for _, k, _ in _reads(ops)} or {"t0-0"}))
    w = _fresh_value(ops)
    _append_op(ops, "send", [["send", k, w]], "fail", None)
    _append_op(ops, "poll", [["poll"]], "ok", [["poll", {k: [[_max_offset(ops, k) + 1, w]]}]])
    return k, w


def inject_send_reorder(ops: list[Op], rng: random.Random) -> tuple[str, list[int]] | None:
    """Swap what two successive ok sends of one process (to one key) sent."""
    by_process: dict[int, list[Op]] = {}
    for op in ops:
        if op["type"] != "invoke" and type(op["process"]) is int:
            by_process.setdefault(op["process"], []).append(op)
    candidates = []
    for seq in by_process.values():
        sends = [op for op in seq if op["f"] in ("send", "assign", "subscribe", "txn")
                 and op["type"] != "fail"]
        for a, b in itertools.pairwise(sends):
            if a["f"] == b["f"] == "send" and a["type"] == b["type"] == "ok":
                common = {m[1] for m in a["value"]} & {m[1] for m in b["value"]}
                for k in sorted(common):
                    candidates.append((a, b, k))
    if not candidates:
        return None
    a, b, k = rng.choice(candidates)
    a["value"], b["value"] = b["value"], a["value"]
    last = [m[2][1] for m in a["value"] if m[1] == k][-1]
    first = next(m[2][1] for m in b["value"] if m[1] == k)
    return k, [last, first]


def clone(ops: list[Op]) -> list[Op]:
    """A deep copy to inject into."""
    return copy.deepcopy(ops)
