"""How fast a cluster comes up, and what it costs.

Measures, on this machine: warm-cache time from ``cluster up`` to ready (every
broker registered and an ``acks=all`` write acknowledged) for each node count,
the resident memory of every broker JVM once ready, and what the provisioner
prepares nodes from (Docker: the node image and its size). ``--cold`` first
measures the one-time setup: Kafka jars resolved into an empty cache and the
provisioner's preparation redone from scratch (Docker: the node image rebuilt
from Debian packages).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from cluster import KafkaNode, Placement, provisioner_for
from cluster.distribution import ensure_distribution
from cluster.lock import cluster_lock
from cluster.remote import sh
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion, resolve_version

HELP = "time `cluster up` (warm and cold), broker memory, image size"
#: The cluster this benchmark makes and removes.
NAME = "bench-up"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", default="3,5", help="node counts to time (default: 3,5)")
    parser.add_argument("--kafka-version", default="4.1.x")
    parser.add_argument("--mode", default="kraft", choices=("kraft", "zookeeper"))
    parser.add_argument("--repeat", type=int, default=1, help="ups per node count")
    parser.add_argument("--cold", action="store_true", help="also time first-time setup")
    parser.add_argument("--ssh-lab", action="store_true",
                        help="deploy over SSH onto a lab of node containers running sshd "
                             "(per node count: a cold up that copies the jars, then warm ups)")


def _rss_mib(node: KafkaNode) -> float:
    pid = node.pid()
    out = sh(node.remote, f"ps -o rss= -p {pid}", check=False).stdout.strip()
    return int(out) / 1024 if out.isdigit() else float("nan")


def _ssh_lab_ups(args: argparse.Namespace, count: int) -> None:
    """Cold (jars copied to empty hosts) then ``--repeat`` warm ups over SSH, each timed."""
    from harness.bench._ssh_lab import ssh_lab

    version = resolve_version(args.kafka_version).version
    spec = ClusterSpec(name="bench-ssh", nodes=count, kafka_version=args.kafka_version,
                       mode=args.mode, controllers=min(3, count))
    with tempfile.TemporaryDirectory(prefix="insync-ssh-lab-") as tmp, \
            ssh_lab("bench-ssh-hosts", count, Path(tmp)) as lab:
        provisioner = provisioner_for(Placement("ssh", hosts=str(lab.inventory)))
        times: list[tuple[str, float, list[str]]] = []
        try:
            for label in ["cold", *["warm"] * args.repeat]:
                stages: list[str] = []
                t0 = time.monotonic()
                provisioner.up(spec, fresh=True, say=stages.append)
                times.append((label, time.monotonic() - t0, stages))
                provisioner.down(spec.name)  # warm: the jars stay, nothing runs
        finally:
            provisioner.down(spec.name)
    for label, seconds, stages in times:
        print(f"{count} hosts over SSH ({args.mode}, Kafka {version}), {label}: "
              f"up to ready {seconds:.1f}s [{'; '.join(stages)}]", flush=True)


def main(args: argparse.Namespace) -> int:
    version = resolve_version(args.kafka_version)
    if args.ssh_lab:
        with cluster_lock("bench-ssh"):
            for count in (int(n) for n in args.nodes.split(",")):
                _ssh_lab_ups(args, count)
        return 0
    with cluster_lock(NAME):  # it makes and removes the cluster NAME, again and again
        return _measure(args, version)


def _measure(args: argparse.Namespace, version: KafkaVersion) -> int:
    provisioner = provisioner_for()
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="insync-cold-") as tmp:
            t0 = time.monotonic()
            ensure_distribution(version, cache_root=Path(tmp))
            jars_s = time.monotonic() - t0
        t0 = time.monotonic()
        provisioner.prepare(rebuild=True)
        prepare_s = time.monotonic() - t0
        print(f"cold: Kafka {version.version} jars resolved in {jars_s:.1f}s, "
              f"nodes prepared in {prepare_s:.1f}s")
    print(provisioner.prepare())
    for count in (int(n) for n in args.nodes.split(",")):
        times = []
        for _ in range(args.repeat):
            spec = ClusterSpec(name=NAME, nodes=count, kafka_version=args.kafka_version,
                               mode=args.mode, controllers=min(3, count))
            try:
                t0 = time.monotonic()
                cluster = provisioner.up(spec, fresh=True, say=lambda _m: None)
                times.append(time.monotonic() - t0)
                rss = [_rss_mib(n) for n in cluster.nodes.values()]
            finally:
                provisioner.down(spec.name)
        print(f"{count} nodes ({args.mode}, Kafka {version.version}): up to ready "
              f"median {statistics.median(times):.1f}s (runs: "
              f"{', '.join(f'{t:.1f}' for t in times)}); broker RSS "
              f"{', '.join(f'{r:.0f}' for r in rss)} MiB; load {os.getloadavg()[0]:.1f}")
    return 0
