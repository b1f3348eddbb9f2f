"""The loops ``insync bench run`` compares the insync run with: a bare confluent-kafka
producer loop of the same shape, a free-running producer (the cluster's ceiling), and
the harness on an in-memory Kafka (what the runner costs without a cluster).

Each returns a ``Loop``: acknowledged sends over wall time, this process's CPU, and
where it can be told, the ops and the **busy share**: the mean number of threads
inside an op over the number of threads (Little's law: summed op durations over
wall time x threads). A loop of waiting threads can only go faster by keeping more
of them waiting at once, so a busy share well under 1 says the harness, not Kafka,
is what holds the rate down. With a :class:`~harness.bench._fakes.Latency` both the
bare loop (on a ``LatentProducer``) and the memory loop run on the same fake Kafka.
"""

from __future__ import annotations

import random
import resource
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from harness.base.contract import NEMESIS
from harness.bench._fakes import Latency, LatentProducer, MemoryClient
from workloads.queue.options import PARTITIONS_PER_TOPIC as PARTITIONS  # the run's topics


@dataclass(frozen=True)
class Loop:
    """One measured loop: acknowledged sends over wall time, and this process's CPU
    (None where it cannot be told apart from work outside the loop)."""

    acked: int
    seconds: float
    cpu_s: float | None
    ops: int | None = None
    busy: float | None = None  # mean threads inside an op / threads

    @property
    def rate(self) -> float:
        return self.acked / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_send(self) -> float | None:
        """This process's CPU per acknowledged send, in microseconds."""
        if self.cpu_s is None or not self.acked:
            return None
        return self.cpu_s / self.acked * 1e6

    @property
    def cpu_share(self) -> float | None:
        if self.cpu_s is None:
            return None
        return self.cpu_s / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        share, per_send = self.cpu_share, self.cpu_us_per_send
        out: dict[str, Any] = {
            "acked": self.acked, "seconds": round(self.seconds, 3),
            "sends_s": round(self.rate, 1),
            "cpu_share": None if share is None else round(share, 3),
            "cpu_us_per_send": None if per_send is None else round(per_send, 1)}
        if self.ops is not None:
            out["ops_s"] = round(self.ops / self.seconds, 1) if self.seconds else 0.0
        if self.busy is not None:
            out["busy_share"] = round(self.busy, 3)
        return out


def cpu_time() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- bare confluent-kafka ----------------------------------------------------------------


class ProducerLike(Protocol):
    """The few calls of ``confluent_kafka.Producer`` the bare loops make."""

    def produce(self, topic: str, *, value: bytes, partition: int, on_delivery: Any) -> None: ...

    def poll(self, timeout: float) -> int: ...

    def flush(self, timeout: float) -> int: ...


class TxnProducerLike(ProducerLike, Protocol):
    """And the transactional calls, for ``bare_loop(txn=True)``."""

    def init_transactions(self, timeout: float) -> None: ...

    def begin_transaction(self) -> None: ...

    def commit_transaction(self, timeout: float) -> None: ...


MakeProducer = Callable[[int], ProducerLike]


def op_size(rng: random.Random, sends_per_op: int) -> int:
    """Records in one op, 1 to ``sends_per_op`` uniformly, as ``QueueGen`` draws them."""
    return 1 + rng.randrange(sends_per_op)


def _collect(acked: list[bool]) -> Callable[[Any, Any], None]:
    """A delivery callback noting into ``acked`` whether each record was delivered."""
    return lambda err, msg: acked.append(err is None)


