"""``insync bench run``: how many acknowledged sends per second does insync record?

On one real cluster (``--nodes``, default 3; reused if it runs), two loops run
for the same time with the same number of threads and the same producer
settings (acks=all, idempotent, linger 0), each thread waiting for one record's
delivery before the next, as an insync client does:

* **bare**: confluent-kafka ``produce`` + ``flush`` per record, nothing else;
* **insync**: the real path of ``insync run``: generator, interpreter, worker
  threads, ``QueueClient``, and every invoke and completion written and flushed
  to a history file (send-only workload, no rate limit; a process's join does
  not start a consumer here, so the brokers carry the same load as in the bare
  loop);
* **ceiling**: the same path with an in-memory Kafka instead of brokers: how
  fast the harness itself records when the brokers are not the limit (on a
  shared, busy machine they usually are).

It reports both rates, their ratio (the cost of recording) and the process's
CPU share over each loop (``getrusage(RUSAGE_SELF)`` / wall time; it includes
librdkafka's threads, which is why the bare loop's share is shown beside it).
Target: >= 2,000 recorded ops/s on 3 nodes. Sends are latency-bound, so the
rate grows with ``--concurrency`` until the harness (or the brokers) saturate.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HELP = "recorded acknowledged sends/s of insync run vs a bare producer loop"
TARGET_OPS_S = 2000.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=3, help="cluster nodes (default: 3)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=30.0,
        help="per kind of loop, over all rounds (default: 30)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=32, help="client threads in both loops (default: 32)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="alternating bare/insync rounds sharing --seconds (default: 2)",
    )
    parser.add_argument("--cluster-name", default="run-bench")
    parser.add_argument(
        "--keep-cluster", action="store_true", help="leave the cluster running afterwards"
    )
    parser.add_argument(
        "--profile",
        metavar="HTML",
        default=None,
        help="profile the insync loop with pyinstrument into this file",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


@dataclass(frozen=True)
class Loop:
    """One measured loop."""

    acked: int
    seconds: float
    cpu_s: float

    @property
    def rate(self) -> float:
        return self.acked / self.seconds if self.seconds else 0.0

    @property
    def cpu_share(self) -> float:
        return self.cpu_s / self.seconds if self.seconds else 0.0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _producer_config() -> dict[str, Any]:
    return {"acks": "all", "enable.idempotence": True, "linger.ms": 0, "message.timeout.ms": 10_000}


def bare_loop(bootstrap: str, topic: str, partitions: int, threads: int, seconds: float) -> Loop:
    """``threads`` producers, each producing one record and waiting for it, repeatedly."""
    from cluster.kafka_clients import producer

    counts = [0] * threads
    stop = threading.Event()

    ready = threading.Barrier(threads + 1)

    def worker(i: int) -> None:
        prod = producer(bootstrap, **_producer_config())
        prod.produce(topic, b"warm-up", partition=i % partitions)
        prod.flush(60)
        acked: list[int] = []
        n = 0
        ready.wait(120)
        while not stop.is_set():
            prod.produce(
                topic,
                str(n).encode(),
                partition=(i + n) % partitions,
                on_delivery=lambda err, msg: acked.append(1) if err is None else None,
            )
            prod.flush(15)
            n += 1
        counts[i] = len(acked)

    pool = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    for t in pool:
        t.start()
    ready.wait(120)  # every producer has its id: time the steady state only
    cpu0, t0 = _cpu(), time.monotonic()
    time.sleep(seconds)
    stop.set()
    for t in pool:
        t.join(30)
    return Loop(sum(counts), time.monotonic() - t0, _cpu() - cpu0)


def insync_loop(
    bootstrap: str, threads: int, seconds: float, workdir: Path, profile: str | None = None
) -> Loop:
    """The runner's own path, send-only, as fast as it goes, recording every op."""
    from cluster.kafka_clients import admin
    from harness.base.history import HistoryWriter
    from harness.base.rundir import HISTORY
    from harness.gen import clients, time_limit
    from harness.run.interpreter import Interpreter
    from harness.run.stats import Stats
    from workloads.client import Completed
    from workloads.queue.client import QueueClient
    from workloads.queue.config import ClientOptions
    from workloads.queue.generator import QueueGen, QueueOptions
    from workloads.queue.topics import Topics

    token = f"bench{int(time.time())}"
    topics = Topics(
        lambda: admin(bootstrap),
        prefix=f"{token}-",
        partitions=8,
        replication_factor=3,
        config={"min.insync.replicas": "2"},
    )
    topics.ensure(0)
    copts = ClientOptions(bootstrap=bootstrap, group_id=f"{token}-g", seed=1)

    class SendOnlyClient(QueueClient):
        """Joins without a consumer: idle consumers fetching every partition would load
        the brokers, which the bare loop does not, and the ratio would measure that."""

        def invoke(self, op: Any) -> Completed:
            if op["f"] == "assign":
                return Completed("ok", list(op["value"]))
            return super().invoke(op)

    workdir.mkdir(parents=True, exist_ok=True)
    history = HistoryWriter(workdir / HISTORY)
    stats = Stats()
    interp = Interpreter(
        history=history,
        concurrency=threads,
        seed=1,
        start_ns=time.monotonic_ns(),
        client_factory=lambda thread, process: SendOnlyClient(copts, topics, thread, process),
        observers=(stats.observe,),
    )
    gen = time_limit(
        seconds,
        clients(
            QueueGen.start(
                QueueOptions(key_count=8, max_writes_per_key=1024, weights={"send": 1.0})
            )
        ),
    )
    interp.start()
    interp.warm_up()
    interp.start_ns = time.monotonic_ns()
    profiler: Any = None
    if profile:
        import importlib

        profiler = importlib.import_module("pyinstrument").Profiler()  # optional dependency
        profiler.start()
    cpu0, t0 = _cpu(), time.monotonic()
    try:
        interp.run(gen)
        elapsed, cpu = time.monotonic() - t0, _cpu() - cpu0
    finally:
        if profiler is not None:
            profiler.stop()
            Path(profile or "profile.html").write_text(profiler.output_html())
        interp.stop(30)
        history.close()
        try:
            topics.delete_all()
        except Exception as err:  # a benchmark's leftovers are not worth failing over
            print(f"bench: could not delete topics: {err}")
    return Loop(stats.acked_sends, elapsed, cpu)


