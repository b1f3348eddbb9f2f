"""Every setting of ``insync run``, from flags, a TOML file, or a stored test.json.

One table (:data:`OPTIONS`) names each option once: its flag, its type, its
default and its help. Its cluster rows are ``cluster_options.CLUSTER_OPTIONS``,
the table ``insync cluster up`` reads too; each registered workload adds its
own rows (``workloads.<name>.options``), so a workload's options are declared
in the workload and nowhere else. The same table parses the command line, a
``--config run.toml`` file (keys spelled as the flags, with or without dashes)
and the ``argv`` stored in a run's ``test.json`` (``--replay``), so the three
can never disagree. Precedence: defaults < replayed test < config file < flags
given. Each number option's row also holds its
:class:`~harness.base.values.Range`, so ``nan``, ``inf``, ``1e400`` and
out-of-range values are refused the same way from every source, naming the
flag and what it accepts.

:class:`RunOptions` is the result: plain data (the run's fields, and every
workload's, inherited from ``workloads.WorkloadSettings``), checked once by
:meth:`RunOptions.validate` before anything starts (a bad combination is one
``UsageError`` line; the workload checks its own), then filled in by
:meth:`RunOptions.resolved` (seed, concurrency, name, and what the workload
decides), and turned back into the canonical ``argv`` that re-runs the same test.
"""

from __future__ import annotations

import argparse
import json
import secrets
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cluster.spec import MAX_NODES
from harness.base.errors import UsageError
from harness.run import values
from harness.run.cluster_options import (
    CLUSTER_OPTIONS,
    ClusterOptions,
    check_dist_pair,
    check_values,
)
from harness.run.values import (
    Range,
    Spec,
    boolean,
    items,
    kafka_dist,
    kafka_version,
    number,
    opt_number,
    opt_whole,
    read_text,
    run_name,
    text,
    usable_dir,
    whole,
)
from workloads import (
    DEFAULT_WORKLOAD,
    WORKLOADS,
    WorkloadSettings,
    check_only_its_options,
    workload_name,
    workload_of,
    workload_rows,
)

DAY_S = 86_400
#: Default client threads per node: a thread waits for its op until the op's timeout,
#: so the few threads a stalled partition holds (``workloads.queue``'s writer bound)
#: must leave others free to keep the run recording (bench run, tests/workloads/queue).
THREADS_PER_NODE = 4
#: The drain's default bound: at least this many seconds, and at least this share of
#: the main phase (a 1-hour run acknowledged about 5.7 M values, which its drain read
#: back at about 12,000 a second on a loaded 2-core machine: some 8 minutes).
DRAIN_FLOOR_S = 300.0
DRAIN_SHARE = 0.5

