"""The ``restart`` kind: a controlled restart of brokers, one at a time (``nemesis.restart``).

``restart`` takes a target (``one``, ``leaders``, ``leader:t0-0``, ``controller``,
a node, or ``all``: a rolling restart of every broker in turn) or a table
``{target, stop-timeout-s, isr-timeout-s}``; ``end-restart`` starts what a failed
restart left down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.base.values import Range
from nemesis.kinds import choice, chosen, fields_of, target_of
from nemesis.restart import START, STOP, RestartNemesis
from nemesis.targets import is_target

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

#: Drawn targets (without ``--nemesis-targets``): one broker, the leader of a key, the
#: active controller, every broker in turn.
RESTART_TARGETS = ("one", "leaders", "controller", "all")
#: The timeouts a table may set, in seconds.
TIMEOUTS = {"stop-timeout-s": Range(1, 3600), "isr-timeout-s": Range(0, 3600)}


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A drawn target (``RESTART_TARGETS`` unless ``--nemesis-targets`` names some)."""
    target, _ = choice(rng, chosen(opts.targets, is_target, RESTART_TARGETS))
    return {"f": START, "value": target}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A target naming nodes, or a table of one with timeouts in range."""
    if f == STOP:
        return None
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"target", *TIMEOUTS})
        if unknown:
            return (f"restart takes target, {', '.join(TIMEOUTS)}; "
                    f"got {', '.join(map(repr, unknown))}")
        return fields_of(value, TIMEOUTS) or target_of(value, nodes)
    return target_of(value, nodes)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return RestartNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """Nothing of its own: a broker left down is reported for every node by
    ``nemesis.residue``, whatever took it down."""
    return []
