"""``insync bench run``: how many acknowledged sends per second does ``insync run`` record?

In one invocation, on one real cluster (``--nodes``, default 3; removed at the
end unless ``--keep-cluster``), after an uncounted warm-up run (``--warm-up-seconds``:
a fresh cluster's brokers are slow at first, and the loop measured first paid for it;
then the bare loop in uncounted slices until its rate holds steady),
the loops run one after the other: the bare loop, then ``--runs`` times (default 3) an
insync run and the bare loop again (``harness.bench.pairs``: the ratio is the median of
each run's ratio to the bare loops either side of it):

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

It also runs the same comparison on a **fake** Kafka made of sleeps
(``harness.bench._fakes``: ``--latency-ms`` per request plus ``--record-ms`` per
record, the waits releasing the GIL as librdkafka's do): **memory**, the run's
main phase as the runner builds it (generator at ``--rate``, interpreter,
workers, history, observers) on an in-memory client with that latency, and
**fake bare**, the bare loop's shape on a producer with that latency. On the
fake the only difference between the two is the harness, so their ratio and the
memory loop's **busy share** (mean client threads inside an op / threads) say
how much of the real gap is insync's own. ``--no-kafka`` runs only this part:
no Docker, no cluster.

It reports each rate, ops/s, busy share and CPU per acknowledged send, the
ratios insync/bare (real) and memory/fake bare, the run's mean send ops and
records in flight (from its history), and whether the goals hold: at least
:data:`TARGET_SENDS_S` recorded sends/s and at least :data:`TARGET_RATIO` of
the bare loop on the real cluster, and at least :data:`TARGET_FAKE_RATIO` of the
fake bare loop.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.bench._fakes import Latency
from harness.bench.loops import (
    Loop,
    ProducerLike,
    bare_loop,
    cpu_time,
    fake_bare_loop,
    free_loop,
    load_of,
    memory_loop,
)
from harness.bench.pairs import bare_loops, interleaved, median_ratio, summed
from harness.bench.run_text import render
from workloads.queue.options import PARTITIONS_PER_TOPIC as PARTITIONS  # the run's topics

HELP = "acknowledged sends/s recorded by insync run vs a bare producer loop and a free one"
TARGET_SENDS_S = 2000.0
TARGET_RATIO = 0.5
#: On the fake Kafka, where only the harness tells the two loops apart.
TARGET_FAKE_RATIO = 0.7
#: A fresh cluster's brokers are slow for their first minute (cold JIT): measured first
#: on one, insync recorded 1,260 sends/s with 106 ms sends; on the same cluster warm,
#: 4,600/s with 10 ms. So an uncounted run of this many seconds goes first.
WARM_UP_S = 20.0
#: That run warms the brokers only partly: on a fresh cluster the bare loop then ran
#: 5,458 sends/s before the measured run and 14,915 after it (2026-11-22), and a mean
#: of the two flattered whichever loop ran in between. So the bare loop then runs in
#: uncounted slices of this many seconds until it stops getting faster: a slice no more
#: than :data:`SETTLED_WITHIN` above the best before it (at least :data:`SETTLE_MIN`,
#: at most :data:`SETTLE_SLICES` slices). "Two slices within 10%" was not enough: a
#: fresh cluster climbed 3,778 / 4,540 / 5,360 / 5,680 and stopped there, then ran
#: 13,000 during the measured loops.
SETTLE_SLICE_S = 10.0
SETTLED_WITHIN = 0.03
SETTLE_MIN = 3
SETTLE_SLICES = 18


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=int, default=3, help="cluster nodes (default: 3)")
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="main phase of the run, and the bare loop (default: 30)")
    parser.add_argument("--ceiling-seconds", type=float, default=10.0,
                        help="free-running producer, and each loop on the fake Kafka "
                        "(default: 10)")
    parser.add_argument("--latency-ms", type=float, default=Latency.op_ms,
                        help=f"the fake Kafka's time per request (default: {Latency.op_ms:g})")
    parser.add_argument("--record-ms", type=float, default=Latency.record_ms,
                        help=f"and per record (default: {Latency.record_ms:g})")
    parser.add_argument("--no-kafka", action="store_true",
                        help="only the loops on the fake Kafka: no Docker, no cluster")
    parser.add_argument("--warm-up-seconds", type=float, default=WARM_UP_S,
                        help="an uncounted run first, so the brokers' JVMs are warm "
                        f"(default: {WARM_UP_S:.0f}; 0: none)")
    parser.add_argument("--runs", type=int, default=3,
                        help="measured insync runs, each between two bare loops; the ratio "
                        "is the median of their ratios (default: 3)")
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
    load = load_of(history)
    span = seconds * 1e9
    return {"send_ops_in_flight": round(load.send_op_ns / span, 2) if span else 0.0,
            "records_in_flight": round(load.record_ns / span, 1) if span else 0.0,
            "records_per_op": round(load.records / load.send_ops, 2) if load.send_ops else 0.0}


def with_time_limit(flags: list[str], seconds: float) -> list[str]:
    """``flags`` with their ``--time-limit`` replaced by ``seconds``."""
    out = list(flags)
    at = out.index("--time-limit")
    out[at + 1] = str(seconds)
    return out


def parse_run(flags: list[str]) -> Any:
    """The run options ``flags`` resolve to (``RunOptions``)."""
    from harness.run import parse

    return parse(flags).validate().resolved()


def insync_loop(
    flags: list[str], profile: str | None, owned: list[str]
) -> tuple[Loop, Any, dict[str, Any]]:
    """The measured ``insync run``: its main phase's rate, its options and what it did.
    ``owned`` gets the cluster's name once the run has brought it up."""
    from harness.run import run

    opts = parse_run(flags)
    profiler: Any = None
    if profile:
        import importlib

        profiler = importlib.import_module("pyinstrument").Profiler()  # optional dependency
        profiler.start()
    cpu0 = cpu_time()
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
             "cpu_s_whole_run": round(cpu_time() - cpu0, 1),
             "info": summary.get("info"), "run_dir": str(result.run_dir.path),
             **send_load(result.run_dir.history(), seconds)}
    return loop, opts, facts


