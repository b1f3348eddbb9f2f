"""The ``elect-leader`` kind: kafka-leader-election on demand (``nemesis.leadership``).

``elect-leader`` takes ``preferred``, ``unclean`` or a table ``{type, key}`` (no
key: every workload partition; ``group-coordinator:GROUP``: the group's
``__consumer_offsets`` partition); random runs draw preferred elections only (an
unclean one is asked for by a script or scenario). ``elect-preferred`` (the
heal) elects the preferred leader of every workload partition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster.admin_tools import ELECTIONS
from nemesis.leadership import ELECT, ElectNemesis, is_key

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A preferred election of every workload partition."""
    return {"f": ELECT, "value": {"type": "preferred"}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """``preferred``/``unclean``, or a table of ``type`` and a partition ``key``."""
    if f != ELECT or value is None:
        return None
    if isinstance(value, str):
        value = {"type": value}
    if not isinstance(value, Mapping):
        return f"elect-leader takes preferred, unclean or {{type, key}}, got {value!r}"
    unknown = sorted(set(value) - {"type", "key"})
    if unknown:
        return f"elect-leader takes type and key; got {', '.join(map(repr, unknown))}"
    if value.get("type", "preferred") not in ELECTIONS:
        return f"election type must be preferred or unclean, got {value.get('type')!r}"
    if "key" in value and not is_key(value["key"]):
        return ("key must name a partition (t0-1) or group-coordinator:GROUP, "
                f"got {value['key']!r}")
    return None


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return ElectNemesis(resolver, opts.topic_prefix)


def residue(node: KafkaNode) -> list[str]:
    """An election leaves nothing on a node."""
    return []
