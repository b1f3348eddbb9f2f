"""The cluster settings, declared once for ``insync cluster up|smoke``, ``run`` and ``matrix``.

Each setting is one row of :data:`CLUSTER_OPTIONS` (a :class:`~harness.run.values.Spec`,
like every row of ``options.OPTIONS``, which starts with these), so it has one
name everywhere: the flag (``--cluster-name``), the ``run.toml``/``matrix.toml``
key (``cluster-name``), the field of :class:`ClusterOptions` and the recorded
argv of a run. One converter and one range per setting, so ``--nodes 0`` gets
the same one-line refusal from every command. Defaults live in
:class:`ClusterOptions`; ``RunOptions`` extends it, and
:meth:`ClusterOptions.cluster_spec` is the one place these settings become a
``ClusterSpec``.

The cluster commands used to spell the name ``--name``; it is ``--cluster-name``
now, as ``insync run`` always spelled it (``--name`` there is the test's name).
No alias is kept: stored test.json files record ``insync run`` argv, which never
had ``--name`` for the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cluster.jvm import DEFAULT_HEAP_MB
from cluster.spec import (
    DEFAULT_CLUSTER_NAME,
    DEFAULT_KAFKA_VERSION,
    DEFAULT_MODE,
    DEFAULT_NODES,
    DYNAMIC_QUORUM_SINCE,
    KRAFT_QUORUMS,
    MAX_HEAP_MB,
    MAX_NODES,
    MIN_HEAP_MB,
    MODES,
)
from harness.base.errors import UsageError
from harness.run.values import (
    Range,
    Spec,
    boolean,
    choice,
    cluster_name,
    convert,
    kafka_dist,
    kafka_version,
    key_values,
    text,
    whole,
)

if TYPE_CHECKING:
    from cluster.kafka_dist import KafkaDist
    from cluster.provisioner import Placement
    from cluster.spec import ClusterSpec, Mode
    from cluster.versions import KafkaVersion

CLUSTER_OPTIONS: tuple[Spec, ...] = (
    Spec("cluster_name", cluster_name, "the cluster's name: letters, digits, '-' (default: "
         f"{DEFAULT_CLUSTER_NAME})", "NAME"),
    Spec("nodes", whole, f"Kafka nodes (default: {DEFAULT_NODES})", range=Range(1, MAX_NODES)),
    Spec("kafka_version", kafka_version, f"e.g. 4.1.x, 3.9.x (default: {DEFAULT_KAFKA_VERSION})"),
    Spec("kafka_dist", kafka_dist, "run your own Kafka build: a kafka_<scala>-<version>.tgz "
         "(./gradlew releaseTarGz) or its unpacked directory", "PATH"),
    Spec("mode", choice(*MODES), f"kraft or zookeeper (default: {DEFAULT_MODE})"),
    Spec("controllers", whole, "KRaft voters among the nodes (default: min(3, nodes))",
         range=Range(1, MAX_NODES)),
    Spec("kraft_quorum", choice(*KRAFT_QUORUMS), "static (controller.quorum.voters) or "
         "dynamic (KIP-853: formatted with --initial-controllers, so that the voter fault "
         "can remove and add controllers; Kafka 3.9+, KRaft) (default: static)"),
    Spec("heap_mb", whole, f"broker JVM heap in MiB (default: {DEFAULT_HEAP_MB})",
         range=Range(MIN_HEAP_MB, MAX_HEAP_MB)),
    Spec("broker_config", key_values, "server.properties override; repeatable; keys are "
         "validated", "KEY=VALUE", True),
    Spec("leader_check", boolean, "the brokers' preferred-leader check every 10 s, a source "
         "of planned leader moves (default: true; false sets "
         "auto.leader.rebalance.enable=false)"),
    Spec("power_loss_fs", boolean, "mount broker data through the power-loss filesystem, "
         "which keeps writes in memory until fsync (default: false; on whenever the "
         "power-loss fault is used)"),
    Spec("base_image", text, "build nodes FROM this image (needs a registry) instead of "
         "debootstrap", "IMAGE"),
    Spec("hosts", text, "run on the hosts this inventory names, over SSH, instead of Docker "
         "containers (see docs/GUIDE.md: real hosts over SSH)", "FILE"),
    Spec("accept_new_host_keys", boolean, "with --hosts: write a host key unknown to "
         "known_hosts into it instead of refusing to connect"),
)  # fmt: skip
CLUSTER_BY_NAME = {s.name: s for s in CLUSTER_OPTIONS}


@dataclass(frozen=True)
class ClusterOptions:
    """The cluster settings and their defaults (plain data, as typed or read)."""

    cluster_name: str = DEFAULT_CLUSTER_NAME
    nodes: int = DEFAULT_NODES
    kafka_version: str = DEFAULT_KAFKA_VERSION
    mode: str = DEFAULT_MODE
    controllers: int | None = None
    kraft_quorum: str = "static"
    heap_mb: int = DEFAULT_HEAP_MB
    broker_config: dict[str, str] = field(default_factory=dict)
    leader_check: bool = True
    base_image: str | None = None
    power_loss_fs: bool = False
    hosts: str | None = None
    accept_new_host_keys: bool = False
    kafka_dist: str | None = None

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], hint: str) -> ClusterOptions:
        """The settings among parsed flags (absent ones keep their defaults), validated;
        ``hint`` (the command's help) ends the line refusing a bad value."""
        given = convert({k: v for k, v in flags.items() if k in CLUSTER_BY_NAME},
                        CLUSTER_BY_NAME, hint=hint)
        check_dist_pair(given, given)
        return cls(**given).validate()

    def validate(self) -> ClusterOptions:
        """Raise ``UsageError`` (one line) for a value no cluster can have; no Docker asked."""
        check_values(self, CLUSTER_OPTIONS)
        self.check_quorum(self.kafka())
        self.overrides()  # broker keys, and --leader-check against them
        self.check_placement()
        return self

    def build(self) -> KafkaDist | None:
        """The user's own build (``--kafka-dist``), read and checked; None for a release."""
        if self.kafka_dist is None:
            return None
        from cluster.kafka_dist import inspect_dist

        return inspect_dist(self.kafka_dist)

    def kafka(self) -> KafkaVersion:
        """The Kafka version these settings run (the build's, or the release
        ``--kafka-version`` names), refused in one line if it cannot run in the mode."""
        from cluster.versions import check_runnable, resolve_for_mode

        dist = self.build()
        if dist is None:
            return resolve_for_mode(self.kafka_version, self.mode)
        return check_runnable(dist.kafka, self.mode)

    def check_quorum(self, version: KafkaVersion) -> None:
        """``--kraft-quorum dynamic`` needs KRaft and a version with KIP-853 (3.9+)."""
        if self.kraft_quorum != "dynamic":
            return
        if self.mode != "kraft":
            raise UsageError("--kraft-quorum dynamic needs --mode kraft",
                             hint="a ZooKeeper-mode cluster has no KRaft quorum")
        if version.number < DYNAMIC_QUORUM_SINCE:
            raise UsageError(f"--kraft-quorum dynamic needs Kafka 3.9 or later, got "
                             f"{version.version}", hint="use --kraft-quorum static")

    def check_placement(self) -> None:
        """``--hosts``: the inventory is read and names every node, before any host is
        contacted; ``--accept-new-host-keys`` means nothing without it."""
        if self.hosts is None:
            if self.accept_new_host_keys:
                raise UsageError("--accept-new-host-keys needs --hosts",
                                 hint="host keys are checked only for SSH hosts")
            return
        from cluster.ssh.inventory import load_inventory

        names = [f"n{i}" for i in range(1, self.nodes + 1)]
        load_inventory(self.hosts).for_nodes(names)

    def placement(self) -> Placement:
        """Where the nodes come from: SSH hosts with ``--hosts``, else Docker containers."""
        from cluster.provisioner import Placement

        if self.hosts is None:
            return Placement()
        return Placement("ssh", self.hosts, self.accept_new_host_keys)

    def overrides(self) -> dict[str, str]:
        """The brokers' config overrides (reserved keys refused), with the leader check
        off when ``--leader-check false`` (refused if ``--broker-config`` says otherwise)."""
        from cluster.broker_config import LEADER_CHECK_SWITCH, parse_overrides

        mode: Mode = "kraft" if self.mode == "kraft" else "zookeeper"
        overrides = parse_overrides([f"{k}={v}" for k, v in self.broker_config.items()], mode)
        if not self.leader_check:
            if overrides.get(LEADER_CHECK_SWITCH, "false").strip().lower() != "false":
                raise UsageError(f"--leader-check false contradicts --broker-config "
                                 f"{LEADER_CHECK_SWITCH}={overrides[LEADER_CHECK_SWITCH]}",
                                 hint="give one of them")
            overrides[LEADER_CHECK_SWITCH] = "false"
        return overrides

    def cluster_spec(self) -> ClusterSpec:
        """The cluster these settings describe (broker keys and node counts checked)."""
        from cluster.spec import ClusterSpec

        mode: Mode = "kraft" if self.mode == "kraft" else "zookeeper"
        overrides = self.overrides()
        dist = self.build()
        return ClusterSpec(
            name=self.cluster_name,
            nodes=self.nodes,
            kafka_version=self.kafka_version if dist is None else dist.version,
            kafka_dist=None if dist is None else dist.path,
            kafka_dist_sha256=None if dist is None else dist.sha256,
            mode=mode,
            controllers=self.controllers or min(3, self.nodes),
            kraft_quorum=self.kraft_quorum,
            heap_mb=self.heap_mb,
            broker_config=overrides,
            base_image=self.base_image,
            power_loss_fs=self.power_loss_fs,
        )


def check_dist_pair(explicit: Mapping[str, Any], merged: Mapping[str, Any]) -> None:
    """``--kafka-dist`` with a ``--kafka-version`` given explicitly (in ``explicit``):
    refused unless the version names the build's (``4.2.1-SNAPSHOT``, or its line
    ``4.2.x``), since the build, not Maven Central, decides what runs."""
    path, spec = merged.get("kafka_dist"), explicit.get("kafka_version")
    if path is None or spec is None:
        return
    from cluster.kafka_dist import inspect_dist
    from cluster.versions import line_of, names_a_line, parse_number

    dist = inspect_dist(path)
    text = str(spec).strip().lower().removeprefix("v")
    line = parse_number(text.removesuffix(".x"))
    agrees = text == dist.version.lower() or (
        text != "latest" and names_a_line(text) and line is not None
        and line == line_of(dist.kafka.number))
    if not agrees:
        raise UsageError(f"--kafka-dist {path} is Kafka {dist.version}, but --kafka-version "
                         f"says {spec}", hint="drop --kafka-version: the build names its version")


def check_values(options: object, table: tuple[Spec, ...]) -> None:
    """Check every set value of ``options`` as if it had been typed (type and range)."""
    for spec in table:
        value = getattr(options, spec.name)
        if value is not None:
            spec.parse(value)
