"""The ``partition`` kind: iptables cuts between nodes (machinery in ``nemesis.partition``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nemesis.grudge import SHAPES
from nemesis.kinds import choice, chosen, target_of
from nemesis.net import PARTITION_CHAIN, list_rules
from nemesis.partition import START, PartitionNemesis
from nemesis.shapes import default_shapes, is_shape
from nemesis.targets import node_problem

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


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A shape, or ``{isolate = target}``, ``{components = [[nodes]...]}`` or
    ``{grudge = {node = [nodes]}}`` naming nodes of the run."""
    if f != START or value is None:
        return None
    if isinstance(value, str):
        if value.startswith(("leaders:", "primaries:")):
            return target_of(value, nodes)  # leaders:0 says so
        if is_shape(value):
            return None
        return f"unknown partition shape {value!r}: use {', '.join(SHAPES)} or leaders:N"
    if not isinstance(value, Mapping) or len(value) != 1:
        return (f"a partition is a shape or one of {{isolate = TARGET}}, {{components = "
                f"[[NODES]...]}}, {{grudge = {{NODE = [NODES]}}}}; got {value!r}")
    (form, spec), = value.items()
    if form == "isolate":
        return target_of(spec, nodes)
    if form == "components" and isinstance(spec, list) and all(
            isinstance(c, list) for c in spec):
        named = [n for c in spec for n in c]
    elif form == "grudge" and isinstance(spec, Mapping) and all(
            isinstance(v, list) for v in spec.values()):
        named = [*spec, *(n for v in spec.values() for n in v)]
    else:
        return (f"a partition's {form!r} must be isolate = TARGET, components = "
                f"[[NODES]...] or grudge = {{NODE = [NODES]}}; got {value!r}")
    return next((p for p in (node_problem(n, nodes) for n in named) if p), None)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return PartitionNemesis(resolver, partition_clients=opts.partition_clients)


def residue(node: KafkaNode) -> list[str]:
    """Rules of insync's partition chain (the chain itself, its hook, its DROPs)."""
    rules = list_rules(node.remote).splitlines()
    return [f"iptables: {r}" for r in rules if PARTITION_CHAIN in r.split()]
