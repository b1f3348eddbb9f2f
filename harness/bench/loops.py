"""The loops ``insync bench run`` compares the insync run with: a bare confluent-kafka
producer loop of the same shape, a free-running producer (the cluster's ceiling), and
the harness on an in-memory Kafka (what the runner costs without a cluster).

Each returns a ``Loop``: acknowledged sends over wall time, and this process's CPU.
"""

from __future__ import annotations

import random
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from workloads.queue.options import PARTITIONS_PER_TOPIC as PARTITIONS  # the run's topics


@dataclass(frozen=True)
class Loop:
    """One measured loop: acknowledged sends over wall time, and this process's CPU
    (None where it cannot be told apart from work outside the loop)."""

    acked: int
    seconds: float
    cpu_s: float | None

    @property
    def rate(self) -> float:
        return self.acked / self.seconds if self.seconds else 0.0

    @property
    def cpu_share(self) -> float | None:
        if self.cpu_s is None:
            return None
        return self.cpu_s / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        share = self.cpu_share
        return {"acked": self.acked, "seconds": round(self.seconds, 3),
                "sends_s": round(self.rate, 1),
                "cpu_share": None if share is None else round(share, 3)}


def cpu_time() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- bare confluent-kafka ----------------------------------------------------------------


class ProducerLike(Protocol):
    """The few calls of ``confluent_kafka.Producer`` the bare loops make."""

    def produce(self, topic: str, *, value: bytes, partition: int, on_delivery: Any) -> None: ...

    def poll(self, timeout: float) -> int: ...

    def flush(self, timeout: float) -> int: ...


MakeProducer = Callable[[int], ProducerLike]


def op_size(rng: random.Random, sends_per_op: int) -> int:
    """Records in one op, 1 to ``sends_per_op`` uniformly, as ``QueueGen`` draws them."""
    return 1 + rng.randrange(sends_per_op)


def _collect(acked: list[bool]) -> Callable[[Any, Any], None]:
    """A delivery callback noting into ``acked`` whether each record was delivered."""
    return lambda err, msg: acked.append(err is None)


def bare_loop(make: MakeProducer, topic: str, *, producers: int, sends_per_op: int,
              seconds: float, timeout_s: float = 15.0) -> Loop:
    """``producers`` threads, each producing an op's records to one partition and waiting
    for their reports, repeatedly. Counts the records of ops that ended in the window."""
    counts = [0] * producers
    stop = threading.Event()
    ready = threading.Barrier(producers + 1)

    def worker(i: int) -> None:
        prod = make(i)
        prod.produce(topic, value=b"warm-up", partition=i % PARTITIONS,
                     on_delivery=lambda err, msg: None)
        prod.flush(60)  # a producer id and connections before the clock starts
        rng = random.Random(i)
        ready.wait(120)
        end = time.monotonic() + seconds
        n = 0
        while not stop.is_set():
            size, partition = op_size(rng, sends_per_op), rng.randrange(PARTITIONS)
            acked: list[bool] = []
            delivered = _collect(acked)
            for _ in range(size):
                prod.produce(topic, value=str(n).encode(), partition=partition,
                             on_delivery=delivered)
                n += 1
            deadline = time.monotonic() + timeout_s
            while len(acked) < size and time.monotonic() < deadline:
                prod.poll(min(1.0, deadline - time.monotonic()))
            if time.monotonic() <= end:
                counts[i] += sum(acked)
        prod.flush(timeout_s)

    pool = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(producers)]
    for t in pool:
        t.start()
    ready.wait(120)  # every producer is connected: time the steady state only
    cpu0 = cpu_time()
    time.sleep(seconds)
    stop.set()
    cpu = cpu_time() - cpu0
    for t in pool:
        t.join(timeout_s + 5)
    return Loop(sum(counts), seconds, cpu)


def free_loop(make: MakeProducer, topic: str, seconds: float) -> Loop:
    """One producer producing as fast as its queue allows: the cluster's ceiling."""
    prod = make(0)
    prod.produce(topic, value=b"warm-up", partition=0, on_delivery=lambda err, msg: None)
    prod.flush(60)
    acked = [0]
    cpu0, t0 = cpu_time(), time.monotonic()
    end = t0 + seconds

    def delivered(err: Any, msg: Any) -> None:
        if err is None and time.monotonic() <= end:
            acked[0] += 1

    n = 0
    while time.monotonic() < end:
        try:
            prod.produce(topic, value=str(n).encode(), partition=n % PARTITIONS,
                         on_delivery=delivered)
            n += 1
        except BufferError:  # the queue is full: serve reports until there is room
            prod.poll(0.01)
            continue
        if n % 1000 == 0:
            prod.poll(0)
    prod.flush(15)
    return Loop(acked[0], seconds, cpu_time() - cpu0)


# -- the harness without Kafka -------------------------------------------------------------


class _MemoryClient:
    """Acknowledges every send at once from a list per key; reads nothing."""

    def __init__(self, logs: dict[str, list[int]], lock: threading.Lock) -> None:
        self.logs, self.lock = logs, lock

    def prepare(self, op: Any) -> None:
        pass

    def invoke(self, op: Any) -> Any:
        from workloads.client import Completed

        if op["f"] == "crash":
            return Completed("info", None, "crashed on purpose")
        if op["f"] == "poll":
            return Completed("ok", [["poll", {}]])
        if op["f"] != "send":
            return Completed("ok", op["value"])
        out = []
        with self.lock:
            for _, key, value in op["value"]:
                log = self.logs.setdefault(key, [])
                log.append(value)
                out.append(["send", key, [len(log) - 1, value]])
        return Completed("ok", out)

    def close(self) -> None:
        pass


def memory_loop(opts: Any, seconds: float, workdir: Path) -> Loop:
    """The run's generator (no rate limit), interpreter, workers and history, no Kafka."""
    from harness.base.history import HistoryWriter
    from harness.gen import clients, time_limit
    from harness.run.interpreter import Interpreter
    from harness.run.stats import Stats
    from workloads import workload_of

    logs: dict[str, list[int]] = {}
    lock = threading.Lock()
    history = HistoryWriter(workdir / "memory-history.jsonl")
    stats = Stats()
    interp = Interpreter(history=history, concurrency=opts.concurrency, seed=1,
                         start_ns=time.monotonic_ns(), observers=(stats.observe,),
                         client_factory=lambda thread, process: _MemoryClient(logs, lock))
    gen = time_limit(seconds, clients(workload_of(opts.workload).generator(opts)))
    interp.start()
    cpu0, t0 = cpu_time(), time.monotonic()
    try:
        interp.run(gen)
        elapsed, cpu = time.monotonic() - t0, cpu_time() - cpu0
    finally:
        interp.stop(30)
        history.close()
    return Loop(stats.acked_sends, elapsed, cpu)
