"""Every setting of ``insync run``, from flags, a TOML file, or a stored test.json.

One table (:data:`OPTIONS`) names each option once: its flag, its type, its
default and its help. The same table parses the command line, a ``--config
run.toml`` file (keys spelled as the flags, with or without dashes) and the
``argv`` stored in a run's ``test.json`` (``--replay``), so the three can never
disagree. Precedence: defaults < replayed test < config file < flags given.

:class:`RunOptions` is the result: plain data, checked once by
:meth:`RunOptions.validate` before anything starts (a bad combination is one
``UsageError`` line), then filled in by :meth:`RunOptions.resolved` (seed,
concurrency, idempotence, name), and turned back into the canonical ``argv``
that re-runs the same test.
"""

from __future__ import annotations

import argparse
import json
import secrets
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from harness.errors import UsageError


def _bool(x: Any) -> bool:
    if isinstance(x, bool):
        return x
    text = str(x).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"not true or false: {x!r}")


def _list(x: Any) -> list[str]:
    items = x if isinstance(x, list) else str(x).split(",")
    return [str(i).strip() for i in items if str(i).strip()]


def _kv(x: Any) -> dict[str, str]:
    if isinstance(x, Mapping):
        return {str(k): str(v) for k, v in x.items()}
    out: dict[str, str] = {}
    for item in x if isinstance(x, list) else [x]:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _choice(*allowed: str) -> Callable[[Any], str]:
    def conv(x: Any) -> str:
        text = str(x).strip().lower()
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, got {x!r}")
        return text

    return conv


def _opt_int(x: Any) -> int | None:
    return None if x is None or str(x).lower() in ("", "none", "default") else int(x)


@dataclass(frozen=True)
class Spec:
    """One option: field name, type converter and help (the default is RunOptions')."""

    name: str
    conv: Callable[[Any], Any]
    help: str
    metavar: str | None = None
    repeat: bool = False  # --broker-config may be given several times

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


OPTIONS: tuple[Spec, ...] = (
    Spec("name", str, "test name: results go to <results-dir>/<name>/<timestamp>"),
    Spec("cluster_name", str, "cluster to create or reuse (default: insync)"),
    Spec("nodes", int, "Kafka nodes (default: 3)"),
    Spec("kafka_version", str, "e.g. 4.1.x, 3.9.x (default: 4.1.x)"),
    Spec("mode", _choice("kraft", "zookeeper"), "kraft or zookeeper (default: kraft)"),
    Spec("heap_mb", int, "broker JVM heap in MiB (default: 384)"),
    Spec("broker_config", _kv, "server.properties override; repeatable", "KEY=VALUE", True),
    Spec("workload", _choice("queue"), "the workload (default: queue)"),
    Spec("time_limit", float, "seconds of the main phase (default: 60)", "SECONDS"),
    Spec("rate", float, "client ops per second in total; 0: as fast as clients go (default: 1000)"),
    Spec("concurrency", int, "client threads (default: 2 per node)"),
    Spec("final_time_limit", float, "at most this long to drain (default: 60)", "SECONDS"),
    Spec("quiet_time", float, "pause between healing and the drain (default: 5)", "SECONDS"),
    Spec("acks", _choice("0", "1", "all"), "producer acks: 0, 1 or all (default: all)"),
    Spec("replication_factor", int, "replicas per partition (default: 3)"),
    Spec("min_insync", int, "min.insync.replicas of the workload topics (default: 2)"),
    Spec(
        "unclean_leader_election",
        _bool,
        "unclean.leader.election.enable of the topics (default: false)",
        "true|false",
    ),
    Spec(
        "sub_via", _choice("assign", "subscribe"), "how consumers get partitions (default: assign)"
    ),
    Spec("txn", _bool, "transactional producers and read_committed consumers", "true|false"),
    Spec(
        "txn_abort_p",
        float,
        "with --txn: probability of aborting a transaction on purpose (default: 0.1)",
        "P",
    ),
    Spec("idempotence", _bool, "enable.idempotence (default: true when --acks all)", "true|false"),
    Spec("retries", _opt_int, "producer retries (default: librdkafka's)"),
    Spec("max_in_flight", int, "max.in.flight.requests.per.connection (default: 5)"),
    Spec("max_writes_per_key", int, "sends per key before a fresh key replaces it (default: 256)"),
    Spec("poll_ms", int, "how long a poll waits for a first record (default: 100)"),
    Spec("nemesis", _list, "faults, comma-separated, or none (default: none)", "FAULTS"),
    Spec("nemesis_interval", float, "seconds between faults (default: 10)", "SECONDS"),
    Spec("nemesis_targets", _list, "symbolic targets, e.g. one,majority", "TARGETS"),
    Spec("nemesis_packet", _list, "packet faults to draw from (default: loss,rate)", "BEHAVIOURS"),
    Spec("nemesis_schedule", str, "a file of fault ops to run instead of random ones", "FILE"),
    Spec("partition_clients", _bool, "partitions also cut the harness off (nemesis)", "true|false"),
    Spec("seed", int, "seed of the generator's choices (default: random)"),
    Spec("results_dir", str, "where runs are stored (default: ./results)", "DIR"),
    Spec(
        "teardown",
        _bool,
        "remove the cluster after the run (default: false: keep it for the next run)",
        "true|false",
    ),
)
BY_NAME = {s.name: s for s in OPTIONS}


