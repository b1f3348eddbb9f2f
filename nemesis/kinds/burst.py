"""The ``burst`` kind: a producer of the nemesis's own writes one partition flat out
(``nemesis.burst``).

``start-burst`` takes a partition's key (``t0-0``, or ``{key = "t0-0"}``);
``stop-burst`` takes the key or ``all`` (the heal). Random runs draw a burst on
``t0-0``, the partition every run writes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nemesis.burst import START, STOP, BurstNemesis
from nemesis.leadership import KEY

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A burst on ``t0-0``."""
    return {"f": START, "value": {"key": "t0-0"}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A partition's key (``t0-0``); ``stop-burst`` also takes ``all``."""
    if f == STOP and value in (None, "all"):
        return None
    key = value.get("key") if isinstance(value, Mapping) else value
    if isinstance(value, Mapping) and set(value) - {"key"}:
        return f"{f} takes key, got {', '.join(map(repr, sorted(set(value) - {'key'})))}"
    if not isinstance(key, str) or not KEY.match(key):
        return f"{f} takes a partition's key (t0-0), got {key!r}"
    return None


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return BurstNemesis(opts.topic_prefix)


def residue(node: KafkaNode) -> list[str]:
    """A burst runs in insync's own process and leaves nothing on a node."""
    return []
