"""The ``packet`` kind: random loss, rate limits, netem delay, duplication (``nemesis.packet``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cluster.remote import sh
from harness.base.values import Range
from nemesis.kinds import choice, chosen, fields_of, target_of
from nemesis.net import LOSS_CHAIN, list_rules
from nemesis.packet import KNOWN, START, STOP, PacketNemesis
from nemesis.targets import DEFAULT_PLAIN_TARGETS, PLAIN_TARGETS

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

#: ``--nemesis-packet`` behaviour -> the op's key and the levels drawn for it.
LEVELS: Mapping[str, tuple[str, Sequence[float]]] = {
    "loss": ("loss", (0.05, 0.2, 0.5)),
    "rate": ("rate-kbit", (256, 1024, 8192)),
    "delay": ("delay-ms", (20, 100, 500)),
    "duplicate": ("duplicate", (0.01, 0.1)),
}
#: What a ``start-packet`` field may be: probabilities from 0 to 1, a rate above
#: 0 kbit/s (up to 100 Gbit/s), delays up to a minute. NaN and infinities are in no range.
FIELDS = {
    "loss": Range(0, 1), "duplicate": Range(0, 1),
    "rate-kbit": Range(0, 100_000_000, open_lo=True),
    "delay-ms": Range(0, 60_000), "jitter-ms": Range(0, 60_000),
}
#: Root qdiscs insync installs (tbf alone, netem or htb with netem).
SHAPING_QDISCS = ("netem", "tbf", "htb")


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """One behaviour of ``--nemesis-packet`` at a drawn level, on a drawn plain target."""
    target, rng = choice(rng, chosen(opts.targets, PLAIN_TARGETS.__contains__,
                                         DEFAULT_PLAIN_TARGETS))
    behaviour, rng = choice(rng, opts.packet)
    key, levels = LEVELS[behaviour]
    level, rng = choice(rng, levels)
    return {"f": START, "value": {"target": target, key: level}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A table of known fields within ``FIELDS``, and a target naming nodes."""
    if f == STOP or value is None:
        return None
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"target", *KNOWN})
        if unknown:
            return f"unknown packet fields {unknown}: use target, {', '.join(KNOWN)}"
    return fields_of(value, FIELDS) or target_of(value, nodes)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return PacketNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """Rules of insync's loss chain, and shaping qdiscs."""
    rules = list_rules(node.remote).splitlines()
    found = [f"iptables: {r}" for r in rules if LOSS_CHAIN in r.split()]
    qdiscs = sh(node.remote, "tc qdisc show").stdout
    return found + [f"qdisc: {q}" for q in qdiscs.splitlines()
                    if any(f"qdisc {k} " in q for k in SHAPING_QDISCS)]