# A number option's range is part of its row: flags, run.toml, replay and the
# matrix grid all go through Spec.parse, and RunOptions.validate checks it again.
# The cluster's settings come first, from the one table the cluster commands share.
OPTIONS: tuple[Spec, ...] = (
    Spec("name", run_name, "test name: results go to <results-dir>/<name>/<timestamp>"),
    *CLUSTER_OPTIONS,
    Spec("workload", workload_name,
         f"the workload: {', '.join(WORKLOADS)} (default: {DEFAULT_WORKLOAD})"),
    Spec("time_limit", number, "seconds of the main phase (default: 60)", "SECONDS",
         range=Range(0, 7 * DAY_S, open_lo=True)),
    Spec("rate", number, "client ops per second in total; 0: as fast as clients go "
         "(default: 1000)", range=Range(0.01, 1_000_000, zero=True)),
    Spec("concurrency", opt_whole, f"client threads (default: {THREADS_PER_NODE} per node)",
         range=Range(1, 1024)),
    Spec("final_time_limit", number, "at most this long to drain; it stops sooner once it "
         "has read everything back, read every key to its end, or read nothing new for "
         f"60 s (default: {DRAIN_FLOOR_S:g}, or half of --time-limit when that is longer)",
         "SECONDS",
         range=Range(0, DAY_S)),
    Spec("quiet_time", number, "pause between healing and the drain (default: 5)", "SECONDS",
         range=Range(0, 3600)),
    Spec("replication_factor", whole, "replicas per partition (default: 3)",
         range=Range(1, MAX_NODES)),
    Spec("min_insync", whole, "min.insync.replicas of the workload topics (default: 2)",
         range=Range(1, MAX_NODES)),
    Spec("unclean_leader_election", boolean,
         "unclean.leader.election.enable of the topics (default: false)", "true|false"),
    *workload_rows(),
    Spec("nemesis", items, "faults, comma-separated, or none (default: none)", "FAULTS"),
    Spec("nemesis_interval", number, "seconds between faults (default: 10)", "SECONDS",
         range=Range(0, DAY_S, open_lo=True)),
    Spec("nemesis_hold", opt_number, "seconds each random fault stays in force at least "
         "(default: twice replica.lag.time.max.ms plus controller.socket.timeout.ms, "
         "15)", "SECONDS", range=Range(0, DAY_S)),
    Spec("nemesis_targets", items, "symbolic targets, e.g. one,majority", "TARGETS"),
    Spec("nemesis_packet", items, "packet faults to draw from (default: loss,rate)", "BEHAVIOURS"),
    Spec("nemesis_schedule", text, "a file of fault ops to run instead of random ones", "FILE"),
    Spec("script_tail", opt_number, "with --nemesis-schedule: end the main phase this many "
         "seconds after the script's last step has completed (a wait included), if before "
         "--time-limit (default: run the whole --time-limit)", "SECONDS", range=Range(0, DAY_S)),
    Spec("upgrade_kafka_version", kafka_version, "the release --nemesis upgrade rolls the "
         "brokers onto, e.g. 4.1.2"),
    Spec("upgrade_kafka_dist", kafka_dist, "the build of yours --nemesis upgrade rolls the "
         "brokers onto (as --kafka-dist)", "PATH"),
    Spec("partition_clients", boolean, "partitions also cut the harness off (nemesis)",
         "true|false"),
    Spec("seed", whole, "seed of the generator's choices (default: random)",
         range=Range(0, 2**63 - 1)),
    Spec("results_dir", text, "where runs are stored (default: ./results)", "DIR"),
    Spec("teardown", boolean, "remove the cluster after the run (default: false: keep it for "
         "the next run)", "true|false"),
    Spec("fresh_cluster", boolean, "build the cluster anew even if one with the same "
         "settings runs: a run whose bug lives in what a cluster creates once, such as "
         "__consumer_offsets, needs a cluster no earlier run has used (default: false)",
         "true|false"),
)  # fmt: skip
BY_NAME = {s.name: s for s in OPTIONS}


