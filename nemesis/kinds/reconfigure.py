"""The ``reconfigure`` kind: a dynamic topic or broker config change mid-run, and its undo
(``nemesis.reconfigure``).

``reconfigure`` takes ``{topic = "t0"|"*", set = {key = value}}`` or ``{broker =
"n2"|"all", set = {...}}``; random runs draw one of ``DRAWN`` on every workload
topic. ``restore-config`` (the heal) puts back the values found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nemesis.kinds import choice
from nemesis.reconfigure import START, ReconfigureNemesis
from nemesis.targets import node_problem

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

#: The changes random runs draw: the two settings that decide what a fault may lose.
DRAWN: tuple[dict[str, Any], ...] = (
    {"set": {"min.insync.replicas": "1"}},
    {"set": {"unclean.leader.election.enable": "true"}},
)
#: A Kafka config key (``min.insync.replicas``).
CONFIG_KEY = re.compile(r"^[a-z][a-z0-9._-]*$")
TOPIC = re.compile(r"^([A-Za-z0-9._-]+|\*)$")


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """One of ``DRAWN``, on every workload topic."""
    change, _ = choice(rng, DRAWN)
    return {"f": START, "value": {"topic": "*", **change}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A table with ``set`` (config keys to values), on a ``topic`` or a ``broker``."""
    if f != START:
        return None
    if not isinstance(value, Mapping):
        return f"reconfigure takes a table {{topic or broker, set}}, got {value!r}"
    unknown = sorted(set(value) - {"topic", "broker", "set"})
    if unknown:
        return f"reconfigure takes topic, broker, set; got {', '.join(map(repr, unknown))}"
    if "topic" in value and "broker" in value:
        return "reconfigure changes a topic or a broker, not both"
    if "topic" in value and not (isinstance(value["topic"], str) and TOPIC.match(value["topic"])):
        return f"topic must be a topic name or *, got {value['topic']!r}"
    if "broker" in value and value["broker"] != "all":
        problem = node_problem(value["broker"], nodes)
        if problem:
            return f"broker must be all or a node: {problem}"
    changes = value.get("set")
    if not isinstance(changes, Mapping) or not changes:
        return "reconfigure needs set = {key = value, ...}"
    for key, v in changes.items():
        if not CONFIG_KEY.match(str(key)):
            return f"{key!r} is not a config key (e.g. min.insync.replicas)"
        if not isinstance(v, str | int | bool) or isinstance(v, float):
            return f"{key} takes a string, a whole number or a boolean, got {v!r}"
    return None


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return ReconfigureNemesis(resolver, opts.topic_prefix)


def residue(node: KafkaNode) -> list[str]:
    """A config change is the cluster's, not a node's: nothing here."""
    return []