# -- the whole benchmark -------------------------------------------------------------------


def verdict(loops: dict[str, Loop], pair_ratios: Sequence[float | None] = ()) -> dict[str, Any]:
    """The ratios insync/bare (real cluster: the median of ``pair_ratios`` when given,
    ``harness.bench.pairs``) and memory/fake bare, and whether each goal holds; a side
    whose loops did not run is left out."""
    out: dict[str, Any] = {}
    if "insync" in loops:
        insync, bare = loops["insync"], loops["bare"]
        ratio = median_ratio(pair_ratios)
        if ratio is None:
            ratio = insync.rate / bare.rate if bare.rate else None
        out.update({"ratio": None if ratio is None else round(ratio, 3),
                    "target_sends_s": TARGET_SENDS_S, "target_ratio": TARGET_RATIO,
                    "meets_sends_s": insync.rate >= TARGET_SENDS_S,
                    "meets_ratio": ratio is not None and ratio >= TARGET_RATIO})
    if "memory" in loops:
        memory, fake = loops["memory"], loops["fake_bare"]
        fake_ratio = memory.rate / fake.rate if fake.rate else None
        out.update({"fake_ratio": None if fake_ratio is None else round(fake_ratio, 3),
                    "target_fake_ratio": TARGET_FAKE_RATIO,
                    "meets_fake_ratio": fake_ratio is not None
                    and fake_ratio >= TARGET_FAKE_RATIO})
    return out


def fake_loops(opts: Any, latency: Latency, seconds: float) -> dict[str, Loop]:
    """The run's main phase and the bare loop's shape, each ``seconds`` on the fake Kafka."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = memory_loop(opts, seconds, Path(tmp), latency)
    bare = fake_bare_loop(latency, producers=opts.concurrency,
                          sends_per_op=opts.sends_per_op, seconds=seconds)
    return {"memory": memory, "fake_bare": bare}


def settle(run_slice: Callable[[], Loop], within: float = SETTLED_WITHIN,
           most: int = SETTLE_SLICES, least: int = SETTLE_MIN) -> list[float]:
    """Run ``run_slice`` until a slice is no more than ``within`` above every slice before
    it (the cluster stopped warming up), after at least ``least`` slices and at most
    ``most``. Returns every slice's rate, for the record."""
    rates: list[float] = []
    while len(rates) < most:
        rate = run_slice().rate
        climbing = not rates or rate > max(rates) * (1 + within)
        rates.append(rate)
        if len(rates) >= least and not climbing:
            break
    return rates


