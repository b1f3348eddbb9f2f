"""The virtual-time run that writes a synthetic history: clients, the nemesis, the drain.

Like ``harness.gen.simulate`` (the generators' test bench), it plays the
runner's part in virtual time: events wait in a heap, an op takes effect on the
in-memory :class:`~.kafka.Kafka` atomically when it completes (so the history
is valid unless an anomaly is planted), an ``info`` retires the client's process
(a fresh one takes over and assigns again), the nemesis opens and heals faults
on a schedule, and a final reader drains what nobody read. Unlike it, clients
choose their ops from a :class:`~.shape.Shape` rather than a generator, and lines
are streamed to the file: a 10M-op history fits neither a list of ops nor the
pure generators' pace (a few thousand ops a second here), and the benchmarks
need the same history for the same seed and size, fast.

Lines follow docs/HISTORY.md exactly (the tests read every shape back through
the checker, which refuses a malformed or mispaired history).
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from harness.base.faults import fault_kind
from harness.bench._synth.kafka import COMMITTED, LOST, OPEN, Kafka
from harness.bench._synth.shape import MS, Role, Shape

FAIL_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE")
INFO_ERRORS = ("REQUEST_TIMED_OUT", "_MSG_TIMED_OUT", "_TRANSPORT")
#: What a simulated fault's start and stop say they did, by kind (others: ``GENERIC``).
VALUES: dict[str, tuple[Any, Any]] = {
    "partition": ({"isolated": [["n1"], ["n2", "n3"]]}, {"healed": ["n1", "n2", "n3"]}),
    "kill": ({"killed": {"n2": 4242}}, {"started": ["n2"]}),
    "pause": ({"paused": ["n3"]}, {"resumed": ["n3"]}),
    "clock": ({"n1": 250}, {"reset": ["n1"]}),
}
GENERIC: tuple[Any, Any] = ({"target": "n1"}, {"healed": ["n1"]})
_ABSENT: Any = object()


def fault_ops(kind: str) -> tuple[str, str, Any, Any]:
    """(start f, stop f, start value, stop value) of a simulated ``kind`` fault.

    The ops are the registry's (a kind's first start and its stop), so every
    registered kind can be simulated; only the values are made up here.
    """
    fault = fault_kind(kind)
    return (fault.starts[0], fault.stop, *VALUES.get(kind, GENERIC))


@dataclass
class Summary:
    """What the run block of a synthetic results.json reports."""

    lines: int
    duration_ns: int
    counts: dict[str, int]


@dataclass
class _Client:
    process: int
    role: Role
    keys: list[str]
    positions: dict[str, int] = field(default_factory=dict)
    pending: tuple[str, Any] | None = None
    needs_assign: bool = False


class Simulation:
    """One synthetic run of about ``ops`` lines, written to ``out`` (see the module doc)."""

    def __init__(self, out: BinaryIO, shape: Shape, *, ops: int, seed: int) -> None:
        self.out = out
        self.shape = shape
        self.target = ops
        self.rng = random.Random(seed)
        self.keys = [f"t0-{i}" for i in range(shape.keys)]
        self.kafka = Kafka(self.keys)
        self.index = 0
        self.last_time = 0
        self.now = 0
        self.next_value = 1
        self.next_process = 0
        self.buf: list[bytes] = []
        self.fault_on = False
        self.inject = set(shape.inject)
        self.counts = {"ok": 0, "fail": 0, "info": 0, "acked_sends": 0, "faults": 0}
        self._follow: str | None = None  # the key whose next record gets the duplicate
        self.clients = [self._client(i, role) for i, role in enumerate(shape.roles)]
        self._mu = math.log(shape.latency_ms * MS)

    def _client(self, i: int, role: Role) -> _Client:
        n, owns = len(self.keys), self.shape.owns
        keys = [self.keys[(i * owns + j) % n] for j in range(owns)]
        return _Client(self._fresh(), role, sorted(set(keys)), needs_assign=role.reads)

    def _fresh(self) -> int:
        self.next_process += 1
        return self.next_process - 1

    # --- the history -------------------------------------------------------------

    def emit(self, time: int, process: int | str, type_: str, f: str, value: Any = _ABSENT,
             *, error: Any = None) -> None:
        # the harness stamps a line when it writes it: times never go backwards in the file
        self.last_time = time = max(time, self.last_time)
        op: dict[str, Any] = {"index": self.index, "time": time, "process": process,
                              "type": type_, "f": f}
        if value is not _ABSENT:
            op["value"] = value
        if error is not None:
            op["error"] = error
        self.buf.append(orjson.dumps(op))
        self.index += 1
        if type_ in self.counts and process != "nemesis":
            self.counts[type_] += 1
        if len(self.buf) >= 4096:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.out.write(b"\n".join(self.buf) + b"\n")
            self.buf = []

    # --- the run -----------------------------------------------------------------

    def run(self) -> Summary:
        """Write the whole history: the main phase, the last completions, heal, drain."""
        rng, faults = self.rng, self.shape.faults
        events = [(rng.randrange(5 * MS), i, i) for i in range(len(self.clients))]
        heapq.heapify(events)
        seq = len(events)
        fault_i = 0
        next_fault = self.shape.interval_ns if faults else None
        # what comes after the main phase: the last completions, a heal, the drain
        budget = self.target - len(self.clients) - 4 - 2 * len(self.keys)
        t = 0
        while self.index < budget:
            if next_fault is not None and events[0][0] >= next_fault:
                t = next_fault
                start_f, stop_f, start_v, stop_v = fault_ops(faults[fault_i % len(faults)])
                if self.fault_on:
                    self._nemesis(t, stop_f, stop_v)
                    fault_i += 1
                else:
                    self._nemesis(t, start_f, start_v)
                    self.counts["faults"] += 1
                self.fault_on = not self.fault_on
                next_fault = t + self.shape.interval_ns
                continue
            t, _, ci = heapq.heappop(events)
            client = self.clients[ci]
            if client.pending is None:
                done = t + self._invoke(t, client)
            else:
                self._complete(t, client)
                done = t + self._think()
            heapq.heappush(events, (done, seq, ci))
            seq += 1
        while events:  # let every pending op complete
            t, _, ci = heapq.heappop(events)
            if self.clients[ci].pending is not None:
                self._complete(t, self.clients[ci])
        if self.fault_on:
            _, stop_f, _, stop_v = fault_ops(faults[fault_i % len(faults)])
            t += 10 * MS
            self._nemesis(t, stop_f, stop_v)
            self.fault_on = False
        self._drain(t + 100 * MS)
        self.flush()
        return Summary(self.index, self.now, dict(self.counts))

    def _nemesis(self, t: int, f: str, value: Any) -> None:
        self.emit(t, "nemesis", "invoke", f, None)
        self.emit(t + 3 * MS, "nemesis", "info", f, value)
        self.now = t + 3 * MS

    def _latency(self) -> int:
        scale = self.shape.slowdown if self.fault_on else 1.0
        spread = self.shape.latency_spread
        base = math.exp(self._mu) if spread <= 0 else self.rng.lognormvariate(self._mu, spread)
        return int(base * scale)

    def _think(self) -> int:
        mean = self.shape.think_ms * MS
        return int(self.rng.expovariate(1 / mean)) if mean > 0 else 0

    def _outcome(self) -> str:
        on = 1 if self.fault_on else 0
        p_fail, p_info = self.shape.p_fail[on], self.shape.p_info[on]
        r = self.rng.random()
        return "fail" if r < p_fail else "info" if r < p_fail + p_info else "ok"

    def _invoke(self, t: int, client: _Client) -> int:
        rng, shape = self.rng, self.shape
        value: Any
        if client.needs_assign:
            f, value = "assign", list(client.keys)
        else:
            f = client.role.pick(rng.random())
            if f == "send":
                value = [self._send_mop() for _ in range(rng.randint(*shape.batch))]
            elif f == "poll":
                value = [["poll"]]
            else:
                polls = client.role.txn_polls
                value = [["poll"] if rng.random() < polls else self._send_mop()
                         for _ in range(rng.randint(*shape.txn_len))]
        client.pending = (f, value)
        self.emit(t, client.process, "invoke", f, value)
        return self._latency()

    def _send_mop(self) -> list[Any]:
        self.next_value += 1
        return ["send", self.rng.choice(self.keys), self.next_value - 1]

    def _complete(self, t: int, client: _Client) -> None:
        assert client.pending is not None
        self.now = t
        f, value = client.pending
        client.pending = None
        outcome = self._outcome()
        error = None
        if outcome == "fail":
            error = self.rng.choice(FAIL_ERRORS)
        elif outcome == "info":
            error = self.rng.choice(INFO_ERRORS)
        if f == "assign":
            if outcome != "fail":
                client.needs_assign = False  # positions stay: it resumes as from committed offsets
            self.emit(t, client.process, outcome, f, value, error=error)
        else:
            result = self._apply(client, f, value, outcome)
            self.emit(t, client.process, outcome, f, _ABSENT if result is None else result,
                      error=error)
        if outcome == "info":
            client.process = self._fresh()
            client.needs_assign = client.role.reads

    def _apply(self, client: _Client, f: str, value: list[Any], outcome: str) -> list[Any] | None:
        """Run the op's micro-ops against the logs; the completion's value (None: omit it)."""
        ok = outcome == "ok"
        commit = ok or (outcome == "info" and self.rng.random() < 0.5)
        positions = dict(client.positions)
        result: list[Any] = []
        opened: list[tuple[str, int]] = []
        acked = 0
        for i, mop in enumerate(value):
            if mop[0] == "poll":
                result.append(["poll", self._poll(client, positions, plant=ok)])
                continue
            _, k, v = mop
            log = self.kafka.logs[k]
            if f == "txn":
                offset = log.append(v, OPEN)
                opened.append((k, offset))
            elif commit or (outcome == "fail" and self._take("G1a")):
                offset = self._land(value, i, ok)
            else:
                continue  # a failed send, or an info one that did not land, wrote nothing
            result.append(["send", k, [offset, v]])
            acked += 1
        self._follow = None
        if opened:
            self.kafka.resolve(opened, commit)
        if ok:
            client.positions = positions
            for k, position in positions.items():
                self.kafka.acknowledge_read(k, position)
            self.counts["acked_sends"] += acked
            return result
        return result if outcome == "fail" and f != "send" and self.rng.random() < 0.5 else None

    def _land(self, value: list[Any], i: int, ok: bool) -> int:
        """Append plain send ``value[i]``; lose it (``loss``, ``lost-write``) or duplicate it.

        Asked for both, ``lost-write`` and ``duplicate`` go into one batch that writes
        a key twice: its first record lost, the next one duplicated (a retried batch),
        so the batch's own offsets skip and the informational int-send-skip shows too.
        """
        _, k, v = value[i]
        pair = "lost-write" in self.inject and "duplicate" in self.inject
        again = any(m[0] == "send" and m[1] == k for m in value[i + 1:])
        state = COMMITTED
        if ok and self.fault_on and self.rng.random() < self.shape.loss:
            state = LOST
        elif (again or not pair) and self._take("lost-write", ok):
            state, self._follow = LOST, k if pair else None
        offset = self.kafka.logs[k].append(v, state)
        waiting = self._follow is not None  # this batch lost a record: its next one
        if (state == COMMITTED and (self._follow == k if waiting else not pair)
                and self._take("duplicate", ok)):
            self.kafka.logs[k].append(v, COMMITTED)
        return offset

    def _take(self, kind: str, ok: bool = True) -> bool:
        """Plant ``kind`` here? Once, while a fault is in force, after a third of the run."""
        if kind in self.inject and ok and self.fault_on and self.index > self.target // 3:
            self.inject.discard(kind)
            return True
        return False

    def _poll(self, client: _Client, positions: dict[str, int],
              plant: bool) -> dict[str, list[list[int]]]:
        out: dict[str, list[list[int]]] = {}
        lo, hi = self.shape.poll_limit
        for k in client.keys:
            want = lo if lo == hi else self.rng.randint(lo, hi)
            records, positions[k] = self.kafka.read(k, positions.get(k, 0), want)
            if records:
                if plant and self.next_value > 10 and self._take("inconsistent-offsets"):
                    self.kafka.misread(k, records[0][0])
                    records[0] = [records[0][0], self._ghost(k)]
                out[k] = records
        return out

    def _ghost(self, k: str) -> int:
        """A value sent by an ``info`` op that never landed, read at an occupied offset."""
        v = self.next_value
        self.next_value += 1
        p = self._fresh()
        self.emit(self.now - MS, p, "invoke", "send", [["send", k, v]])
        self.emit(self.now, p, "info", "send", error="REQUEST_TIMED_OUT")
        return v

    def _drain(self, t: int) -> None:
        """A fresh reader assigns every key and reads all that nobody read yet."""
        p = self._fresh()
        self.emit(t, p, "invoke", "assign", list(self.keys))
        self.emit(t + MS, p, "ok", "assign", list(self.keys))
        t += 2 * MS
        for k in self.keys:
            log = self.kafka.logs[k]
            position = self.kafka.unread_from(k)
            while position < len(log):
                chunk, position = log.read(position, self.shape.drain_limit)
                if chunk:
                    self.emit(t, p, "invoke", "poll", [["poll"]])
                    t += 2 * MS
                    self.emit(t, p, "ok", "poll", [["poll", {k: chunk}]])
        self.now = t
