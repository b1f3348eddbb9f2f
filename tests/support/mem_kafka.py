"""An in-memory Kafka for the real runner: clients built from a handler function, and a workload.

``MemKafka`` is one append-only list of values per key, shared by every fake
client; each ``MemClient`` keeps its own consumer positions, as a real consumer
does. A test states what its Kafka does to one op (the handler; returning None
means "behave like Kafka"); the real interpreter, workers, history writer and
checker do the rest, in real (short) time.

:func:`fake_workload` wraps such clients in a ``workloads.protocol.Workload``
record, so a test can register it in ``workloads.WORKLOADS`` and run the
real runner on it, with no Kafka and no Docker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.base.history_writer import HistoryWriter
from harness.gen.plan import Phase
from harness.run.interpreter import Interpreter
from harness.run.plan import DrainFeed, drive
from harness.run.stats import Stats
from workloads.client import Completed
from workloads.protocol import CheckerSpec, RunEnv, Workload
from workloads.queue.drain import Drain, DrainTracker
from workloads.queue.generator import QueueGen
from workloads.queue.shape import QueueOptions


@dataclass
class MemKafka:
    """One append-only list of values per key, shared by every fake client."""

    logs: dict[str, list[int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: int = 0
    lose: set[int] = field(default_factory=set)  # values acknowledged but never stored


Handler = Callable[["MemClient", dict[str, Any]], Completed | None]


@dataclass
class MemClient:
    """A fake client: ``handler(client, op)`` decides; the default behaves like Kafka."""

    kafka: MemKafka
    process: int
    handler: Handler
    assigned: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)

    def prepare(self, op: Any) -> None:
        pass

    def invoke(self, op: Any) -> Completed:
        done = self.handler(self, op)
        return done if done is not None else self.kafka_like(op)

    def close(self) -> None:
        with self.kafka.lock:
            self.kafka.closed += 1

    def kafka_like(self, op: dict[str, Any]) -> Completed:
        f, value = op["f"], op["value"]
        k = self.kafka
        with k.lock:
            if f == "send":
                out = []
                for _, key, v in value:
                    log = k.logs.setdefault(key, [])
                    if v not in k.lose:
                        log.append(v)
                    out.append(["send", key, [len(log) - 1 if v not in k.lose else len(log), v]])
                return Completed("ok", out)
            if f == "poll":
                got: dict[str, list[list[int]]] = {}
                for key in self.assigned:
                    log = k.logs.get(key, [])
                    start = self.positions.get(key, 0)
                    recs = [[o, log[o]] for o in range(start, min(len(log), start + 5))]
                    if recs:
                        got[key] = recs
                        self.positions[key] = recs[-1][0] + 1
                return Completed("ok", [["poll", got]])
            if f in ("assign", "subscribe"):
                beginning = op.get("seek") == "beginning"
                self.positions = {
                    key: 0 if beginning else self.positions.get(key, 0) for key in value
                }
                self.assigned = list(value)
                return Completed("ok", value)
            if f == "crash":
                return Completed("info", None, "crash")
        raise AssertionError(f"unexpected op {op}")


def kafka_like(client: MemClient, op: dict[str, Any]) -> Completed | None:
    """The handler of a correct Kafka: leave every op to ``MemClient.kafka_like``."""
    return None


def drive_in_memory(kafka: MemKafka, plan: Sequence[Phase], feed: DrainFeed, history: Path,
                    *, concurrency: int = 3, seed: int = 1) -> Stats:
    """``drive`` the runner's ``plan`` on the real interpreter, a phase at a time, with
    clients of ``kafka`` and ``feed`` told every completion; the history goes to
    ``history``. Returns the run's stats (its phase times)."""
    t0 = time.monotonic_ns()
    writer = HistoryWriter(history, start_ns=t0)
    stats = Stats()
    interp = Interpreter(
        history=writer, concurrency=concurrency, seed=seed, start_ns=t0,
        client_factory=lambda thread, process: MemClient(kafka, process, kafka_like),
        observers=(stats.observe, feed.observe),
    )
    interp.start()
    try:
        drive(interp, plan, stats=stats, feed=feed)
    finally:
        assert interp.stop(5)
        writer.close()
    return stats


@dataclass
class FakeRun:
    """A ``WorkloadRun`` whose clients are ``MemClient`` s; records what the runner asked."""

    kafka: MemKafka
    handler: Handler
    env: RunEnv
    setup_error: Exception | None = None
    calls: list[str] = field(default_factory=list)
    clients: list[tuple[int, int]] = field(default_factory=list)

    def setup(self) -> None:
        self.calls.append("setup")
        if self.setup_error is not None:
            raise self.setup_error

    def client(self, thread: int, process: int) -> MemClient:
        self.clients.append((thread, process))
        return MemClient(self.kafka, process, self.handler)

    def teardown(self) -> None:
        self.calls.append("teardown")


@dataclass(frozen=True)
class NoSettings:
    """The fake workload has no options of its own."""


@dataclass
class FakeWorkload:
    """A fake workload's parts a test inspects after the run: its Kafka and its runs."""

    kafka: MemKafka = field(default_factory=MemKafka)
    runs: list[FakeRun] = field(default_factory=list)


def fake_workload(
    handler: Handler = kafka_like,
    name: str = "fake",
    *,
    writes_per_key: int = 16,
    setup_error: Exception | None = None,
) -> tuple[Workload[Any], FakeWorkload]:
    """A workload record over an in-memory Kafka, with the queue's pure generators.

    Its clients come from ``handler``; it has no options of its own and its
    histories are judged by docs/HISTORY.md's checker. ``setup_error``: its
    ``setup`` raises that (a cluster that refuses the workload's topics).
    """
    state = FakeWorkload()

    def open_run(env: RunEnv, settings: Any) -> FakeRun:
        run = FakeRun(state.kafka, handler, env, setup_error)
        state.runs.append(run)
        return run

    shape = QueueOptions(key_count=2, max_writes_per_key=writes_per_key,
                         weights={"send": 4, "poll": 4, "assign": 0.2, "crash": 0.05})
    workload: Workload[Any] = Workload(
        name=name,
        settings=NoSettings,
        options=(),
        open=open_run,
        generator=lambda s: QueueGen.start(shape),
        final_generator=lambda s: Drain(),
        tracker=DrainTracker,
        block=lambda s: {"fake": True},
        name_parts=lambda s: [name],
        checker=CheckerSpec("history"),
    )
    return workload, state