class _MemoryClient:
    """A client whose Kafka is a list per key: the harness's own ceiling, no broker."""

    def __init__(self, logs: dict[str, list[int]], lock: threading.Lock) -> None:
        self.logs = logs
        self.lock = lock

    def prepare(self, op: Any) -> None:
        pass

    def invoke(self, op: Any) -> Any:
        from workloads.client import Completed

        if op["f"] != "send":  # each process first joins (assigns) the keys
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


def memory_loop(threads: int, seconds: float, workdir: Path) -> Loop:
    """The runner's path (generator, interpreter, workers, history) with no Kafka at all."""
    from harness.base.history import HistoryWriter
    from harness.gen import clients, time_limit
    from harness.run.interpreter import Interpreter
    from harness.run.stats import Stats
    from workloads.queue.generator import QueueGen, QueueOptions

    logs: dict[str, list[int]] = {}
    lock = threading.Lock()
    history = HistoryWriter(workdir / "memory-history.jsonl")
    stats = Stats()
    interp = Interpreter(
        history=history,
        concurrency=threads,
        seed=1,
        start_ns=time.monotonic_ns(),
        client_factory=lambda thread, process: _MemoryClient(logs, lock),
        observers=(stats.observe,),
    )
    gen = time_limit(
        seconds,
        clients(
            QueueGen.start(
                QueueOptions(key_count=8, max_writes_per_key=1024, weights={"send": 1.0})
            )
        ),
    )
    interp.start()
    cpu0, t0 = _cpu(), time.monotonic()
    try:
        interp.run(gen)
        elapsed, cpu = time.monotonic() - t0, _cpu() - cpu0
    finally:
        interp.stop(30)
        history.close()
    return Loop(stats.acked_sends, elapsed, cpu)


def _total(loops: list[Loop]) -> Loop:
    return Loop(
        sum(x.acked for x in loops), sum(x.seconds for x in loops), sum(x.cpu_s for x in loops)
    )


def main(args: argparse.Namespace) -> int:
    from confluent_kafka.cimpl import NewTopic

    from cluster import provisioner_for
    from cluster.kafka_clients import admin
    from cluster.spec import ClusterSpec

    logging.getLogger("insync").addHandler(logging.NullHandler())  # librdkafka chatter
    spec = ClusterSpec(name=args.cluster_name, nodes=args.nodes)
    seconds = args.seconds / args.rounds
    try:
        cluster = provisioner_for().up(spec, say=lambda msg: print(f"bench: {msg}"))
        topic = f"bench-bare-{int(time.time())}"
        client = admin(cluster.bootstrap)
        new = NewTopic(
            topic,
            num_partitions=8,
            replication_factor=min(3, args.nodes),
            config={"min.insync.replicas": "2"},
        )
        client.create_topics([new])[topic].result(60)
        bares, recordeds = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.rounds):  # alternate, so a busy host's drift hits both alike
                bares.append(bare_loop(cluster.bootstrap, topic, 8, args.concurrency, seconds))
                recordeds.append(
                    insync_loop(
                        cluster.bootstrap,
                        args.concurrency,
                        seconds,
                        Path(tmp) / str(i),
                        args.profile,
                    )
                )
            memory = memory_loop(args.concurrency, min(args.seconds, 10.0), Path(tmp))
        client.delete_topics([topic])
        bare, recorded = _total(bares), _total(recordeds)
    finally:
        if not args.keep_cluster:
            provisioner_for().down(args.cluster_name)
    result = {
        "nodes": args.nodes,
        "concurrency": args.concurrency,
        "bare": {
            **asdict(bare),
            "ops_s": round(bare.rate, 1),
            "cpu_share": round(bare.cpu_share, 3),
        },
        "insync": {
            **asdict(recorded),
            "ops_s": round(recorded.rate, 1),
            "cpu_share": round(recorded.cpu_share, 3),
        },
        "memory": {
            **asdict(memory),
            "ops_s": round(memory.rate, 1),
            "cpu_share": round(memory.cpu_share, 3),
        },
        "ratio": round(recorded.rate / bare.rate, 3) if bare.rate else None,
        "target_ops_s": TARGET_OPS_S,
        "meets_target": recorded.rate >= TARGET_OPS_S,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"nodes {args.nodes}, {args.concurrency} threads, {args.seconds:.0f}s per loop kind "
            f"in {args.rounds} alternating rounds"
        )
        print(
            f"  bare producer loop : {bare.rate:8.0f} acked sends/s, CPU "
            f"{bare.cpu_share:.0%} of one core"
        )
        print(
            f"  insync (recorded)  : {recorded.rate:8.0f} acked sends/s, CPU "
            f"{recorded.cpu_share:.0%} of one core"
        )
        print(f"  ratio insync/bare  : {result['ratio']}")
        print(
            f"  harness ceiling    : {memory.rate:8.0f} recorded sends/s with an in-memory "
            f"Kafka, CPU {memory.cpu_share:.0%} of one core"
        )
        print(
            f"  target >= {TARGET_OPS_S:.0f} recorded ops/s: "
            f"{'met' if result['meets_target'] else 'NOT met'}"
        )
    return 0
