"""``insync bench nemesis``: how long each fault takes to apply and to heal, and what
libfaketime costs the broker.

It brings up its own cluster (default 5 nodes, brokers under libfaketime),
creates a replicated topic, then for every fault kind times the nemesis's
``invoke`` of the fault and of its heal, ``--repeat`` times, waiting for the
ISR to recover between rounds (not timed). The times are what a run's history
shows between a nemesis invoke and its completion: one command through each
node's ``Remote``, in parallel, and for metadata targets the lookup. With them
it reports the spread: how far apart the first and the last node's command
landed (the completions' ``spread-ms``, median over the rounds). Afterwards it
checks that teardown left no residue.

``--overhead`` also measures libfaketime's cost: (a) clock calls per second in
a JVM on a node, with and without the preload, and (b) ``acks=all`` produce
throughput from the host against the same brokers restarted with and without
it (on, off, on: the mean of the two "on" rounds against "off").

``--operations`` times the planned operations (``restart`` of one broker and a
rolling one, ``elect-leader``, ``reassign`` and back, ``reconfigure`` and its
restore, ``upgrade --upgrade-to`` and the ``downgrade`` back, ``voter`` remove
and add on a ``--kraft-quorum dynamic`` cluster) through the same nemesis path,
each with the figures its completion records (``harness.bench._operations``);
``--no-faults`` leaves the fault timings out. Brokers run under libfaketime only
when faults or ``--overhead`` are measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from cluster import Cluster, Placement, Provisioner, provisioner_for
from cluster.kafka_clients import admin, producer
from cluster.kafka_node import faketime_env
from cluster.lock import cluster_lock
from cluster.metadata import partitions
from cluster.remote import sh, write_file
from cluster.spec import DEFAULT_KAFKA_VERSION, ClusterSpec
from cluster.wait import wait_until
from harness.bench import _operations as operations
from harness.bench._operations import nemesis_on
from nemesis import NemesisOptions

HELP = "time each nemesis fault's apply and heal on a real cluster; libfaketime overhead"
TOPIC = "bench-t0"

#: (label, fault op, heal op)
FAULTS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    ("partition one", {"f": "start-partition", "value": "one"},
     {"f": "stop-partition", "value": None}),
    ("partition majority", {"f": "start-partition", "value": "majority"},
     {"f": "stop-partition", "value": None}),
    ("partition majorities-ring", {"f": "start-partition", "value": "majorities-ring"},
     {"f": "stop-partition", "value": None}),
    ("partition leaders", {"f": "start-partition", "value": "leaders"},
     {"f": "stop-partition", "value": None}),
    ("partition controller", {"f": "start-partition", "value": "controller"},
     {"f": "stop-partition", "value": None}),
    ("kill one / start", {"f": "kill", "value": "one"}, {"f": "start", "value": "all"}),
    ("kill majority / start", {"f": "kill", "value": "majority"},
     {"f": "start", "value": "all"}),
    ("kill all / start", {"f": "kill", "value": "all"}, {"f": "start", "value": "all"}),
    ("pause one / resume", {"f": "pause", "value": "one"}, {"f": "resume", "value": "all"}),
    ("pause all / resume", {"f": "pause", "value": "all"}, {"f": "resume", "value": "all"}),
    ("bump-clock all / reset", {"f": "bump-clock", "value": {"target": "all",
                                                             "delta-ms": 60_000}},
     {"f": "reset-clock", "value": "all"}),
    ("freeze-clock one / reset", {"f": "freeze-clock", "value": {"target": "one"}},
     {"f": "reset-clock", "value": "all"}),
    ("packet loss all / stop", {"f": "start-packet", "value": {"target": "all", "loss": 0.2}},
     {"f": "stop-packet", "value": None}),
    ("packet rate all / stop", {"f": "start-packet",
                                "value": {"target": "all", "rate-kbit": 1024}},
     {"f": "stop-packet", "value": None}),
)

CLOCK_PROBE = """
public class ClockRate { public static void main(String[] a) {
  long n = 0, end = System.nanoTime() + 3_000_000_000L, sink = 0;
  while (System.nanoTime() < end) {
    for (int i = 0; i < 1000; i++) sink += System.currentTimeMillis();
    n += 1000;
  }
  System.out.println(n / 3 + " " + (sink == 42 ? "!" : ""));
} }
"""


def _timed(fn: Callable[[], dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    t0 = time.monotonic()
    out = fn()
    return time.monotonic() - t0, out


def spread_ms(out: dict[str, Any]) -> float | None:
    """The first-to-last node spread a completion records, if it acted on any node."""
    value = out.get("value")
    spread = value.get("spread-ms") if isinstance(value, dict) else None
    return float(spread) if isinstance(spread, int | float) else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ms(value: float | None) -> str:
    return "   -  " if value is None else f"{value:4.0f}ms"


def _fully_replicated(cluster: Cluster) -> bool:
    rf = min(3, len(cluster.nodes))
    return all(len(p.isr) == rf for p in partitions(cluster.bootstrap, [TOPIC]).values())


def measure_faults(cluster: Cluster, repeat: int) -> list[dict[str, Any]]:
    rows = []
    with nemesis_on(cluster, NemesisOptions(
            faults=frozenset({"partition", "kill", "pause", "clock", "packet"}),
            topics=(TOPIC,))) as nem:
        for label, fault, heal in FAULTS:
            applies, heals, errors = [], [], []
            apply_spreads: list[float] = []
            heal_spreads: list[float] = []
            for _ in range(repeat):
                _settle(cluster, "ISR recovered before the next fault")
                dt, out = _timed(lambda f=fault: nem.invoke(cluster, f))  # type: ignore[misc]
                applies.append(dt)
                apply_spreads += [s for s in [spread_ms(out)] if s is not None]
                if "error" in out:
                    errors.append(out["error"])
                dt, out = _timed(lambda h=heal: nem.invoke(cluster, h))  # type: ignore[misc]
                heals.append(dt)
                heal_spreads += [s for s in [spread_ms(out)] if s is not None]
                if "error" in out:
                    errors.append(out["error"])
            apply_spread, heal_spread = _median(apply_spreads), _median(heal_spreads)
            rows.append({"fault": label, "apply_s": statistics.median(applies),
                         "apply_max_s": max(applies), "apply_spread_ms": apply_spread,
                         "heal_s": statistics.median(heals), "heal_max_s": max(heals),
                         "heal_spread_ms": heal_spread, "errors": errors})
            print(f"{label:28} apply {rows[-1]['apply_s']:6.2f}s (max {max(applies):5.2f}, "
                  f"spread {_ms(apply_spread)})  "
                  f"heal {rows[-1]['heal_s']:6.2f}s (max {max(heals):5.2f}, "
                  f"spread {_ms(heal_spread)})"
                  + (f"  errors: {errors}" if errors else ""), flush=True)
    return rows


def _settle(cluster: Cluster, message: str) -> None:
    """Wait (untimed) until every partition of the bench topic has its whole ISR."""
    wait_until(lambda: _fully_replicated(cluster), timeout_s=180, message=message)


def clock_call_rate(cluster: Cluster) -> dict[str, float]:
    """currentTimeMillis() calls per second in a JVM on n1, plain and under libfaketime."""
    node = cluster.nodes["n1"]
    write_file(node.remote, "/tmp/ClockRate.java", CLOCK_PROBE)
    env = " ".join(f"{k}={v}" for k, v in sorted(faketime_env().items()))
    out = {}
    for label, prefix in (("plain", ""), ("faketime", f"env {env} ")):
        res = sh(node.remote, f"{prefix}java /tmp/ClockRate.java", timeout=120)
        out[label] = float(res.stdout.split()[0])
    return out


def produce_rate(cluster: Cluster, messages: int) -> float:
    """acks=all messages per second from the host to ``TOPIC``."""
    prod = producer(cluster.bootstrap, acks="all", **{"enable.idempotence": True,
                                                       "linger.ms": 5})
    payload = b"x" * 100
    t0 = time.monotonic()
    for i in range(messages):
        while True:
            try:
                prod.produce(TOPIC, payload, key=str(i).encode())
                break
            except BufferError:
                prod.poll(0.01)
        prod.poll(0)
    left = prod.flush(120)
    if left:
        raise RuntimeError(f"{left} of {messages} messages not delivered in 120 s")
    return messages / (time.monotonic() - t0)


def _warm_up(cluster: Cluster) -> None:
    """Wait until every partition is fully replicated and a small batch goes through."""
    wait_until(lambda: _fully_replicated(cluster), timeout_s=240, message="ISR complete")
    wait_until(lambda: produce_rate(cluster, 2000), timeout_s=240, backoff_s=5,
               message="a warm-up batch is acknowledged")


def restart_brokers(cluster: Cluster, faketime: bool) -> None:
    """Restart every broker with or without libfaketime (same data, same nodes)."""
    for name, node in list(cluster.nodes.items()):
        node.kill()
        spec = dataclasses.replace(node.spec, faketime=faketime)
        cluster.nodes[name] = dataclasses.replace(node, spec=spec)
        cluster.nodes[name].start()
    wait_until(lambda: _fully_replicated(cluster), timeout_s=240, message="brokers back")


def measure_overhead(cluster: Cluster, messages: int) -> dict[str, Any]:
    calls = clock_call_rate(cluster)
    print(f"JVM currentTimeMillis() calls/s: plain {calls['plain']:.3g}, "
          f"faketime {calls['faketime']:.3g}", flush=True)
    restart_brokers(cluster, faketime=True)  # whatever a kept cluster was left running
    _warm_up(cluster)
    rates = {"on1": produce_rate(cluster, messages)}
    restart_brokers(cluster, faketime=False)
    _warm_up(cluster)
    rates["off"] = produce_rate(cluster, messages)
    restart_brokers(cluster, faketime=True)
    _warm_up(cluster)
    rates["on2"] = produce_rate(cluster, messages)
    on = (rates["on1"] + rates["on2"]) / 2
    print(f"acks=all produce msgs/s: faketime {rates['on1']:.0f} / {rates['on2']:.0f}, "
          f"plain {rates['off']:.0f} ({100 * (on / rates['off'] - 1):+.1f}% with faketime)",
          flush=True)
    return {"clock_calls_per_s": calls, "produce_msgs_per_s": rates}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster-name", default="nem-bench",
                        help="the cluster's name (default: nem-bench)")
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--kafka-version", default=DEFAULT_KAFKA_VERSION,
                        help=f"a release or a line (default: {DEFAULT_KAFKA_VERSION})")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per fault (median)")
    parser.add_argument("--overhead", action="store_true", help="also measure libfaketime")
    parser.add_argument("--no-faults", action="store_true", help="skip the fault timings")
    parser.add_argument("--messages", type=int, default=20_000)
    operations.add_arguments(parser)
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse a running cluster of the same settings (e.g. after --keep)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--hosts", metavar="FILE",
                       help="measure over SSH on the hosts of this inventory (docs/GUIDE.md)")
    where.add_argument("--ssh-lab", action="store_true",
                       help="measure over SSH on a lab of --nodes node containers running sshd")


def main(args: argparse.Namespace) -> int:
    version, target = operations.check_arguments(args)  # bad options: one line, nothing made
    args.upgrade_to = target.version if target else None  # the release a line names
    # libfaketime only where the clock faults or its overhead are measured: operations
    # are timed on brokers as a run without clock faults starts them
    spec = ClusterSpec(name=args.cluster_name, nodes=args.nodes, kafka_version=version.version,
                       faketime=not args.no_faults or args.overhead,
                       kraft_quorum=args.kraft_quorum)
    with cluster_lock(spec.name):  # the name checked; nothing else uses the cluster meanwhile
        if not args.ssh_lab:
            placement = Placement("ssh", hosts=args.hosts) if args.hosts else Placement()
            return _measure(args, spec, provisioner_for(placement))
        import tempfile
        from pathlib import Path

        from harness.bench._ssh_lab import ssh_lab

        with tempfile.TemporaryDirectory(prefix="insync-ssh-lab-") as tmp, \
                ssh_lab(f"{args.cluster_name}-hosts", args.nodes, Path(tmp)) as lab:
            print(f"SSH lab of {args.nodes} hosts: {lab.inventory}", flush=True)
            return _measure(args, spec,
                            provisioner_for(Placement("ssh", hosts=str(lab.inventory))))


def _measure(args: argparse.Namespace, spec: ClusterSpec, provisioner: Provisioner) -> int:
    from confluent_kafka.cimpl import NewTopic

    t0 = time.monotonic()
    try:
        cluster = provisioner.up(spec, fresh=not args.reuse)
        print(f"cluster of {args.nodes} up in {time.monotonic() - t0:.0f}s", flush=True)
        new = NewTopic(TOPIC, num_partitions=args.nodes, replication_factor=min(3, args.nodes))
        client = admin(cluster.bootstrap)  # keep a reference until the future resolves
        if TOPIC not in client.list_topics(timeout=30).topics:
            client.create_topics([new])[TOPIC].result(60)
        result: dict[str, Any] = {"nodes": args.nodes, "kafka_version": spec.kafka_version,
                                  "kraft_quorum": spec.kraft_quorum,
                                  "provisioner": "ssh" if args.hosts or args.ssh_lab
                                  else "docker"}
        if not args.no_faults:
            result["faults"] = measure_faults(cluster, args.repeat)
        if args.operations:
            ops = operations.plan(TOPIC, upgrade_to=args.upgrade_to,
                                  dynamic_quorum=spec.kraft_quorum == "dynamic")
            result["operations"] = operations.measure_operations(
                cluster, ops, TOPIC, args.operations_repeat,
                lambda: _settle(cluster, "ISR whole before the next operation"))
        if args.overhead:
            result["overhead"] = measure_overhead(cluster, args.messages)
        if args.json:
            print(json.dumps(result, indent=2))
    finally:
        if not args.keep:
            provisioner.down(args.cluster_name)
    return 0
