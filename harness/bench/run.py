"""``insync bench run``: how many acknowledged sends per second does ``insync run`` record?

In one invocation, on one real cluster (``--nodes``, default 3; removed at the
end unless ``--keep-cluster``), three loops run one after the other:

* **insync**: a fault-free ``insync run`` of ``--seconds`` (default 30) at
  default settings: the real runner, generator, clients, history, drain and
  checker. Its rate is the acknowledged sends it recorded in the main phase,
  over that phase's length (``results.json``'s ``run.coverage``:
  ``acked_sends_main`` and ``main_s``).
* **bare**: confluent-kafka and nothing else, with the *same* producer settings
  (the run's own ``client_options(...).producer_config``) and the same shape of
  load: as many producers as the run had client threads, each producing one
  op's worth of records (1 to ``--sends-per-op``, drawn as the generator draws
  them) to one partition and waiting for *those* delivery reports before the
  next, as an insync client does. The insync run also polls, joins and records;
  the bare loop only sends.
* **ceiling**: one free-running asynchronous producer, same settings, never
  waiting for a report (only for queue space): what the cluster takes at most.

It also measures the harness without Kafka (**memory**: runner threads,
generator, history, with a client that acknowledges at once), reports each
rate, the ratio insync/bare, the run's mean send ops and records in flight
(from its history), and whether the goals hold: at least
:data:`TARGET_SENDS_S` recorded sends/s and at least :data:`TARGET_RATIO` of
the bare loop.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from workloads.queue.options import PARTITIONS_PER_TOPIC as PARTITIONS  # the run's topics

HELP = "acknowledged sends/s recorded by insync run vs a bare producer loop and a free one"
TARGET_SENDS_S = 2000.0
TARGET_RATIO = 0.5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=3, help="cluster nodes (default: 3)")
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="main phase of the run, and the bare loop (default: 30)")
    parser.add_argument("--ceiling-seconds", type=float, default=10.0,
                        help="free-running producer, and the in-memory harness (default: 10)")
    parser.add_argument("--cluster-name", default="run-bench")
    parser.add_argument("--results-dir", default="results",
                        help="where the measured run is stored (default: ./results)")
    parser.add_argument("--keep-cluster", action="store_true",
                        help="leave the cluster running afterwards")
    parser.add_argument("--run-option", action="append", default=[], metavar="FLAG=VALUE",
                        help="an insync run option away from its default, e.g. "
                        "sends-per-op=64 or concurrency=16 (repeatable; the bare loop follows)")
    parser.add_argument("--profile", metavar="HTML", default=None,
                        help="profile the insync run with pyinstrument into this file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


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


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_flags(args: argparse.Namespace) -> list[str]:
    """The ``insync run`` flags of the measured run: defaults, but for length and place."""
    flags = ["--nodes", str(args.nodes), "--time-limit", str(args.seconds),
             "--cluster-name", args.cluster_name, "--results-dir", args.results_dir,
             "--name", "bench-run", "--seed", "1"]
    for item in args.run_option:
        flag, sep, value = item.partition("=")
        if not sep:
            from harness.base.errors import UsageError

            raise UsageError(f"--run-option {item!r} is not FLAG=VALUE",
                             hint="e.g. --run-option sends-per-op=64")
        flags += [f"--{flag.removeprefix('--')}", value]
    return flags


# -- the insync run ----------------------------------------------------------------------


def send_load(history: Iterable[dict[str, Any]], seconds: float) -> dict[str, float]:
    """The run's mean send ops and records in flight over ``seconds`` (Little's law: the
    summed durations of its send ops, plain or weighted by their records), and records
    per op. Ops whose completion is missing are left out."""
    started: dict[Any, tuple[int, int]] = {}
    op_ns = record_ns = ops = records = 0
    for op in history:
        if op.get("f") != "send":
            continue
        if op["type"] == "invoke":
            started[op["process"]] = (op["time"], len(op["value"]))
        elif op["process"] in started:
            t0, n = started.pop(op["process"])
            op_ns += op["time"] - t0
            record_ns += (op["time"] - t0) * n
            ops, records = ops + 1, records + n
    span = seconds * 1e9
    return {"send_ops_in_flight": round(op_ns / span, 2) if span else 0.0,
            "records_in_flight": round(record_ns / span, 1) if span else 0.0,
            "records_per_op": round(records / ops, 2) if ops else 0.0}


def insync_loop(
    flags: list[str], profile: str | None, owned: list[str]
) -> tuple[Loop, Any, dict[str, Any]]:
    """The measured ``insync run``: its main phase's rate, its options and what it did.
    ``owned`` gets the cluster's name once the run has brought it up."""
    from harness.run import parse, run

    opts = parse(flags).validate().resolved()
    profiler: Any = None
    if profile:
        import importlib

        profiler = importlib.import_module("pyinstrument").Profiler()  # optional dependency
        profiler.start()
    cpu0 = _cpu()
    try:
        result = run(opts, say=lambda msg: print(f"bench: {msg}"), live=False,
                     on_cluster=owned.append)
    finally:
        if profiler is not None:
            profiler.stop()
            Path(profile or "profile.html").write_text(profiler.output_html())
    summary = result.summary
    cov = summary.get("coverage") or {}  # results.coverage: acks inside the main phase
    seconds = float(cov.get("main_s") or 0.0)
    loop = Loop(int(cov.get("acked_sends_main") or 0), seconds, None)  # the run is more than main
    facts = {"valid": result.verdict.get("valid"), "ops": summary.get("ops"),
             "cpu_s_whole_run": round(_cpu() - cpu0, 1),
             "info": summary.get("info"), "run_dir": str(result.run_dir.path),
             **send_load(result.run_dir.history(), seconds)}
    return loop, opts, facts


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
    cpu0 = _cpu()
    time.sleep(seconds)
    stop.set()
    cpu = _cpu() - cpu0
    for t in pool:
        t.join(timeout_s + 5)
    return Loop(sum(counts), seconds, cpu)


