"""The ``reassign`` kind: kafka-reassign-partitions moves a partition's replicas, and back
(``nemesis.leadership``).

``reassign`` takes ``{key?, replicas?, timeout-s?}``: no key, a workload
partition drawn when it happens (``group-coordinator:GROUP``: the group's
``__consumer_offsets`` partition); no replicas, its leader replaced by a broker
that holds no replica of it, or (every broker holds one) its replicas rotated
so that another one is preferred. ``reassign-back`` (the heal) moves every
partition moved back to the replicas it had first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.base.values import Range
from nemesis.kinds import fields_of
from nemesis.leadership import REASSIGN, ReassignNemesis, is_key
from nemesis.targets import node_problem

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

RANGES = {"timeout-s": Range(1, 3600)}


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A reassignment of a partition drawn when it happens, by the default plan."""
    return {"f": REASSIGN, "value": {}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A table of a partition ``key``, ``replicas`` (distinct node names) and ``timeout-s``."""
    if f != REASSIGN or value is None:
        return None
    if not isinstance(value, Mapping):
        return f"reassign takes a table {{key, replicas, timeout-s}}, got {value!r}"
    unknown = sorted(set(value) - {"key", "replicas", *RANGES})
    if unknown:
        return f"reassign takes key, replicas, timeout-s; got {', '.join(map(repr, unknown))}"
    if "key" in value and not is_key(value["key"]):
        return ("key must name a partition (t0-1) or group-coordinator:GROUP, "
                f"got {value['key']!r}")
    replicas = value.get("replicas", ["n1"])
    if (not isinstance(replicas, list) or not replicas
            or len(set(map(str, replicas))) != len(replicas)):
        return f"replicas must be a list of distinct node names, got {replicas!r}"
    for name in replicas:
        problem = node_problem(name, nodes)
        if problem:
            return problem
    return fields_of(value, RANGES)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return ReassignNemesis(resolver, opts.topic_prefix)


def residue(node: KafkaNode) -> list[str]:
    """A reassignment leaves nothing on a node (the assignment is the cluster's)."""
    return []