@dataclass(frozen=True)
class RunOptions:
    """The settings of one run (plain data; ``resolved()`` fills the automatic ones)."""

    name: str | None = None
    cluster_name: str = "insync"
    nodes: int = 3
    kafka_version: str = "4.1.x"
    mode: str = "kraft"
    heap_mb: int = 384
    broker_config: dict[str, str] = field(default_factory=dict)
    workload: str = "queue"
    time_limit: float = 60.0
    rate: float = 1000.0
    concurrency: int | None = None
    final_time_limit: float = 60.0
    quiet_time: float = 5.0
    acks: str = "all"
    replication_factor: int = 3
    min_insync: int = 2
    unclean_leader_election: bool = False
    sub_via: str = "assign"
    txn: bool = False
    txn_abort_p: float = 0.1
    idempotence: bool | None = None
    retries: int | None = None
    max_in_flight: int = 5
    max_writes_per_key: int = 256
    poll_ms: int = 100
    nemesis: list[str] = field(default_factory=list)
    nemesis_interval: float = 10.0
    nemesis_targets: list[str] = field(default_factory=list)
    nemesis_packet: list[str] = field(default_factory=lambda: ["loss", "rate"])
    nemesis_schedule: str | None = None
    partition_clients: bool = False
    seed: int | None = None
    results_dir: str = "results"
    teardown: bool = False

    def validate(self) -> RunOptions:
        """Raise ``UsageError`` (one line) for values or combinations that cannot work."""
        positive = {
            "nodes": self.nodes,
            "replication_factor": self.replication_factor,
            "min_insync": self.min_insync,
            "max_in_flight": self.max_in_flight,
            "max_writes_per_key": self.max_writes_per_key,
            "time_limit": self.time_limit,
        }
        for key, value in positive.items():
            if value <= 0:
                raise UsageError(f"{BY_NAME[key].flag} must be positive, got {value}")
        if self.concurrency is not None and self.concurrency < 1:
            raise UsageError(f"--concurrency must be at least 1, got {self.concurrency}")
        for key in ("rate", "final_time_limit", "quiet_time", "nemesis_interval"):
            if getattr(self, key) < 0:
                raise UsageError(f"{BY_NAME[key].flag} must not be negative")
        if self.poll_ms < 1:
            raise UsageError(f"--poll-ms must be at least 1, got {self.poll_ms}")
        if not 0 <= self.txn_abort_p < 1:
            raise UsageError(f"--txn-abort-p must be in [0, 1), got {self.txn_abort_p}")
        if self.replication_factor > self.nodes:
            raise UsageError(
                f"--replication-factor {self.replication_factor} needs at least "
                f"as many nodes, got --nodes {self.nodes}"
            )
        if self.min_insync > self.replication_factor:
            raise UsageError(
                f"--min-insync {self.min_insync} > --replication-factor "
                f"{self.replication_factor}: no write could ever be acknowledged"
            )
        if self.txn and self.acks != "all":
            raise UsageError(
                f"--txn needs --acks all (transactions require it), got --acks {self.acks}"
            )
        if self.idempotence and self.acks != "all":
            raise UsageError(
                f"--idempotence needs --acks all, got --acks {self.acks}",
                hint="pass --idempotence false",
            )
        if self.txn and self.idempotence is False:
            raise UsageError("--txn needs idempotence (transactions require it)")
        if self.retries is not None and self.retries < 0:
            raise UsageError(f"--retries must not be negative, got {self.retries}")
        if self.nemesis_schedule and not Path(self.nemesis_schedule).is_file():
            raise UsageError(f"--nemesis-schedule: no such file {self.nemesis_schedule}")
        return self

    def resolved(self) -> RunOptions:
        """A copy with every automatic setting decided (what test.json records)."""
        parts = ["queue", f"acks-{self.acks}"]
        parts += ["txn"] if self.txn else []
        parts += ["subscribe"] if self.sub_via == "subscribe" else []
        parts += self.faults
        return replace(
            self,
            name=self.name or "-".join(parts),
            concurrency=self.concurrency or 2 * self.nodes,
            idempotence=self.acks == "all" if self.idempotence is None else self.idempotence,
            seed=secrets.randbelow(2**31) if self.seed is None else self.seed,
        )

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
        kwargs: dict[str, Any] = {
            "dest": spec.name,
            "help": spec.help,
            "default": argparse.SUPPRESS,
        }
        if spec.metavar:
            kwargs["metavar"] = spec.metavar
        if spec.repeat:
            kwargs["action"] = "append"
        if spec.conv is _bool:
            kwargs["nargs"] = "?"
            kwargs["const"] = "true"  # --txn alone means --txn true
        parser.add_argument(spec.flag, **kwargs)
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


