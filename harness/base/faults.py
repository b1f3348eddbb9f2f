"""The fault kinds insync knows: one registry entry per kind, everything else derived.

Each ``FaultKind`` says which history ops (``f``) start the fault, which one
stops it, what the final generator issues to heal it and when (the heal
order), how reports label its spans, and which module implements it. The
nemesis writes these ops; reports, the Spark analysis and the synthetic runs
read them back. Keeping the table here, on the ground floor, lets a report
read it without importing the fault machinery (iptables, signals,
libfaketime): the nemesis alone loads ``FaultKind.impl`` by name, with
importlib, so this module never imports upward.

Adding a fault kind is one module under ``nemesis/kinds/`` (see
``nemesis.kinds.FaultImpl``) plus one entry in ``FAULT_KINDS``.

The helpers read ``FAULT_KINDS`` each time they are called (a handful of
entries, so that is free), never a copy made at import: a test that swaps
the registry sees every derived table change with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FaultKind:
    """One kind of fault, as ``--nemesis`` names it and as the history records it."""

    #: The name ``--nemesis`` and ``NemesisOptions.faults`` use.
    name: str
    #: The ops that put the fault in force (a clock is bumped, strobed or frozen).
    starts: tuple[str, ...]
    #: The op that ends it, whichever start began it.
    stop: str
    #: The final generator heals with ``{"f": stop, "value": heal_value}``: the stop
    #: op is the heal, so the heal's ``f`` is not written down a second time.
    heal_value: str | None
    #: Place in the heal order, lowest first (also the nemesis's teardown order):
    #: resume paused brokers, heal the network, then packets and disks, reset clocks, restore
    #: changed configs, restart killed brokers last, into a cluster that can hear them
    #: again (and power cut nodes after them); then, with every broker up, move reassigned
    #: replicas back and put leaders back on their preferred replicas.
    heal_order: int
    #: Dotted name of the module implementing it (a ``nemesis.kinds.FaultImpl``).
    impl: str
    #: The report label of each start, in ``starts`` order; empty for a single
    #: start labelled with ``name``.
    labels: tuple[str, ...] = ()
    #: Brokers must start under libfaketime for it (``ClusterSpec.faketime``). Here,
    #: not in the implementation, because the runner needs it before the cluster
    #: (and so any nemesis) exists.
    needs_faketime: bool = False
    #: Brokers' data must sit on the power-loss filesystem (``ClusterSpec.power_loss_fs``),
    #: for the same reason.
    needs_power_loss_fs: bool = False
    #: A start of this kind sets up what the rest of a script relies on (a configuration
    #: change), so a start whose completion records an error means the script did not
    #: run as written: the checker makes the verdict unknown
    #: (``harness.base.waits.not_as_written``).
    premise: bool = False

    def __post_init__(self) -> None:
        if not self.starts:
            raise ValueError(f"fault kind {self.name!r} has no start op")
        if self.stop in self.starts:
            raise ValueError(f"fault kind {self.name!r}: {self.stop!r} both starts and stops it")
        if len(self.labels or (self.name,)) != len(self.starts):
            raise ValueError(f"fault kind {self.name!r}: one label per start op, "
                             f"got {self.labels} for {self.starts}")

    @property
    def fs(self) -> frozenset[str]:
        """Every op of this kind."""
        return frozenset((*self.starts, self.stop))

    @property
    def heal(self) -> dict[str, Any]:
        """The op the final generator issues (a fresh dict: ops get filled in)."""
        return {"f": self.stop, "value": self.heal_value}

    @property
    def spans(self) -> dict[str, tuple[str, str]]:
        """Report label -> (start f, stop f), one per start op."""
        return {label: (start, self.stop)
                for label, start in zip(self.labels or (self.name,), self.starts, strict=True)}


FAULT_KINDS: tuple[FaultKind, ...] = (
    FaultKind("partition", ("start-partition",), "stop-partition", None, 20,
              "nemesis.kinds.partition"),
    FaultKind("kill", ("kill",), "start", "all", 90, "nemesis.kinds.kill"),
    FaultKind("pause", ("pause",), "resume", "all", 10, "nemesis.kinds.pause"),
    FaultKind("clock", ("bump-clock", "strobe-clock", "freeze-clock"), "reset-clock", "all", 40,
              "nemesis.kinds.clock", labels=("clock-bump", "clock-strobe", "clock-freeze"),
              needs_faketime=True),
    FaultKind("packet", ("start-packet",), "stop-packet", None, 30, "nemesis.kinds.packet"),
    FaultKind("power-loss", ("power-loss",), "power-on", "all", 95, "nemesis.kinds.power_loss",
              needs_power_loss_fs=True),
    FaultKind("disk", ("start-disk",), "stop-disk", None, 35, "nemesis.kinds.disk",
              needs_power_loss_fs=True),
    FaultKind("restart", ("restart",), "end-restart", "all", 85, "nemesis.kinds.restart"),
    FaultKind("elect-leader", ("elect-leader",), "elect-preferred", None, 97,
              "nemesis.kinds.elect_leader"),
    FaultKind("reassign", ("reassign",), "reassign-back", None, 96, "nemesis.kinds.reassign"),
    FaultKind("reconfigure", ("reconfigure",), "restore-config", None, 45,
              "nemesis.kinds.reconfigure", premise=True),
    FaultKind("upgrade", ("upgrade",), "end-upgrade", "all", 86, "nemesis.kinds.upgrade"),
    FaultKind("downgrade", ("downgrade",), "end-downgrade", "all", 87,
              "nemesis.kinds.downgrade"),
    FaultKind("burst", ("start-burst",), "stop-burst", "all", 15, "nemesis.kinds.burst"),
    # last in the heal: add-controller runs on the removed node, so it must be up and reachable
    FaultKind("voter", ("remove-controller",), "add-controller", None, 98, "nemesis.kinds.voter"),
)
"""The registry, in ``--nemesis`` order (which is also the order the random generator
takes turns in, so reordering it changes what a seed replays)."""

#: The key of every record a ``burst`` writes (``nemesis.burst``): load beside the
#: workload's records in the same partition, which the workload's readers skip (the
#: workload's own records have no key) and nothing checks.
BURST_RECORD_KEY = b"insync-burst"


def fault_names() -> tuple[str, ...]:
    """Every kind's name, in registry order."""
    return tuple(k.name for k in FAULT_KINDS)


