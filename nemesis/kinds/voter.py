"""The ``voter`` kind: KRaft controller quorum changes (``nemesis.quorum``, KIP-853).

``remove-controller`` takes ``active-controller`` (the default) or a node;
``add-controller`` (the heal) takes a node, or nothing: every controller of the
cluster missing from the voter set. Both need a cluster made with
``--kraft-quorum dynamic`` (Kafka 3.9+); on a static quorum the op is recorded
as failed, and nothing is changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nemesis.quorum import ACTIVE, ADD, REMOVE, QuorumNemesis
from nemesis.targets import node_problem

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """The change that tests the quorum most: removing its leader."""
    return {"f": REMOVE, "value": ACTIVE}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """``active-controller`` or a node (``remove-controller``); a node or none (``add``)."""
    if value is None or (f == REMOVE and value == ACTIVE):
        return None
    if f not in (REMOVE, ADD):
        return None
    problem = node_problem(value, nodes)
    if problem is None:
        return None
    named = "active-controller or a node" if f == REMOVE else "a node, or nothing (every one)"
    return f"{f} takes {named}: {problem}"


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return QuorumNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """The voter set is the quorum's, not a node's: the heal compares it with the
    cluster's controllers."""
    return []
