"""Composable fault packages, as in Jepsen's combined nemesis.

``build_package(NemesisOptions(...))`` gives one ``NemesisPackage``: a single
nemesis handling every requested fault kind, a generator that mixes their
faults (each kind alternates start and stop, ops spaced ``interval`` seconds
apart on average), and one final generator that heals everything before the
drain. Random choices in the generator come from the run's seed (pure, so a
simulation shows exactly the ops a run will issue); symbolic targets are
resolved when the fault happens, by a resolver seeded from the same seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.fault_spans import FAULT_SPANS
from harness.gen.combinators import cycle, interleave, sleep, stagger
from harness.gen.core import Context, Gen, GenLike, Rng, Step, fill_in
from nemesis import grudge
from nemesis.clock import ClockNemesis
from nemesis.compose import ComposedNemesis
from nemesis.nodes import Resolver, cluster_facts
from nemesis.packet import PacketNemesis
from nemesis.partition import PartitionNemesis
from nemesis.process import KillNemesis, PauseNemesis
from nemesis.protocol import Nemesis, NemesisPackage
from nemesis.schedule import ScheduleStep, load_schedule, schedule_gen
from nemesis.targets import TARGETS

FAULTS = ("partition", "kill", "pause", "clock", "packet")
#: Every op name, by fault kind.
FAULT_FS: Mapping[str, frozenset[str]] = {
    "partition": frozenset({"start-partition", "stop-partition"}),
    "kill": frozenset({"kill", "start"}),
    "pause": frozenset({"pause", "resume"}),
    "clock": frozenset({"bump-clock", "strobe-clock", "freeze-clock", "reset-clock"}),
    "packet": frozenset({"start-packet", "stop-packet"}),
}
ALL_FS = frozenset().union(*FAULT_FS.values())
#: The op that ends each kind of fault, in the order the final generator issues them.
HEALS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("pause", {"f": "resume", "value": "all"}),
    ("partition", {"f": "stop-partition", "value": None}),
    ("packet", {"f": "stop-packet", "value": None}),
    ("clock", {"f": "reset-clock", "value": "all"}),
    ("kill", {"f": "start", "value": "all"}),
)
DEFAULT_NODE_TARGETS = ("one", "minority", "majority", "all", "leaders", "controller")
CLOCK_DELTAS_MS = (100, 1_000, 5_000, 30_000, 120_000, 600_000)
PACKET_BEHAVIOURS = ("loss", "rate", "delay", "duplicate")


@dataclass(frozen=True)
class NemesisOptions:
    """What faults a run injects, how often, where, and from which seed."""

    #: Fault kinds, a subset of ``FAULTS``; empty: no nemesis (unless a schedule).
    faults: frozenset[str] = frozenset()
    #: Mean seconds between nemesis ops.
    interval: float = 10.0
    #: Symbolic targets to draw from; partition shapes are the ones that are shapes
    #: (``majorities-ring`` etc. are shapes only). Empty: every target / shape.
    targets: tuple[str, ...] = ()
    #: A timed script (see ``nemesis.schedule``) instead of random faults.
    schedule: Path | None = None
    #: Partitions also cut the clients (the host) off from minority-side nodes.
    partition_clients: bool = False
    seed: int = 0
    #: Topics whose leaders ``leaders`` targets mean (None: every non-internal topic).
    topics: tuple[str, ...] | None = None
    #: Packet behaviours the random generator draws from (delay/duplicate need netem).
    packet: tuple[str, ...] = ("loss", "rate")

    def __post_init__(self) -> None:
        bad = sorted(set(self.faults) - set(FAULTS))
        if bad:
            raise UsageError(f"unknown nemesis faults {bad}", hint=f"use {', '.join(FAULTS)}")
        if self.interval <= 0:
            raise UsageError(f"--nemesis-interval must be > 0, got {self.interval}")
        known = set(TARGETS) | set(grudge.SHAPES)
        bad = sorted(t for t in self.targets if t not in known)
        if bad:
            raise UsageError(f"unknown nemesis targets {bad}",
                             hint=f"use {', '.join(sorted(known))}")
        bad = sorted(set(self.packet) - set(PACKET_BEHAVIOURS))
        if bad:
            raise UsageError(f"unknown packet behaviours {bad}",
                             hint=f"use {', '.join(PACKET_BEHAVIOURS)}")

    @property
    def needs_faketime(self) -> bool:
        """Whether brokers must start under libfaketime (set ``ClusterSpec.faketime``)."""
        if "clock" in self.faults:
            return True
        if self.schedule is None:
            return False
        return any(s.f in FAULT_FS["clock"] for s in load_schedule(self.schedule, ALL_FS))


@dataclass(frozen=True, slots=True)
class Draw(Gen):
    """One op made by ``make(rng)`` from the context's randomness, then done."""

    make: Callable[[Rng], dict[str, Any]]

    def op(self, ctx: Context) -> Step:
        rng, child = ctx.split()
        op = fill_in(self.make(rng), child, rng.fork(7))
        return op, (self if not isinstance(op, dict) else None)


def _choice(rng: Rng, items: Sequence[Any]) -> tuple[Any, Rng]:
    i, nxt = rng.below(len(items))
    return items[i], nxt


def _chosen(targets: Sequence[str], allowed: Sequence[str]) -> tuple[str, ...]:
    picked = tuple(t for t in targets if t in allowed) if targets else tuple(allowed)
    return picked or tuple(allowed)