def bare_loop(make: MakeProducer, topic: str, *, producers: int, sends_per_op: int,
              seconds: float, timeout_s: float = 15.0, txn: bool = False) -> Loop:
    """``producers`` threads, each producing an op's records to one partition and waiting
    for their reports, repeatedly. Counts the records and ops that ended in the window,
    and the time spent inside ops (from the first produce to the last report).

    ``txn``: transactional producers (``make`` gives them their transactional ids), each
    op a transaction of its own, begun before its records and committed after their
    reports, as an insync ``--txn`` send op is; a record counts once its transaction
    committed."""
    counts = [0] * producers
    op_counts = [0] * producers
    inside = [0.0] * producers
    stop = threading.Event()
    ready = threading.Barrier(producers + 1)

    def worker(i: int) -> None:
        prod = make(i)
        tprod = cast(TxnProducerLike, prod)  # only asked to be one with txn
        if txn:
            tprod.init_transactions(60)  # a producer id and epoch before the clock starts
        else:
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
            began = time.monotonic()
            if txn:
                tprod.begin_transaction()
            for _ in range(size):
                prod.produce(topic, value=str(n).encode(), partition=partition,
                             on_delivery=delivered)
                n += 1
            deadline = time.monotonic() + timeout_s
            while len(acked) < size and time.monotonic() < deadline:
                prod.poll(min(1.0, deadline - time.monotonic()))
            if txn:
                tprod.commit_transaction(timeout_s)
            ended = time.monotonic()
            if ended <= end:
                counts[i] += sum(acked)
                op_counts[i] += 1
                inside[i] += ended - began
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
    return Loop(sum(counts), seconds, cpu, ops=sum(op_counts),
                busy=sum(inside) / (seconds * producers) if seconds else 0.0)


def fake_bare_loop(latency: Latency, *, producers: int, sends_per_op: int,
                   seconds: float) -> Loop:
    """The bare loop's shape on the fake Kafka: what Python costs around the same waits."""
    return bare_loop(lambda i: LatentProducer(latency), "fake", producers=producers,
                     sends_per_op=sends_per_op, seconds=seconds)


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


@dataclass(frozen=True)
class Load:
    """A history's client ops summed up (Little's law): their count and summed durations,
    all ops and send ops apart, and the records the send ops carried."""

    ops: int = 0
    op_ns: int = 0
    send_ops: int = 0
    send_op_ns: int = 0
    records: int = 0
    record_ns: int = 0

    def busy(self, seconds: float, threads: int) -> float:
        """Mean client threads inside an op over ``threads``, across ``seconds``."""
        return self.op_ns / (seconds * 1e9 * threads) if seconds and threads else 0.0


def load_of(history: Iterable[dict[str, Any]]) -> Load:
    """The client ops of ``history``, paired per process; ops never completed are left out."""
    started: dict[Any, tuple[int, str, int]] = {}
    ops = op_ns = send_ops = send_op_ns = records = record_ns = 0
    for op in history:
        if op.get("process") == NEMESIS:
            continue
        if op["type"] == "invoke":
            value = op.get("value") if op["f"] == "send" else None
            started[op["process"]] = (op["time"], op["f"], len(value or ()))
        elif op["process"] in started:
            t0, f, n = started.pop(op["process"])
            took = op["time"] - t0
            ops, op_ns = ops + 1, op_ns + took
            if f == "send":
                send_ops, send_op_ns = send_ops + 1, send_op_ns + took
                records, record_ns = records + n, record_ns + took * n
    return Load(ops, op_ns, send_ops, send_op_ns, records, record_ns)


def memory_loop(opts: Any, seconds: float, workdir: Path, latency: Latency | None = None) -> Loop:
    """The run's main phase as the runner runs it (the workload's generator paced at
    ``--rate``, the later phases listening, the interpreter, workers, history and the
    run's observers) on an in-memory Kafka that answers after ``latency`` (None: at once)."""
    from dataclasses import replace

    from harness.base.history import read_history
    from harness.base.history_writer import HistoryWriter
    from harness.gen.plan import Ahead
    from harness.run.interpreter import Interpreter
    from harness.run.plan import DrainFeed, build_plan
    from harness.run.stats import Stats
    from workloads import workload_of

    workload = workload_of(opts.workload)
    logs: dict[str, list[int]] = {}
    lock = threading.Lock()
    path = workdir / "memory-history.jsonl"
    history = HistoryWriter(path)
    stats, feed = Stats(), DrainFeed(workload.tracker())
    interp = Interpreter(history=history, concurrency=opts.concurrency, seed=1,
                         start_ns=time.monotonic_ns(), observers=(stats.observe, feed.observe),
                         client_factory=lambda thread, process: MemoryClient(logs, lock, latency))
    main = Ahead.first(build_plan(replace(opts, time_limit=seconds), workload))
    interp.start()
    cpu0, t0 = cpu_time(), time.monotonic()
    try:
        interp.run(main)
        elapsed, cpu = time.monotonic() - t0, cpu_time() - cpu0
    finally:
        interp.stop(30)
        history.close()
    load = load_of(read_history(path))
    return Loop(stats.acked_sends, elapsed, cpu, ops=load.ops,
                busy=load.busy(elapsed, opts.concurrency))
