"""A running cluster as the rest of insync sees it: a spec, a version, nodes.

It lives apart from the provisioners that make clusters, so that everything
that only *uses* one (readiness, metadata, the nemesis, the runner) depends on
this small module and never on how the nodes came to be.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from cluster.kafka_node import KafkaNode
from cluster.spec import BROKER_PORT, ZK_CLIENT_PORT, ClusterSpec
from cluster.versions import KafkaVersion
from harness.base.errors import ClusterError, InsyncError, UsageError

T = TypeVar("T")
#: How a provisioner reports progress a user should see (``print`` by default).
Say = Callable[[str], None]


@contextmanager
def stage(say: Say, done: str) -> Iterator[None]:
    """Say ``done`` with the seconds the block took, once it finished without error.

    A nightly job's log has no live panel: one line per setup stage (engine,
    image, jars, nodes, readiness) shows where the first minutes went.
    """
    started = time.monotonic()
    yield
    say(f"{done} ({time.monotonic() - started:.1f}s)")


@dataclass
class Cluster:
    """A running cluster: its spec, resolved version and node handles."""

    spec: ClusterSpec
    version: KafkaVersion
    nodes: dict[str, KafkaNode]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{n.address}:{BROKER_PORT}" for n in self.nodes.values())

    @property
    def zookeeper(self) -> str:
        """The ZooKeeper ensemble's connect string as the nodes reach it (ZooKeeper mode)."""
        return ",".join(f"{self.nodes[n].address}:{ZK_CLIENT_PORT}"
                        for n in self.spec.zookeeper_nodes)

    def __post_init__(self) -> None:
        """Tell ``cluster.kafka_clients`` what clients of these brokers need, if anything:
        the client settings of brokers without ApiVersions, the ceilings on consumers'
        settings, and topics made through ZooKeeper on brokers without CreateTopics
        (all from the version's data)."""
        from cluster.kafka_clients import speak_to
        from cluster.zk_topics import admin_factory

        factory = None if self.version.can("create_topics") else admin_factory(
            list(self.nodes.values()), self.zookeeper)
        speak_to(self.bootstrap.split(","), self.version.client_config, factory,
                 self.version.consumer_limits)

    def node(self, name: str) -> KafkaNode:
        try:
            return self.nodes[name]
        except KeyError:
            raise UsageError(f"no node {name!r}; nodes are {', '.join(self.nodes)}") from None


class NotReady(ClusterError):
    """A cluster that ``up`` created and that then never became ready (its start or its
    readiness wait failed).

    It carries the cluster, because the cluster is the command's own: the command reads
    its logs and, asked to tear down, removes it through its normal teardown, where a
    cluster ``up`` merely found is never touched. ``remove_with`` is the command that
    removes it by hand (it differs between Docker and SSH hosts); the hint is set by
    whoever decides the cluster's fate (``kept`` or ``removed``).
    """

    def __init__(self, cluster: Cluster, cause: BaseException, remove_with: str) -> None:
        said = cause.one_line() if isinstance(cause, InsyncError) else str(cause) or repr(cause)
        super().__init__(f"cluster {cluster.spec.name!r} never became ready: {said}")
        self.cluster = cluster
        self.remove_with = remove_with
        self.logs: str | None = None  # where the command collected its nodes' logs

    def settle(self, *, removed: bool, logs: str | None = None) -> None:
        """The hint once the cluster's fate is known: removed by the command's teardown,
        or kept (and how to remove it)."""
        self.logs = logs or self.logs
        where = f"its nodes' logs are in {self.logs}; " if self.logs else ""
        fate = "it is removed (teardown)" if removed else (
            f"it is kept: remove it with `{self.remove_with}`")
        self.hint = where + fate


def each_node(fn: Callable[[KafkaNode], T], nodes: Iterable[KafkaNode]) -> dict[str, T]:
    """Run ``fn`` on every node at once; raise the first failure after all finish."""
    nodes = list(nodes)
    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        futures = {n.name: pool.submit(fn, n) for n in nodes}
    return {name: fut.result() for name, fut in futures.items()}