@dataclass(frozen=True)
class RunOptions(ClusterOptions, WorkloadSettings):
    """The settings of one run (plain data; ``resolved()`` fills the automatic ones).

    The cluster's settings and their defaults are ``ClusterOptions``'; every
    registered workload's (``--acks``, ``--txn``, ...) are inherited from
    ``workloads.WorkloadSettings``.
    """

    name: str | None = None
    workload: str = DEFAULT_WORKLOAD
    time_limit: float = 60.0
    rate: float = 1000.0
    concurrency: int | None = None
    final_time_limit: float | None = None
    quiet_time: float = 5.0
    replication_factor: int = 3
    min_insync: int = 2
    unclean_leader_election: bool = False
    nemesis: list[str] = field(default_factory=list)
    nemesis_interval: float = 10.0
    nemesis_hold: float | None = None
    nemesis_targets: list[str] = field(default_factory=list)
    nemesis_packet: list[str] = field(default_factory=lambda: ["loss", "rate"])
    nemesis_schedule: str | None = None
    script_tail: float | None = None
    upgrade_kafka_version: str | None = None
    upgrade_kafka_dist: str | None = None
    partition_clients: bool = False
    seed: int | None = None
    results_dir: str = "results"
    teardown: bool = False
    fresh_cluster: bool = False

    def validate(self) -> RunOptions:
        """Raise ``UsageError`` (one line) for values or combinations that cannot work.

        Every value is checked as if it had been typed (type, range, known version),
        so options built in code are held to the same rules as flags; then the
        combinations (the workload checks its own, against the brokers' version:
        ``--idempotence true`` on 0.10 is refused here), the version/mode pair and the
        files named. Nothing here needs Docker, the network, or creates anything.
        """
        check_values(self, OPTIONS)
        if self.replication_factor > self.nodes:
            raise UsageError(
                f"--replication-factor {self.replication_factor} needs at least "
                f"as many nodes, got --nodes {self.nodes}",
                hint="raise --nodes or lower --replication-factor",
            )
        if self.min_insync > self.replication_factor:
            raise UsageError(
                f"--min-insync {self.min_insync} > --replication-factor "
                f"{self.replication_factor}: no write could ever be acknowledged",
                hint="lower --min-insync",
            )
        version = self.kafka()
        self.check_quorum(version)
        if "voter" in self.nemesis and self.kraft_quorum != "dynamic":
            raise UsageError("--nemesis voter changes the controller quorum, which is static",
                             hint="add --kraft-quorum dynamic (Kafka 3.9+, KRaft)")
        check_only_its_options(self, self.workload)
        workload_of(self.workload).validate(self, version)
        self.check_placement()
        if self.nemesis_schedule:
            read_text(self.nemesis_schedule, "--nemesis-schedule")
        elif self.script_tail is not None:
            raise UsageError("--script-tail needs a fault script",
                             hint="pass --nemesis-schedule FILE, or drop --script-tail")
        usable_dir(self.results_dir, "--results-dir")
        return self

    def resolved(self) -> RunOptions:
        """A copy with every automatic setting decided (what test.json records); the
        workload's follow the brokers' version (no idempotence before 0.11)."""
        workload = workload_of(self.workload)
        version = self.kafka()
        return replace(
            self,
            name=self.name or "-".join([*workload.name_parts(self), *self.faults]),
            concurrency=self.concurrency or THREADS_PER_NODE * self.nodes,
            final_time_limit=self.drain_limit,
            seed=secrets.randbelow(2**31) if self.seed is None else self.seed,
            **workload.automatic(self, version),
        )

    @property
    def drain_limit(self) -> float:
        """``--final-time-limit``, or its default: the drain re-reads every acknowledged
        value, and a longer run acknowledged proportionally more of them, so a fixed bound
        would stop a long run's drain while it was still reading (``unseen`` then goes
        unjudged and the verdict is unknown)."""
        if self.final_time_limit is not None:
            return self.final_time_limit
        return max(DRAIN_FLOOR_S, self.time_limit * DRAIN_SHARE)

    @property
    def faults(self) -> list[str]:
        return [f for f in self.nemesis if f != "none"]

    def argv(self) -> list[str]:
        """The canonical command that runs this test again (every option spelled out)."""
        out = ["insync", "run"]
        for spec in OPTIONS:
            value = getattr(self, spec.name)
            if value is None or value in ([], {}):
                continue
            if spec.name == "kafka_version" and self.kafka_dist is not None:
                continue  # the build names its version

            if spec.repeat:
                for k, v in value.items():
                    out += [spec.flag, f"{k}={v}"]
            elif isinstance(value, list):
                out += [spec.flag, ",".join(value)]
            elif isinstance(value, bool):
                out += [spec.flag, str(value).lower()]
            elif isinstance(value, float) and value.is_integer():
                out += [spec.flag, str(int(value))]
            else:
                out += [spec.flag, str(value)]
        return out

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option as a flag; unset flags stay absent so config and replay show through."""
    for spec in OPTIONS:
        spec.add_to(parser)
    parser.add_argument(
        "--no-idempotence",
        dest="idempotence",
        action="store_const",
        const="false",
        default=argparse.SUPPRESS,
        help="--idempotence false",
    )
    parser.add_argument(
        "--keep-cluster",
        dest="teardown",
        action="store_const",
        const="false",
        default=argparse.SUPPRESS,
        help="--teardown false",
    )


def convert(raw: Mapping[str, Any], origin: str = "") -> dict[str, Any]:
    """Convert raw values (flag strings or TOML values) to option values; unknown keys fail.

    ``origin`` names where the values came from (``--config run.toml``); empty for flags.
    """
    return values.convert(raw, BY_NAME, origin)


def read_toml(path: str | Path, table: str) -> dict[str, Any]:
    """A TOML file's keys (top level, or under ``[table]``), or one ``UsageError`` line."""
    text = read_text(path, "--config")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"--config {path}: not TOML: {err}", hint="fix the file") from None
    inner = data.get(table)
    if not isinstance(inner, dict):
        return data
    outside = sorted(set(data) - {table})
    if outside:  # a [run] table and top-level keys: the keys outside it would be ignored
        raise UsageError(f"--config {path}: {outside[0]!r} is outside the [{table}] table",
                         hint=f"put every option under [{table}], or drop the [{table}] line")
    return dict(inner)


