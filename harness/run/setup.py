"""What a run is built from, derived from its options: cluster spec, nemesis, workload, test.json.

Each of these can reject bad options (reserved broker keys, unknown faults), so
:func:`preflight` calls them all before the runner (or the matrix, for every
cell of its grid) creates a directory or asks Docker anything.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cluster.broker_config import fault_hold_s, leader_check_s, replica_lag_s
from harness.base.drain import DRAIN_FIELD
from harness.base.errors import UsageError
from harness.base.rundir import iso
from harness.base.version import insync_version
from harness.run.drain_end import EndWatch, window_s
from harness.run.options import RunOptions
from workloads import workload_of
from workloads.protocol import EndOffsets, RunEnv, WorkloadRun

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.spec import ClusterSpec
    from nemesis.package import NemesisOptions
    from nemesis.protocol import NemesisPackage


def cluster_spec(opts: RunOptions) -> ClusterSpec:
    """The run's cluster (``ClusterOptions.cluster_spec``: the one mapping of the settings)."""
    return opts.cluster_spec()


def preflight(opts: RunOptions) -> tuple[ClusterSpec, NemesisOptions | None]:
    """Everything that can be wrong with ``opts``, found with nothing created or contacted.

    Values, ranges and combinations (``RunOptions.validate``), the files named,
    the Kafka version and its mode, reserved and (when the jars are cached)
    unknown broker config keys, the nemesis and its schedule. Returns the cluster
    spec and nemesis options the run is then built from.
    """
    from cluster import preflight as cluster_preflight

    opts.validate()
    spec = cluster_spec(opts)
    version = cluster_preflight.check(spec)
    nopts = nemesis_options(opts)
    if nopts is not None:  # faults and waits this version cannot run
        nopts.check_version(version)
    return spec, nopts


def nemesis_options(opts: RunOptions) -> NemesisOptions | None:
    """The nemesis's own options for this run (checked now, before anything starts)."""
    if not opts.faults and not opts.nemesis_schedule:
        return None
    try:
        from nemesis.package import NemesisOptions
    except ImportError:
        raise UsageError(
            f"--nemesis {','.join(opts.faults)}: no nemesis is built into this insync",
            hint="use --nemesis none",
        ) from None
    nopts = NemesisOptions(
        faults=frozenset(opts.faults),
        interval=opts.nemesis_interval,
        min_in_force=(fault_hold_s(opts.broker_config) if opts.nemesis_hold is None
                      else opts.nemesis_hold),
        targets=tuple(opts.nemesis_targets),
        schedule=Path(opts.nemesis_schedule) if opts.nemesis_schedule else None,
        partition_clients=opts.partition_clients,
        seed=opts.seed or 0,
        packet=tuple(opts.nemesis_packet),
        nodes=opts.nodes,
        time_limit=opts.time_limit,
        upgrade_version=opts.upgrade_kafka_version,
        upgrade_dist=opts.upgrade_kafka_dist,
    )
    nopts.steps()  # a bad schedule step is a UsageError now, not once the cluster is up
    if "upgrade" in nopts.faults and opts.upgrade_kafka_version:
        from cluster.versions import resolve_for_mode

        resolve_for_mode(opts.upgrade_kafka_version, opts.mode)  # ZooKeeper mode on 4.x
    return nopts


def build_package(nopts: NemesisOptions) -> NemesisPackage:
    from nemesis.package import build_package as build

    return build(nopts)


def run_env(opts: RunOptions, bootstrap: str, token: str) -> RunEnv:
    """What the run gives its workload: the cluster, its unique token, the topics' durability."""
    return RunEnv(
        bootstrap=bootstrap,
        token=token,
        seed=opts.seed or 0,
        replication_factor=opts.replication_factor,
        topic_config={
            "min.insync.replicas": str(opts.min_insync),
            "unclean.leader.election.enable": str(opts.unclean_leader_election).lower(),
        },
    )


def workload_block(opts: RunOptions) -> dict[str, Any]:
    """``test.json``'s ``workload`` block: its name, the run's shape, and its own part."""
    return {
        "name": opts.workload,
        "replication_factor": opts.replication_factor,
        "min_insync": opts.min_insync,
        "unclean_leader_election": opts.unclean_leader_election,
        "rate": opts.rate,
        "concurrency": opts.concurrency,
        "time_limit": opts.time_limit,
        "final_time_limit": opts.final_time_limit,
        "quiet_time": opts.quiet_time,
        **workload_of(opts.workload).block(opts),
    }


def test_json(opts: RunOptions, started: datetime, cluster: Cluster | None,
              package: NemesisPackage | None = None, *,
              drain_finished: bool = False) -> dict[str, Any]:
    """The run's ``test.json`` (results/LAYOUT.md): what ran, and the argv that runs it again.

    ``nemesis.fault_spans`` records which ops start and stop each kind of fault
    of the run's nemesis ``package`` (from the registry, ``harness.base.faults``),
    so a report drawn later, by an insync whose registry has changed, still
    pairs this run's faults the way this run meant them. Left out until the
    package exists (the first test.json is written before the cluster is up).
    ``drain_finished`` (``harness.base.drain``) is false until the drain ran to its
    end, so a run cut short in any way, SIGKILL included, leaves that on record.
    """
    spec = cluster_spec(opts)
    nemesis: dict[str, Any] = {
        "faults": opts.faults,
        "interval": opts.nemesis_interval,
        "targets": opts.nemesis_targets,
        "schedule": opts.nemesis_schedule,
        "partition_clients": opts.partition_clients,
        "packet": opts.nemesis_packet,
    }
    if package is not None:
        nemesis["fault_spans"] = {label: list(span) for label, span in package.fault_spans.items()}
    return {
        "name": opts.name,
        "argv": opts.argv(),
        "seed": opts.seed,
        "started": iso(started),
        "insync_version": insync_version(),
        "cluster": {
            "name": spec.name,
            "nodes": spec.nodes,
            "kafka_version": spec.kafka_version,
            "kafka_version_exact": cluster.version.version if cluster else None,
            "mode": spec.mode,
            "controllers": spec.controllers,
            "kraft_quorum": spec.kraft_quorum,
            "heap_mb": spec.heap_mb,
            "broker_config": dict(spec.broker_config),
            # the brokers' own planned leader moves (None: off, --leader-check false)
            "leader_check_s": leader_check_s(spec.broker_config),
            "base_image": spec.base_image,
            "kafka_dist": dist_record(opts),
        },
        "workload": workload_block(opts),
        "nemesis": nemesis,
        "teardown": opts.teardown,
        DRAIN_FIELD: drain_finished,
    }


def dist_record(opts: RunOptions) -> dict[str, Any] | None:
    """The user's build (``--kafka-dist``): path, digest, version, commit id; else None."""
    dist = opts.build()
    return None if dist is None else dist.record()


def end_watch(opts: RunOptions, session: WorkloadRun) -> EndWatch | None:
    """The drain's look at end offsets, if the workload can give them; an end is trusted
    once it held longer than a lagging follower could hold the high watermark back."""
    if not isinstance(session, EndOffsets):
        return None
    return EndWatch(session.end_offset_reader, window_s(replica_lag_s(opts.broker_config)))
