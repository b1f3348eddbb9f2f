"""The ``downgrade`` kind: a rolling restart of every broker back onto an older build
(``nemesis.upgrade``), where Kafka documents it as supported.

``downgrade`` takes a build as ``upgrade`` does, or none: back to the run's
own build (what random runs do). It is refused before anything starts when
the cluster speaks a protocol (``inter.broker.protocol.version``) or
metadata level (``metadata.version``) newer than the target build's line.
``end-downgrade`` starts what a roll left down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nemesis.kinds.upgrade import value_problem
from nemesis.upgrade import DOWNGRADE, UpgradeNemesis

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """Back to the run's own build."""
    return {"f": DOWNGRADE, "value": {}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A build to go to (none: the run's own), timeouts in range."""
    return None if f != DOWNGRADE else value_problem(f, value, needs_build=False)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return UpgradeNemesis(DOWNGRADE, resolver)


def residue(node: KafkaNode) -> list[str]:
    """Nothing of its own, as ``upgrade``."""
    return []