def fault_kind(name: str) -> FaultKind:
    """The kind called ``name``; ``KeyError`` naming the known ones otherwise."""
    for kind in FAULT_KINDS:
        if kind.name == name:
            return kind
    raise KeyError(f"no fault kind {name!r}; kinds are {', '.join(fault_names())}")


def kind_of(f: str) -> FaultKind | None:
    """The kind an op belongs to, or None for an op no kind has."""
    return next((k for k in FAULT_KINDS if f in k.fs), None)


def all_fs() -> frozenset[str]:
    """Every op any kind has: what a nemesis schedule may name."""
    return frozenset(f for k in FAULT_KINDS for f in k.fs)


def in_registry_order(names: Iterable[str]) -> list[FaultKind]:
    """The named kinds (unknown names ignored), in registry order."""
    wanted = set(names)
    return [k for k in FAULT_KINDS if k.name in wanted]


def in_heal_order(kinds: Iterable[FaultKind]) -> list[FaultKind]:
    """``kinds`` in the order they must be healed (and their nemeses torn down)."""
    return sorted(kinds, key=lambda k: k.heal_order)


def fault_spans(names: Iterable[str] | None = None) -> dict[str, tuple[str, str]]:
    """Report label -> (start f, stop f) for the named kinds (default: every kind)."""
    wanted = None if names is None else set(names)
    return {label: span for k in FAULT_KINDS if wanted is None or k.name in wanted
            for label, span in k.spans.items()}


def start_fs() -> tuple[str, ...]:
    """Every op that puts a fault in force, in registry order (for reports and analysis)."""
    return tuple(f for k in FAULT_KINDS for f in k.starts)


def premise_fs() -> frozenset[str]:
    """The starts whose failure means a script did not run as written (``premise``)."""
    return frozenset(f for k in FAULT_KINDS if k.premise for f in k.starts)


def stop_fs() -> tuple[str, ...]:
    """Every op that ends a fault, in registry order."""
    return tuple(k.stop for k in FAULT_KINDS)