def partition_start(opts: NemesisOptions) -> Callable[[Rng], dict[str, Any]]:
    shapes = _chosen(opts.targets, grudge.SHAPES)
    return lambda rng: {"f": "start-partition", "value": _choice(rng, shapes)[0]}


def node_start(f: str, opts: NemesisOptions) -> Callable[[Rng], dict[str, Any]]:
    targets = _chosen(opts.targets, DEFAULT_NODE_TARGETS)
    return lambda rng: {"f": f, "value": _choice(rng, targets)[0]}


def clock_start(opts: NemesisOptions) -> Callable[[Rng], dict[str, Any]]:
    targets = _chosen(opts.targets, ("one", "minority", "majority", "all", "leaders",
                                     "controller"))

    def make(rng: Rng) -> dict[str, Any]:
        target, rng = _choice(rng, targets)
        kind, rng = _choice(rng, ("bump", "bump", "strobe", "freeze"))
        delta, rng = _choice(rng, CLOCK_DELTAS_MS)
        sign, rng = _choice(rng, (1, -1))
        if kind == "bump":
            return {"f": "bump-clock", "value": {"target": target, "delta-ms": sign * delta}}
        if kind == "freeze":
            return {"f": "freeze-clock", "value": {"target": target}}
        period, rng = _choice(rng, (50, 200, 1000))
        return {"f": "strobe-clock", "value": {
            "target": target, "delta-ms": sign * delta, "period-ms": period,
            "duration-s": max(1.0, min(opts.interval, 10.0))}}

    return make


def packet_start(opts: NemesisOptions) -> Callable[[Rng], dict[str, Any]]:
    targets = _chosen(opts.targets, ("one", "minority", "majority", "all"))
    settings: dict[str, tuple[str, Sequence[float]]] = {
        "loss": ("loss", (0.05, 0.2, 0.5)),
        "rate": ("rate-kbit", (256, 1024, 8192)),
        "delay": ("delay-ms", (20, 100, 500)),
        "duplicate": ("duplicate", (0.01, 0.1)),
    }

    def make(rng: Rng) -> dict[str, Any]:
        target, rng = _choice(rng, targets)
        behaviour, rng = _choice(rng, opts.packet)
        key, levels = settings[behaviour]
        level, rng = _choice(rng, levels)
        return {"f": "start-packet", "value": {"target": target, key: level}}

    return make


def fault_generator(kind: str, opts: NemesisOptions) -> Gen:
    """One kind's faults, forever: start (drawn at random), then its heal, and again."""
    start = {
        "partition": lambda: partition_start(opts),
        "kill": lambda: node_start("kill", opts),
        "pause": lambda: node_start("pause", opts),
        "clock": lambda: clock_start(opts),
        "packet": lambda: packet_start(opts),
    }[kind]()
    heal = dict(HEALS)[kind]
    return cycle([Draw(start), heal])


def final_generator(kinds: Sequence[str]) -> list[dict[str, Any]]:
    """Heal every kind in ``kinds`` once (resume first, restart killed brokers last)."""
    return [dict(op) for kind, op in HEALS if kind in kinds]


def nemesis_for(kinds: Sequence[str], opts: NemesisOptions) -> ComposedNemesis:
    """One nemesis handling every op of ``kinds``, sharing one seeded resolver.

    Teardown order follows ``HEALS``: resume, heal the network, reset clocks,
    restart the dead.
    """
    resolver = Resolver(opts.seed, lambda cluster: cluster_facts(cluster, opts.topics))
    makers: dict[str, Callable[[], Nemesis]] = {
        "pause": lambda: PauseNemesis(resolver),
        "partition": lambda: PartitionNemesis(resolver, partition_clients=opts.partition_clients),
        "packet": lambda: PacketNemesis(resolver),
        "clock": lambda: ClockNemesis(resolver),
        "kill": lambda: KillNemesis(resolver),
    }
    return ComposedNemesis([makers[k]() for k, _ in HEALS if k in kinds])


def build_package(opts: NemesisOptions) -> NemesisPackage:
    """The nemesis, its generator and its final (healing) generator for ``opts``."""
    kinds = set(opts.faults)
    steps: list[ScheduleStep] = []
    if opts.schedule is not None:
        steps = load_schedule(opts.schedule, ALL_FS)
        kinds |= {k for s in steps for k, fs in FAULT_FS.items() if s.f in fs}
    ordered = [k for k in FAULTS if k in kinds]
    if not ordered:
        return NemesisPackage(nemesis=None)
    generator: GenLike
    if opts.schedule is not None:
        generator = schedule_gen(steps)
    else:
        # a warm-up of one interval lets clients connect and write before the first fault
        faults = interleave([fault_generator(k, opts) for k in ordered])
        generator = [sleep(opts.interval), stagger(opts.interval, faults)]
    spans = {name: span for name, span in FAULT_SPANS.items() if name.split("-")[0] in kinds}
    return NemesisPackage(
        nemesis=nemesis_for(ordered, opts),
        generator=generator,
        final_generator=final_generator(ordered),
        fault_spans=spans,
    )


def kinds_of(fs: Sequence[str]) -> list[str]:
    """The fault kinds a list of op names belongs to."""
    return [k for k in FAULTS if FAULT_FS[k] & set(fs)]


__all__ = ["ALL_FS", "FAULTS", "FAULT_FS", "NemesisOptions", "build_package"]
