"""Synthetic run directories for the reports: a realistic history with faults, fast at 1M ops.

The report, its benchmark and its tests need runs that look like real ones
(concurrent clients, latencies that jump while a fault is in force, ``fail`` and
``info`` ops, processes retired after ``info``, transactions, nemesis start/stop
pairs, a final drain) without a Kafka cluster. This module simulates one in
virtual time, event by event, and writes ``history.jsonl`` and ``test.json`` in
the formats of docs/HISTORY.md and results/LAYOUT.md.

Every op takes effect atomically when it completes and events are handled in
time order, so the history is valid unless an anomaly is asked for with
``inject``: each injected kind plants one real instance (e.g. ``lost-write``: an
acknowledged record that every reader skips), for the checker to find.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

MS = 1_000_000
INJECTABLE = ("lost-write", "duplicate", "inconsistent-offsets", "G1a")
#: (kind, start f, stop f, start value, stop value) of the faults a run cycles through.
FAULTS: dict[str, tuple[str, str, Any, Any]] = {
    "partition": ("start-partition", "stop-partition",
                  {"isolated": [["n1"], ["n2", "n3"]]}, {"healed": ["n1", "n2", "n3"]}),
    "kill": ("kill", "start", {"killed": {"n2": 4242}}, {"started": ["n2"]}),
    "pause": ("pause", "resume", {"paused": ["n3"]}, {"resumed": ["n3"]}),
    "clock": ("bump-clock", "reset-clock", {"n1": 250}, {"reset": ["n1"]}),
}


@dataclass
class _Client:
    process: int
    keys: list[str]
    positions: dict[str, int] = field(default_factory=dict)
    pending: tuple[str, Any, int] | None = None  # f, invoke value, invoke time
    needs_assign: bool = True


class _Sim:
    """One simulated run: clients, per-key logs, the fault schedule and the history file."""

    def __init__(
        self, out: BinaryIO, *, ops: int, seed: int, concurrency: int, keys: int,
        faults: list[str], interval_s: float, inject: Iterable[str],
    ) -> None:
        self.out = out
        self.target = ops
        self.rng = random.Random(seed)
        self.keys = [f"t0-{i}" for i in range(keys)]
        #: key -> list of (value or None for a hole, readable)
        self.logs: dict[str, list[tuple[int | None, bool]]] = {k: [] for k in self.keys}
        self.read_floor = dict.fromkeys(self.keys, 0)
        self.read: dict[str, set[int]] = {k: set() for k in self.keys}
        self.index = 0
        self.last_time = 0
        self.next_value = 1
        self.next_process = 0
        self.buf: list[bytes] = []
        self.faults = faults
        self.interval = int(interval_s * 1e9)
        self.fault_on = False
        self.now = 0
        self.inject = set(inject)
        unknown = self.inject - set(INJECTABLE)
        if unknown:
            raise ValueError(f"cannot inject {sorted(unknown)}; known: {INJECTABLE}")
        self.hidden: set[tuple[str, int]] = set()
        self.open: set[tuple[str, int]] = set()
        self.clients = [self._client(i, concurrency) for i in range(concurrency)]

    def _client(self, i: int, n: int) -> _Client:
        k = len(self.keys)
        keys = sorted({self.keys[i % k], self.keys[(i + n) % k], self.keys[(i * 7 + 3) % k]})
        self.next_process += 1
        return _Client(self.next_process - 1, keys)

    # --- history ---------------------------------------------------------------

    def emit(self, time: int, process: int | str, type_: str, f: str, value: Any = None, *,
             error: Any = None, with_value: bool = True) -> None:
        # the harness stamps a line when it writes it: times never go backwards in the file
        self.last_time = time = max(time, self.last_time)
        op: dict[str, Any] = {"index": self.index, "time": time, "process": process,
                              "type": type_, "f": f}
        if with_value:
            op["value"] = value
        if error is not None:
            op["error"] = error
        self.buf.append(orjson.dumps(op))
        self.index += 1
        if len(self.buf) >= 4096:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.out.write(b"\n".join(self.buf) + b"\n")
            self.buf = []

    # --- the run ---------------------------------------------------------------

    def run(self) -> None:
        events: list[tuple[int, int, int]] = []  # time, seq, client (-1: nemesis)
        seq = 0
        for i in range(len(self.clients)):
            events.append((self.rng.randrange(5 * MS), seq, i))
            seq += 1
        fault_i = 0
        next_fault = self.interval if self.faults else None
        heapq.heapify(events)
        budget = self.target - 8 * len(self.clients) - 64
        t = 0
        while self.index < budget:
            if next_fault is not None and events[0][0] >= next_fault:
                t = next_fault
                kind = self.faults[fault_i % len(self.faults)]
                start_f, stop_f, start_v, stop_v = FAULTS[kind]
                if not self.fault_on:
                    self._nemesis(t, start_f, start_v)
                    next_fault = t + self.interval // 2
                else:
                    self._nemesis(t, stop_f, stop_v)
                    fault_i += 1
                    next_fault = t + self.interval // 2
                self.fault_on = not self.fault_on
                continue
            t, _, ci = heapq.heappop(events)
            client = self.clients[ci]
            if client.pending is None:
                done = t + self._invoke(t, client)
            else:
                self._complete(t, client)
                done = t + int(self.rng.expovariate(1 / (4 * MS)))
            heapq.heappush(events, (done, seq, ci))
            seq += 1
        while events:  # let every pending op complete
            t, _, ci = heapq.heappop(events)
            if self.clients[ci].pending is not None:
                self._complete(t, self.clients[ci])
        if self.fault_on:
            start_f, stop_f, _, stop_v = FAULTS[self.faults[fault_i % len(self.faults)]]
            t += 10 * MS
            self._nemesis(t, stop_f, stop_v)
        self._drain(t + 100 * MS)
        self.flush()

    def _nemesis(self, t: int, f: str, value: Any) -> None:
        self.emit(t, "nemesis", "invoke", f, None)
        self.emit(t + 3 * MS, "nemesis", "info", f, value)

    def _latency(self) -> int:
        scale = 40.0 if self.fault_on else 1.0
        return int(self.rng.lognormvariate(1.2, 0.6) * MS * scale)

    def _outcome(self) -> str:
        r = self.rng.random()
        p_fail, p_info = (0.15, 0.04) if self.fault_on else (0.01, 0.001)
        return "fail" if r < p_fail else "info" if r < p_fail + p_info else "ok"

    def _invoke(self, t: int, client: _Client) -> int:
        value: list[Any]
        if client.needs_assign:
            f, value = "assign", list(client.keys)
        else:
            r = self.rng.random()
            if r < 0.5:
                f, value = "send", [self._send_mop() for _ in range(self.rng.randint(1, 3))]
            elif r < 0.9:
                f, value = "poll", [["poll"]]
            else:
                f = "txn"
                value = [self._send_mop() if self.rng.random() < 0.5 else ["poll"]
                         for _ in range(self.rng.randint(1, 3))]
        client.pending = (f, value, t)
        self.emit(t, client.process, "invoke", f, value)
        return self._latency()

    def _send_mop(self) -> list[Any]:
        self.next_value += 1
        return ["send", self.rng.choice(self.keys), self.next_value - 1]

    def _complete(self, t: int, client: _Client) -> None:
        assert client.pending is not None
        self.now = t
        f, value, _ = client.pending
        client.pending = None
        outcome = self._outcome()
        error = None
        if outcome == "fail":
            error = self.rng.choice(["NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS",
                                     "COORDINATOR_NOT_AVAILABLE"])
        elif outcome == "info":
            error = self.rng.choice(["REQUEST_TIMED_OUT", "_MSG_TIMED_OUT", "_TRANSPORT"])
        if f == "assign":
            if outcome != "fail":
                self._assign(client)
            self.emit(t, client.process, outcome, f, value, error=error)
        else:
            result = self._apply(t, client, f, value, outcome)
            self.emit(t, client.process, outcome, f, result, error=error,
                      with_value=result is not None)
        if outcome == "info":
            self.next_process += 1
            client.process = self.next_process - 1
            client.positions = {}
            client.needs_assign = True

    def _assign(self, client: _Client) -> None:
        client.needs_assign = False
        # A fresh consumer resumes near the end (as from committed offsets); the drain
        # reads whatever nobody read.
        client.positions = {k: max(0, len(self.logs[k]) - 3) for k in client.keys}

    def _apply(self, t: int, client: _Client, f: str, value: list[Any],
               outcome: str) -> list[Any] | None:
        """Run the op's micro-ops against the logs; the completion's value (None: omit)."""
        commit = outcome == "ok" or (outcome == "info" and self.rng.random() < 0.5)
        positions = dict(client.positions)
        result: list[Any] = []
        touched: set[str] = set()
        opened: list[tuple[str, int]] = []
        seen: list[tuple[str, int]] = []
        for mop in value:
            if mop[0] == "poll":
                result.append(["poll", self._poll(client, positions, seen)])
                continue
            _, k, v = mop
            log = self.logs[k]
            readable = commit or (outcome == "fail" and f == "send" and self._take("G1a"))
            if outcome == "fail" and f == "send" and not readable:
                continue  # a failed plain send wrote nothing
            if f == "send" and not commit and not readable:
                continue  # an info send that did not land
            # a transaction's records stay invisible (open) until it ends
            log.append((v, readable and f != "txn"))
            result.append(["send", k, [len(log) - 1, v]])
            touched.add(k)
            if f == "txn" and readable:
                opened.append((k, len(log) - 1))
                self.open.add((k, len(log) - 1))
            if readable and self._take("lost-write", ok=outcome == "ok"):
                self.hidden.add((k, v))
            elif readable and self._take("duplicate", ok=outcome == "ok"):
                log.append((v, True))
        for k, o in opened:
            self.logs[k][o] = (self.logs[k][o][0], True)
        self.open.clear()
        if f == "txn":
            for k in touched:
                self.logs[k].append((None, False))  # the transaction marker
        if outcome == "ok":
            client.positions = positions
            for k, o in seen:
                self.read[k].add(o)
            return result
        return result if outcome == "fail" and f != "send" and self.rng.random() < 0.5 else None

    def _take(self, kind: str, ok: bool = True) -> bool:
        """Plant ``kind`` here? Once, while a fault is in force, after a third of the run."""
        if kind in self.inject and ok and self.fault_on and self.index > self.target // 3:
            self.inject.discard(kind)
            return True
        return False

    def _poll(self, client: _Client, positions: dict[str, int],
              seen: list[tuple[str, int]]) -> dict[str, list[list[int]]]:
        out: dict[str, list[list[int]]] = {}
        for k in client.keys:
            log = self.logs[k]
            pos = positions.get(k, 0)
            want = self.rng.randint(1, 6)
            records: list[list[int]] = []
            while pos < len(log) and len(records) < want:
                v, readable = log[pos]
                if (k, pos) in self.open:
                    break  # last stable offset: never read past an open transaction
                if readable and v is not None and (k, v) not in self.hidden:
                    if self._take("inconsistent-offsets") and self.next_value > 10:
                        records.append([pos, self._ghost(k)])
                    else:
                        records.append([pos, v])
                        seen.append((k, pos))
                pos += 1
            positions[k] = pos
            if records:
                out[k] = records
        return out

    def _ghost(self, k: str) -> int:
        """A value sent by an ``info`` op that never landed, read at an occupied offset."""
        v = self.next_value
        self.next_value += 1
        self.next_process += 1
        p = self.next_process - 1
        self.emit(self.now - MS, p, "invoke", "send", [["send", k, v]])
        self.emit(self.now, p, "info", "send", error="REQUEST_TIMED_OUT", with_value=False)
        return v

    def _drain(self, t: int) -> None:
        """A fresh reader assigns every key and reads all that nobody read yet."""
        self.next_process += 1
        p = self.next_process - 1
        self.emit(t, p, "invoke", "assign", list(self.keys))
        self.emit(t + MS, p, "ok", "assign", list(self.keys))
        t += 2 * MS
        for k in self.keys:
            log, seen = self.logs[k], self.read[k]
            start = next((o for o, (v, r) in enumerate(log)
                          if r and v is not None and o not in seen and (k, v) not in self.hidden),
                         len(log))
            while start < len(log):
                chunk = [[o, v] for o, (v, r) in enumerate(log[start:start + 200], start)
                         if r and v is not None and (k, v) not in self.hidden]
                start += 200
                if not chunk:
                    continue
                self.emit(t, p, "invoke", "poll", [["poll"]])
                t += 2 * MS
                self.emit(t, p, "ok", "poll", [["poll", {k: chunk}]])


def write_run(
    run_dir: Path,
    *,
    ops: int = 2000,
    seed: int = 1,
    concurrency: int = 8,
    keys: int = 6,
    faults: Iterable[str] = ("partition", "kill", "pause", "clock"),
    interval_s: float = 2.0,
    inject: Iterable[str] = (),
    name: str = "synthetic",
) -> Path:
    """Write ``history.jsonl`` and ``test.json`` of a simulated run of about ``ops`` lines."""
    run_dir.mkdir(parents=True, exist_ok=True)
    fault_list = list(faults)
    inject_list = list(inject)
    with (run_dir / "history.jsonl").open("wb") as out:
        _Sim(out, ops=ops, seed=seed, concurrency=concurrency, keys=keys, faults=fault_list,
             interval_s=interval_s, inject=inject_list).run()
    argv = ["insync", "run", "--workload", "queue", "--concurrency", str(concurrency),
            "--nemesis", ",".join(fault_list), "--nemesis-interval", str(interval_s),
            "--seed", str(seed)]
    test = {
        "name": name, "argv": argv, "seed": seed, "started": "2026-11-21T03:15:01.123Z",
        "insync_version": "0.1.0",
        "cluster": {"name": "insync", "nodes": 3, "kafka_version": "4.1.x",
                    "kafka_version_exact": "4.1.2", "mode": "kraft", "controllers": 3,
                    "heap_mb": 384, "broker_config": {}, "base_image": None},
        "workload": {"name": "queue", "acks": "all", "idempotence": True, "retries": None,
                     "max_in_flight": 5, "txn": True, "sub_via": "assign",
                     "replication_factor": 3, "min_insync": 2,
                     "unclean_leader_election": False, "rate": 1000,
                     "concurrency": concurrency, "time_limit": 60, "final_time_limit": 60,
                     "synthetic_inject": inject_list},
        "nemesis": {"faults": fault_list, "interval": interval_s, "targets": ["one"],
                    "schedule": None, "partition_clients": False},
    }
    (run_dir / "test.json").write_text(json.dumps(test, indent=2) + "\n")
    return run_dir
