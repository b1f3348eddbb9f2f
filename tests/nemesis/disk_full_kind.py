"""A made-up fault kind, ``disk-full``, implemented the way a real one would be (a ``FaultImpl``).

It fills no disk: the nodes it "fills" are remembered in ``FILLED``, so its
residue probe has something to find. ``test_nemesis_new_kind`` registers it
to show that a module like this plus one registry entry is all a kind takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nemesis.kinds import choice, chosen
from nemesis.nodes import completion

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

FILLED: set[str] = set()


class DiskFullNemesis:
    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver

    def fs(self) -> frozenset[str]:
        return frozenset({"fill-disk", "free-disk"})

    def setup(self, cluster: Cluster) -> None:
        FILLED.clear()

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        names = self.resolver.nodes(cluster, op.get("value") or "all")
        if op["f"] == "fill-disk":
            FILLED.update(names)
            return completion({"filled": names})
        FILLED.difference_update(names)
        return completion({"freed": names})

    def teardown(self, cluster: Cluster) -> None:
        FILLED.clear()


TARGETS = ("one", "all")


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    return {"f": "fill-disk",
            "value": choice(rng, chosen(opts.targets, TARGETS.__contains__, TARGETS))[0]}


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return DiskFullNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    return ["disk still full"] if node.name in FILLED else []
