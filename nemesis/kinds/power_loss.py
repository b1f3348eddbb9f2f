"""The ``power-loss`` kind: lose what was never fsynced, power on again (``nemesis.power_loss``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluster import power_loss_fs
from nemesis.kinds import choice, chosen, target_of
from nemesis.power_loss import PowerLossNemesis
from nemesis.targets import DEFAULT_TARGETS, is_target

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A drawn target (``DEFAULT_TARGETS`` unless ``--nemesis-targets`` names some)."""
    target, _ = choice(rng, chosen(opts.targets, is_target, DEFAULT_TARGETS))
    return {"f": PowerLossNemesis.start_f, "value": target}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """The target must name nodes (the heal's may be absent: every node)."""
    return target_of(value, nodes)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return PowerLossNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """A node whose power was cut and never restored has no filesystem under its data."""
    if node.spec.power_loss_fs and not power_loss_fs.is_mounted(node.data_mount):
        return ["power-loss filesystem not mounted (power never restored)"]
    return []
