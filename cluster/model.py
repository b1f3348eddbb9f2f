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
from harness.base.errors import UsageError

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
        the client settings of brokers without ApiVersions, and topics made through
        ZooKeeper on brokers without CreateTopics (both from the version's data)."""
        from cluster.kafka_clients import speak_to
        from cluster.zk_topics import admin_factory

        factory = None if self.version.can("create_topics") else admin_factory(
            list(self.nodes.values()), self.zookeeper)
        speak_to(self.bootstrap.split(","), self.version.client_config, factory)

    def node(self, name: str) -> KafkaNode:
        try:
            return self.nodes[name]
        except KeyError:
            raise UsageError(f"no node {name!r}; nodes are {', '.join(self.nodes)}") from None


def each_node(fn: Callable[[KafkaNode], T], nodes: Iterable[KafkaNode]) -> dict[str, T]:
    """Run ``fn`` on every node at once; raise the first failure after all finish."""
    nodes = list(nodes)
    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        futures = {n.name: pool.submit(fn, n) for n in nodes}
    return {name: fut.result() for name, fut in futures.items()}
