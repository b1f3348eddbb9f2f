"""A cluster described as plain data.

``ClusterSpec`` is everything needed to build a cluster again: the provisioner
keeps it with the nodes it makes, so ``insync cluster status`` / ``down`` and a
later ``insync run`` can find and reuse a cluster without any other state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from cluster.jvm import DEFAULT_HEAP_MB
from harness.base.errors import UsageError

Mode = Literal["kraft", "zookeeper"]
MODES: tuple[Mode, ...] = ("kraft", "zookeeper")

BROKER_PORT = 9092
CONTROLLER_PORT = 9093
ZK_CLIENT_PORT = 2181
ZK_PEER_PORT = 2888
ZK_ELECTION_PORT = 3888
#: Ports that carry Kafka traffic between nodes (partitions cut these).
KAFKA_PORTS = (BROKER_PORT, CONTROLLER_PORT, ZK_CLIENT_PORT, ZK_PEER_PORT, ZK_ELECTION_PORT)

MAX_NODES = 9
#: The defaults of a cluster, here once: ``ClusterOptions`` (the flags) starts from them.
DEFAULT_CLUSTER_NAME = "insync"
DEFAULT_NODES = 3
DEFAULT_KAFKA_VERSION = "4.1.x"
DEFAULT_MODE: Mode = "kraft"
#: Broker JVM heap bounds in MiB (``--heap-mb``).
MIN_HEAP_MB, MAX_HEAP_MB = 128, 4096


#: A cluster name: it names Docker containers and networks, lock files and labels, so
#: ASCII lower-case letters, digits and inner '-' only (``str.isalnum`` would let ``zz²``
#: through to the engine), short enough for a host name with a node suffix.
CLUSTER_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?", re.ASCII)
#: A node name: ``n`` and a number without leading zeros (``n01`` would be a second
#: spelling of ``n1``), ASCII digits only.
NODE_NAME = re.compile(r"n[1-9][0-9]*", re.ASCII)


def check_name(name: str) -> str:
    """A cluster name holds only ASCII lower-case letters, digits and inner '-'."""
    if CLUSTER_NAME.fullmatch(name) is None:
        raise UsageError(
            f"cluster name {name!r} may hold only a-z, 0-9 and '-' (not first or last), "
            "at most 40 characters",
            hint="e.g. insync-2",
        )
    return name


def check_node(node: str) -> str:
    """A node name as ``ClusterSpec.node_names`` makes them (``n1``, ``n2``, ...)."""
    if NODE_NAME.fullmatch(node) is None:
        raise ValueError(f"not a node name: {node!r}")
    return node


#: The KRaft controller quorums a cluster can be formatted with (``ClusterSpec.kraft_quorum``).
KRAFT_QUORUMS = ("static", "dynamic")
#: The first Kafka line whose controller quorum can be dynamic (KIP-853, kraft.version 1).
DYNAMIC_QUORUM_SINCE = (3, 9)


@dataclass(frozen=True)
class ClusterSpec:
    """What cluster to build. Node ``nK`` has broker/node id ``K``."""

    name: str = DEFAULT_CLUSTER_NAME
    nodes: int = DEFAULT_NODES
    kafka_version: str = DEFAULT_KAFKA_VERSION
    mode: Mode = DEFAULT_MODE
    #: KRaft voters: the first ``controllers`` nodes run broker+controller.
    controllers: int = 3
    heap_mb: int = DEFAULT_HEAP_MB
    broker_config: Mapping[str, str] = field(default_factory=dict)
    base_image: str | None = None
    #: Start brokers under libfaketime (``cluster.kafka_node.faketime_env``) so the
    #: clock nemesis can skew them; off unless a run asks for clock faults.
    faketime: bool = False
    #: Mount each broker's data directory through the power-loss filesystem
    #: (``cluster.power_loss_fs``), so the ``power-loss`` fault can drop what was never
    #: fsynced; off unless asked for (``--power-loss-fs``) or a run uses that fault.
    power_loss_fs: bool = False
    #: A person's own build (``cluster.kafka_dist``): its absolute path and digest.
    #: ``kafka_version`` is then the version read from its jars (``4.5.0-SNAPSHOT``).
    kafka_dist: str | None = None
    kafka_dist_sha256: str | None = None
    #: KRaft controller quorum: ``static`` (``controller.quorum.voters``, fixed at
    #: format) or ``dynamic`` (KIP-853, kraft.version 1: formatted with
    #: ``--initial-controllers`` and found through ``controller.quorum.bootstrap.servers``,
    #: so that ``kafka-metadata-quorum add-controller``/``remove-controller`` can change it).
    kraft_quorum: str = "static"

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_NODES:
            raise UsageError(f"--nodes must be between 1 and {MAX_NODES}, got {self.nodes}")
        if self.mode not in MODES:
            raise UsageError(f"--mode must be kraft or zookeeper, got {self.mode!r}")
        if self.mode == "kraft" and not 1 <= self.controllers <= self.nodes:
            raise UsageError(
                f"--controllers must be between 1 and --nodes ({self.nodes}), "
                f"got {self.controllers}"
            )
        if self.kraft_quorum not in KRAFT_QUORUMS:
            raise UsageError(f"--kraft-quorum must be static or dynamic, got {self.kraft_quorum!r}")
        if self.kraft_quorum == "dynamic" and self.mode != "kraft":
            raise UsageError("--kraft-quorum dynamic needs --mode kraft",
                             hint="a ZooKeeper-mode cluster has no KRaft quorum")
        if not MIN_HEAP_MB <= self.heap_mb <= MAX_HEAP_MB:
            raise UsageError(
                f"--heap-mb must be between {MIN_HEAP_MB} and {MAX_HEAP_MB}, got {self.heap_mb}"
            )
        check_name(self.name)

    @property
    def node_names(self) -> list[str]:
        return [f"n{i}" for i in range(1, self.nodes + 1)]

    @property
    def zookeeper_nodes(self) -> list[str]:
        """ZooKeeper runs co-located on the first three nodes (or all, if fewer)."""
        return self.node_names[: min(3, self.nodes)] if self.mode == "zookeeper" else []

    @property
    def controller_nodes(self) -> list[str]:
        return self.node_names[: self.controllers] if self.mode == "kraft" else []

    def roles(self, node: str) -> list[str]:
        roles = ["broker"]
        if node in self.controller_nodes:
            roles.append("controller")
        if node in self.zookeeper_nodes:
            roles.append("zookeeper")
        return roles

    @staticmethod
    def node_id(node: str) -> int:
        return int(node.removeprefix("n"))

    def replication_factor(self) -> int:
        """Replication for internal topics and the readiness probe: 3 where possible."""
        return min(3, self.nodes)

    def to_json(self) -> str:
        data = asdict(self)
        data["broker_config"] = dict(self.broker_config)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ClusterSpec:
        data: dict[str, Any] = json.loads(text)
        return cls(**data)