def read_config(path: str | Path) -> dict[str, Any]:
    """The options of a ``run.toml`` file (top-level keys, or under ``[run]``)."""
    return convert(read_toml(path, "run"), f"--config {path}")


def read_replay(path: str | Path, *, check_build: bool = True) -> dict[str, Any]:
    """The options of a stored run, from the ``argv`` its test.json recorded; with
    ``check_build``, its ``--kafka-dist`` must still be the build the run ran."""
    from harness.base.args import Parser
    from harness.base.rundir import RunDir

    p = Path(path)
    if p.is_dir():
        p = RunDir(p).test_path
    hint = "pass a run directory or its test.json"
    try:
        argv = json.loads(read_text(p, "--replay"))["argv"]
    except (ValueError, KeyError, TypeError) as err:
        raise UsageError(f"--replay {p}: not a test.json with an argv: {err}", hint=hint) from None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise UsageError(f"--replay {p}: its argv is not a list of texts", hint=hint)
    if argv[:2] != ["insync", "run"]:
        raise UsageError(f"--replay {p}: argv is not an insync run command", hint=hint)
    parser = Parser(prog="insync run", add_help=False)
    add_arguments(parser)
    try:
        ns = parser.parse_args(argv[2:])
    except UsageError as err:
        raise UsageError(
            f"--replay {p}: its argv does not parse: {err.message}", hint=hint
        ) from None
    replayed = convert(vars(ns), f"--replay {p}")
    if check_build and replayed.get("kafka_dist") is not None:
        _same_build(p, replayed["kafka_dist"])
    return replayed


def _same_build(test_json: Path, path: str) -> None:
    """A replay runs the build its run ran: refused if the bytes at ``path`` are no
    longer the ones whose sha256 test.json recorded (``cluster.kafka_dist``)."""
    from cluster.kafka_dist import inspect_dist

    try:
        recorded = json.loads(read_text(test_json, "--replay"))["cluster"]["kafka_dist"]["sha256"]
    except (ValueError, KeyError, TypeError):
        return
    now = inspect_dist(path).sha256
    if isinstance(recorded, str) and now != recorded:
        raise UsageError(
            f"--replay {test_json}: --kafka-dist {path} is not the build the run ran "
            f"(sha256 {now[:16]}..., the run recorded {recorded[:16]}...)",
            hint="restore that build, or pass --kafka-dist to run the one there now")


def options_from(
    flags: Mapping[str, Any], *, config: str | None = None, replay: str | None = None
) -> RunOptions:
    """Merge replay < config < flags over the defaults, then validate."""
    merged: dict[str, Any] = {}
    explicit = read_config(config) if config else {}
    explicit.update(convert(flags))
    if replay:
        # a build named now replaces the replayed one, which is then not checked
        merged.update(read_replay(replay, check_build="kafka_dist" not in explicit))
    merged.update(explicit)
    check_dist_pair(explicit, merged)
    known = {f.name for f in fields(RunOptions)}
    return RunOptions(**{k: v for k, v in merged.items() if k in known}).validate()


def parse(argv: Sequence[str]) -> RunOptions:
    """Options from a flag list (tests, bench): as ``insync run`` would read them."""
    from harness.base.args import Parser

    parser = Parser(prog="insync run", add_help=False)
    add_arguments(parser)
    parser.add_argument("--config", default=None)
    parser.add_argument("--replay", default=None)
    ns = vars(parser.parse_args(list(argv)))
    config, replay = ns.pop("config"), ns.pop("replay")
    return options_from(ns, config=config, replay=replay)
