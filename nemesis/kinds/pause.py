"""The ``pause`` kind: SIGSTOP a broker, SIGCONT it (machinery in ``nemesis.process``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluster.remote import sh
from nemesis.kinds import choice, chosen, target_of
from nemesis.process import PauseNemesis
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
    return {"f": PauseNemesis.start_f, "value": target}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """The target must name nodes (the heal's may be absent: every node)."""
    return target_of(value, nodes)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return PauseNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """Stopped processes (state ``T``): the broker, or a ZooKeeper paused with it."""
    procs = sh(node.remote, "ps -eo pid=,stat=,comm=").stdout
    return [f"stopped process: {line.strip()}" for line in procs.splitlines()
            if len(line.split()) >= 2 and line.split()[1].startswith("T")]