def measure(args: argparse.Namespace, flags: list[str], owned: list[str]) -> dict[str, Any]:
    """Every loop, on the cluster the insync run brings up (and leaves running)."""
    from confluent_kafka.cimpl import NewTopic

    from cluster import provisioner_for
    from cluster.kafka_clients import admin, producer
    from workloads.queue.options import client_options

    loops: dict[str, Loop] = {}
    if args.warm_up_seconds > 0:  # brings the cluster up, and warms it; not counted
        insync_loop(with_time_limit(flags, args.warm_up_seconds), None, owned)
    opts = parse_run(flags)
    bootstrap = provisioner_for().attach(args.cluster_name).bootstrap
    settings = client_options(opts, bootstrap=bootstrap)

    def make(i: int) -> ProducerLike:
        """The run's producer settings; with ``--txn`` a transactional id of the bench's
        own, so the bare loop never fences (nor is fenced by) a run's client."""
        conf = settings.producer_config(i)
        if "transactional.id" in conf:
            conf["transactional.id"] = f"{topic}-{i}"
        made: ProducerLike = producer(bootstrap, **conf)
        return made

    def make_plain(i: int) -> ProducerLike:
        conf = settings.producer_config(i)
        conf.pop("transactional.id", None)
        made: ProducerLike = producer(bootstrap, **conf)
        return made

    topic = f"bench-bare-{int(time.time())}"
    new = NewTopic(topic, num_partitions=PARTITIONS, replication_factor=opts.replication_factor,
                   config={"min.insync.replicas": str(opts.min_insync)})
    client = admin(bootstrap)  # held: a collected client destroys its handle mid-request
    client.create_topics([new])[topic].result(60)
    def bare(seconds: float = args.seconds) -> Loop:
        return bare_loop(make, topic, producers=opts.concurrency,
                         sends_per_op=opts.sends_per_op, seconds=seconds, txn=opts.txn)

    settled = settle(lambda: bare(SETTLE_SLICE_S)) if args.warm_up_seconds > 0 else []
    facts: dict[str, Any] = {}

    def measured() -> Loop:
        nonlocal opts, facts
        loop, opts, facts = insync_loop(flags, args.profile, owned)
        return loop

    # each run between two bare loops: what drifts in between (JIT, page cache, other
    # load on the host) weighs on both sides of its ratio alike (harness.bench.pairs)
    pairs = interleaved(bare, measured, args.runs)
    loops["insync"] = summed([p.insync for p in pairs])
    loops["bare"] = summed(bare_loops(pairs))
    facts["bare_sends_s"] = [round(loop.rate) for loop in bare_loops(pairs)]
    facts["insync_sends_s"] = [round(p.insync.rate) for p in pairs]
    facts["pair_ratios"] = [None if p.ratio is None else round(p.ratio, 3) for p in pairs]
    facts["settle_sends_s"] = [round(rate) for rate in settled]
    facts["settle_slice_s"] = SETTLE_SLICE_S
    loops["ceiling"] = free_loop(make_plain, topic, args.ceiling_seconds)
    client.delete_topics([topic])[topic].result(60)
    conf = settings.producer_config(0)
    conf.pop("transactional.id", None)
    return result_of(args, opts, loops, {**facts, "argv": flags}, producer=conf)


def latency_of(args: argparse.Namespace) -> Latency:
    """The fake Kafka's latency; a negative one is a usage error."""
    try:
        return Latency(args.latency_ms, args.record_ms)
    except ValueError as err:
        from harness.base.errors import UsageError

        raise UsageError(f"--latency-ms {args.latency_ms:g} / --record-ms "
                         f"{args.record_ms:g}: {err}", hint="give 0 or more") from None


def result_of(args: argparse.Namespace, opts: Any, loops: dict[str, Loop],
              run: dict[str, Any], producer: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every loop's figures and the verdict, with the fake loops run last."""
    latency = latency_of(args)
    loops = {**loops, **fake_loops(opts, latency, args.ceiling_seconds)}
    settings_used = {"concurrency": opts.concurrency, "sends_per_op": opts.sends_per_op,
                     "rate": opts.rate, "producer": producer}
    return {
        "nodes": args.nodes,
        "latency": latency.as_dict(),
        "run": {**run, "settings": settings_used},
        "loops": {name: loop.as_dict() for name, loop in loops.items()},
        "verdict": verdict(loops, run.get("pair_ratios") or ()),
    }


def main(args: argparse.Namespace) -> int:
    from cluster import provisioner_for
    from cluster.lock import cluster_lock
    from harness.run import parse

    flags = run_flags(args)
    parse(flags).validate()  # bad options: one UsageError line before Docker is asked anything
    latency_of(args)
    if args.runs < 1:
        from harness.base.errors import UsageError

        raise UsageError(f"--runs {args.runs}: the bench needs at least one measured run",
                         hint="give --runs 1 or more")
    if args.no_kafka:
        result = result_of(args, parse_run(flags), {}, {"argv": flags})
        print(json.dumps(result) if args.json else render(result))
        return 0
    owned: list[str] = []  # the cluster, once the run has brought it up
    with cluster_lock(args.cluster_name):  # held across the runs and the loops between them
        try:
            result = measure(args, flags, owned)
        finally:
            if owned and not args.keep_cluster:
                provisioner_for().down(owned[0])
    print(json.dumps(result) if args.json else render(result))
    return 0
