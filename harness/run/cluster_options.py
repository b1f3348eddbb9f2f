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
    kafka_version,
    key_values,
    text,
    whole,
)

if TYPE_CHECKING:
    from cluster.provisioner import Placement
    from cluster.spec import ClusterSpec, Mode

CLUSTER_OPTIONS: tuple[Spec, ...] = (
    Spec("cluster_name", cluster_name, "the cluster's name: letters, digits, '-' (default: "
         f"{DEFAULT_CLUSTER_NAME})", "NAME"),
    Spec("nodes", whole, f"Kafka nodes (default: {DEFAULT_NODES})", range=Range(1, MAX_NODES)),
    Spec("kafka_version", kafka_version, f"e.g. 4.1.x, 3.9.x (default: {DEFAULT_KAFKA_VERSION})"),
    Spec("mode", choice(*MODES), f"kraft or zookeeper (default: {DEFAULT_MODE})"),
    Spec("controllers", whole, "KRaft voters among the nodes (default: min(3, nodes))",
         range=Range(1, MAX_NODES)),
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
    heap_mb: int = DEFAULT_HEAP_MB
    broker_config: dict[str, str] = field(default_factory=dict)
    leader_check: bool = True
    base_image: str | None = None
    power_loss_fs: bool = False
    hosts: str | None = None
    accept_new_host_keys: bool = False

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], hint: str) -> ClusterOptions:
        """The settings among parsed flags (absent ones keep their defaults), validated;
        ``hint`` (the command's help) ends the line refusing a bad value."""
        given = {k: v for k, v in flags.items() if k in CLUSTER_BY_NAME}
        return cls(**convert(given, CLUSTER_BY_NAME, hint=hint)).validate()

    def validate(self) -> ClusterOptions:
        """Raise ``UsageError`` (one line) for a value no cluster can have; no Docker asked."""
        check_values(self, CLUSTER_OPTIONS)
        from cluster.versions import resolve_for_mode

        resolve_for_mode(self.kafka_version, self.mode)
        self.cluster_spec()  # broker keys, and --leader-check against them
        self.check_placement()
        return self

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

    def cluster_spec(self) -> ClusterSpec:
        """The cluster these settings describe (broker keys and node counts checked)."""
        from cluster.broker_config import LEADER_CHECK_SWITCH, parse_overrides
        from cluster.spec import ClusterSpec

        mode: Mode = "kraft" if self.mode == "kraft" else "zookeeper"
        overrides = parse_overrides([f"{k}={v}" for k, v in self.broker_config.items()], mode)
        if not self.leader_check:
            if overrides.get(LEADER_CHECK_SWITCH, "false").strip().lower() != "false":
                raise UsageError(f"--leader-check false contradicts --broker-config "
                                 f"{LEADER_CHECK_SWITCH}={overrides[LEADER_CHECK_SWITCH]}",
                                 hint="give one of them")
            overrides[LEADER_CHECK_SWITCH] = "false"
        return ClusterSpec(
            name=self.cluster_name,
            nodes=self.nodes,
            kafka_version=self.kafka_version,
            mode=mode,
            controllers=self.controllers or min(3, self.nodes),
            heap_mb=self.heap_mb,
            broker_config=overrides,
            base_image=self.base_image,
            power_loss_fs=self.power_loss_fs,
        )


def check_values(options: object, table: tuple[Spec, ...]) -> None:
    """Check every set value of ``options`` as if it had been typed (type and range)."""
    for spec in table:
        value = getattr(options, spec.name)
        if value is not None:
            spec.parse(value)
