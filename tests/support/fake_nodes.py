"""A ``Provisioner`` whose nodes are ``FakeRemote``s answered by one handler function.

It does what a real provisioner does short of making machines: checks the
version against the mode, hands its nodes to ``cluster.deploy.start`` (so every
command a real ``up`` would send to a node reaches the handler), keeps the
cluster under its name for ``attach``, reuses it unless ``fresh`` or the spec
changed, and forgets it on ``down``. It does not wait for readiness: there is
no Kafka behind a handler to answer a probe write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fake_remote import FakeRemote

from cluster import deploy
from cluster.kafka_node import KafkaNode
from cluster.model import Cluster, Say
from cluster.spec import ClusterSpec
from cluster.versions import KafkaVersion
from harness.base.errors import ClusterError

#: ``(node, argv, stdin) -> (exit_code, stdout, stderr)``, for every node's commands.
NodeHandler = Callable[[str, tuple[str, ...], str | None], tuple[int, str, str]]


@dataclass
class FakeProvisioner:
    """Nodes ``nK`` at ``10.0.0.K``, Kafka at ``kafka_home``, clients from ``client_source``."""

    handler: NodeHandler
    kafka_home: str = "/opt/kafka"
    client_source: str = "10.0.0.254"
    clusters: dict[str, Cluster] = field(default_factory=dict)

    def up(
        self,
        spec: ClusterSpec,
        *,
        fresh: bool = False,
        say: Say = print,
        ready_timeout_s: float = 180.0,
    ) -> Cluster:
        version = deploy.check_version(spec)
        existing = self.clusters.get(spec.name)
        if existing is not None and not fresh and existing.spec == spec:
            say(f"reusing the running cluster {spec.name!r} (same settings)")
            return existing
        nodes = {n: self._node(spec, version, n) for n in spec.node_names}
        cluster = Cluster(spec, version, nodes)
        self.clusters[spec.name] = cluster
        deploy.start(cluster, None)
        return cluster

    def attach(self, name: str = "insync") -> Cluster:
        try:
            return self.clusters[name]
        except KeyError:
            raise ClusterError(
                f"no cluster named {name!r} is running", hint="start one with `insync cluster up`"
            ) from None

    def down(self, name: str | None) -> str:
        names = list(self.clusters) if name is None else [name]
        removed = sum(len(c.nodes) for c in (self.clusters.pop(n, None) for n in names) if c)
        return f"{removed} node(s)"

    def prepare(self, *, rebuild: bool = False) -> str:
        return "fake nodes: nothing to prepare"

    def _node(self, spec: ClusterSpec, version: KafkaVersion, name: str) -> KafkaNode:
        def answer(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
            return self.handler(name, argv, stdin)

        return KafkaNode(
            name,
            f"10.0.0.{spec.node_id(name)}",
            FakeRemote(name, answer),
            spec,
            version,
            kafka_home=self.kafka_home,
            client_source=self.client_source,
        )