def free_loop(make: MakeProducer, topic: str, seconds: float) -> Loop:
    """One producer producing as fast as its queue allows: the cluster's ceiling."""
    prod = make(0)
    prod.produce(topic, value=b"warm-up", partition=0, on_delivery=lambda err, msg: None)
    prod.flush(60)
    acked = [0]
    cpu0, t0 = _cpu(), time.monotonic()
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
    return Loop(acked[0], seconds, _cpu() - cpu0)


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
    cpu0, t0 = _cpu(), time.monotonic()
    try:
        interp.run(gen)
        elapsed, cpu = time.monotonic() - t0, _cpu() - cpu0
    finally:
        interp.stop(30)
        history.close()
    return Loop(stats.acked_sends, elapsed, cpu)


# -- the whole benchmark -------------------------------------------------------------------


def verdict(loops: dict[str, Loop]) -> dict[str, Any]:
    """The ratio insync/bare and whether each goal holds."""
    insync, bare = loops["insync"], loops["bare"]
    ratio = insync.rate / bare.rate if bare.rate else None
    return {"ratio": None if ratio is None else round(ratio, 3),
            "target_sends_s": TARGET_SENDS_S, "target_ratio": TARGET_RATIO,
            "meets_sends_s": insync.rate >= TARGET_SENDS_S,
            "meets_ratio": ratio is not None and ratio >= TARGET_RATIO}


def render(result: dict[str, Any]) -> str:
    loops, run = result["loops"], result["run"]
    s = run["settings"]
    lines = [f"nodes {result['nodes']}, {s['concurrency']} client threads/producers, "
             f"1-{s['sends_per_op']} records per op, producer {json.dumps(s['producer'])}"]
    names = {"insync": "insync run (recorded)", "bare": "bare producer loop",
             "ceiling": "free-running producer", "memory": "harness, no Kafka"}
    for name, label in names.items():
        loop = loops[name]
        share = loop["cpu_share"]
        cpu = "n/a (see the run's)" if share is None else f"{share:.0%} of one core"
        lines.append(f"  {label:22}: {loop['sends_s']:8.0f} acked sends/s over "
                     f"{loop['seconds']:.0f}s, CPU {cpu}")
    lines.append(f"  insync run: valid {run['valid']}, {run['ops']} ops, CPU "
                 f"{run.get('cpu_s_whole_run')}s in all (cluster, run, drain, check), "
                 f"{run['send_ops_in_flight']} send ops / {run['records_in_flight']} records "
                 f"in flight, {run['records_per_op']} records per send op ({run['run_dir']})")
    v = result["verdict"]
    lines.append(f"  ratio insync/bare: {v['ratio']} (goal >= {v['target_ratio']}: "
                 f"{'met' if v['meets_ratio'] else 'NOT met'}); recorded sends/s goal >= "
                 f"{v['target_sends_s']:.0f}: {'met' if v['meets_sends_s'] else 'NOT met'}")
    return "\n".join(lines)


def measure(args: argparse.Namespace, flags: list[str], owned: list[str]) -> dict[str, Any]:
    """Every loop, on the cluster the insync run brings up (and leaves running)."""
    from confluent_kafka.cimpl import NewTopic

    from cluster import provisioner_for
    from cluster.kafka_clients import admin, producer
    from workloads.queue.options import client_options

    loops: dict[str, Loop] = {}
    loops["insync"], opts, facts = insync_loop(flags, args.profile, owned)
    bootstrap = provisioner_for().attach(args.cluster_name).bootstrap
    settings = client_options(opts, bootstrap=bootstrap)

    def make(i: int) -> ProducerLike:
        made: ProducerLike = producer(bootstrap, **settings.producer_config(i))
        return made

    topic = f"bench-bare-{int(time.time())}"
    new = NewTopic(topic, num_partitions=PARTITIONS, replication_factor=opts.replication_factor,
                   config={"min.insync.replicas": str(opts.min_insync)})
    client = admin(bootstrap)  # held: a collected client destroys its handle mid-request
    client.create_topics([new])[topic].result(60)
    loops["bare"] = bare_loop(make, topic, producers=opts.concurrency,
                              sends_per_op=opts.sends_per_op, seconds=args.seconds)
    loops["ceiling"] = free_loop(make, topic, args.ceiling_seconds)
    client.delete_topics([topic])[topic].result(60)
    with tempfile.TemporaryDirectory() as tmp:
        loops["memory"] = memory_loop(opts, args.ceiling_seconds, Path(tmp))
    conf = settings.producer_config(0)
    conf.pop("transactional.id", None)
    settings_used = {"concurrency": opts.concurrency, "sends_per_op": opts.sends_per_op,
                     "rate": opts.rate, "producer": conf}
    return {
        "nodes": args.nodes,
        "run": {**facts, "argv": flags, "settings": settings_used},
        "loops": {name: loop.as_dict() for name, loop in loops.items()},
        "verdict": verdict(loops),
    }


def main(args: argparse.Namespace) -> int:
    from cluster import provisioner_for
    from harness.run import parse

    flags = run_flags(args)
    parse(flags).validate()  # bad options: one UsageError line before Docker is asked anything
    owned: list[str] = []  # the cluster, once the run has brought it up
    try:
        result = measure(args, flags, owned)
    finally:
        if owned and not args.keep_cluster:
            provisioner_for().down(owned[0])
    print(json.dumps(result) if args.json else render(result))
    return 0
