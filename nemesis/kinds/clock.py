"""The ``clock`` kind: per-broker wall-clock faults through libfaketime (``nemesis.clock``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluster.kafka_node import FAKETIME_CONTROL
from cluster.remote import read_if_there
from nemesis.clock import STROBE_PIDFILE, ClockNemesis
from nemesis.kinds import choice, chosen
from nemesis.targets import DEFAULT_TARGETS, is_target

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

#: Offsets a bump or strobe draws (either sign): from jitter to ten minutes.
DELTAS_MS = (100, 1_000, 5_000, 30_000, 120_000, 600_000)


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A bump (twice as likely), strobe or freeze of a drawn target.

    The draws come in a fixed order (target, fault, delta, sign, period) whatever
    the fault, so a seed replays the same ops across versions.
    """
    target, rng = choice(rng, chosen(opts.targets, is_target, DEFAULT_TARGETS))
    fault, rng = choice(rng, ("bump", "bump", "strobe", "freeze"))
    delta, rng = choice(rng, DELTAS_MS)
    sign, rng = choice(rng, (1, -1))
    if fault == "bump":
        return {"f": "bump-clock", "value": {"target": target, "delta-ms": sign * delta}}
    if fault == "freeze":
        return {"f": "freeze-clock", "value": {"target": target}}
    period, rng = choice(rng, (50, 200, 1000))
    return {"f": "strobe-clock", "value": {
        "target": target, "delta-ms": sign * delta, "period-ms": period,
        "duration-s": max(1.0, min(opts.interval, 10.0))}}


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return ClockNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """A faketime offset other than zero, or a strobe loop still running."""
    found: list[str] = []
    ctl = read_if_there(node.remote, node.at(FAKETIME_CONTROL)).strip()
    if ctl and ctl not in ("+0", "+0.000"):
        found.append(f"faketime offset: {ctl!r}")
    strobe = read_if_there(node.remote, node.at(STROBE_PIDFILE)).strip()
    if strobe:
        found.append(f"strobe loop pidfile: {strobe}")
    return found