def convert(values: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """Convert raw values (flag strings or TOML values) to option values; unknown keys fail."""
    out: dict[str, Any] = {}
    for raw_key, raw in values.items():
        key = raw_key.replace("-", "_")
        spec = BY_NAME.get(key)
        if spec is None:
            raise UsageError(
                f"{origin}: unknown option {raw_key!r}", hint="see `insync run --help`"
            )
        try:
            if spec.repeat and isinstance(raw, list) and all(isinstance(i, str) for i in raw):
                out[key] = _kv(raw)
            else:
                out[key] = spec.conv(raw)
        except (ValueError, TypeError) as err:
            raise UsageError(f"{origin}: {spec.flag}: {err}") from None
    return out


def read_config(path: str | Path) -> dict[str, Any]:
    """The options of a ``run.toml`` file (top-level keys, or under ``[run]``)."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"--config: no such file {path}") from None
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"--config {path}: not TOML: {err}") from None
    if isinstance(data.get("run"), dict):
        data = data["run"]
    return convert(data, f"--config {path}")


def read_replay(path: str | Path) -> dict[str, Any]:
    """The options of a stored run, from the ``argv`` its test.json recorded."""
    p = Path(path)
    if p.is_dir():
        p = p / "test.json"
    try:
        argv = json.loads(p.read_text())["argv"]
    except FileNotFoundError:
        raise UsageError(f"--replay: no such file {p}") from None
    except (ValueError, KeyError, TypeError) as err:
        raise UsageError(f"--replay {p}: not a test.json with an argv: {err}") from None
    if argv[:2] != ["insync", "run"]:
        raise UsageError(f"--replay {p}: argv is not an insync run command")
    parser = argparse.ArgumentParser(prog="insync run", add_help=False)
    add_arguments(parser)
    try:
        ns = parser.parse_args(argv[2:])
    except SystemExit:
        raise UsageError(f"--replay {p}: its argv does not parse") from None
    return convert(vars(ns), f"--replay {p}")


def options_from(
    flags: Mapping[str, Any], *, config: str | None = None, replay: str | None = None
) -> RunOptions:
    """Merge replay < config < flags over the defaults, then validate."""
    merged: dict[str, Any] = {}
    if replay:
        merged.update(read_replay(replay))
    if config:
        merged.update(read_config(config))
    merged.update(convert(flags, "option"))
    known = {f.name for f in fields(RunOptions)}
    return RunOptions(**{k: v for k, v in merged.items() if k in known}).validate()


def parse(argv: Sequence[str]) -> RunOptions:
    """Options from a flag list (tests, bench): as ``insync run`` would read them."""
    parser = argparse.ArgumentParser(prog="insync run", add_help=False)
    add_arguments(parser)
    parser.add_argument("--config", default=None)
    parser.add_argument("--replay", default=None)
    ns = vars(parser.parse_args(list(argv)))
    config, replay = ns.pop("config"), ns.pop("replay")
    return options_from(ns, config=config, replay=replay)
