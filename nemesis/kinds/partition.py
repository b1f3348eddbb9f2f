"""The ``partition`` kind: iptables cuts between nodes (machinery in ``nemesis.partition``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nemesis.kinds import choice, chosen
from nemesis.net import PARTITION_CHAIN, list_rules
from nemesis.partition import START, PartitionNemesis
from nemesis.shapes import default_shapes, is_shape

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A partition of a shape drawn from the ``--nemesis-targets`` that are shapes."""
    shapes = chosen(opts.targets, is_shape, default_shapes(opts.nodes))
    return {"f": START, "value": choice(rng, shapes)[0]}


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return PartitionNemesis(resolver, partition_clients=opts.partition_clients)


def residue(node: KafkaNode) -> list[str]:
    """Rules of insync's partition chain (the chain itself, its hook, its DROPs)."""
    rules = list_rules(node.remote).splitlines()
    return [f"iptables: {r}" for r in rules if PARTITION_CHAIN in r.split()]
