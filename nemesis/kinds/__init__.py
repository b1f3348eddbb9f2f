"""One module per fault kind: the few things the nemesis needs from it, behind ``FaultImpl``.

``harness.base.faults.FAULT_KINDS`` names each kind's module (``FaultKind.impl``);
``load`` imports it by that name, so nothing here (or in ``nemesis.package``)
lists the kinds: adding one is a module here plus a registry entry. Kind
modules are thin adapters over the fault machinery (``nemesis.partition``,
``process``, ``clock``, ``packet``), which stays where it is.

A kind may also check the values of its ops before a run (``validate(f, value,
nodes)``: the problem in one line, or None), so that a fault script or scenario
naming no node, or a packet loss of 2.0, is refused before anything is created;
``nemesis.schedule.value_problem`` asks the kind an op belongs to.

Also here: the small drawing helpers the kinds' start-op drawers share, and the
small value checks their ``validate`` functions share.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from harness.base.values import Range, shown
from nemesis.targets import target_problem

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from harness.base.faults import FaultKind
    from harness.gen.core import Rng
    from nemesis.nodes import Resolver
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

T = TypeVar("T")


@runtime_checkable
class FaultImpl(Protocol):
    """What one fault kind's module gives the nemesis (module-level functions)."""

    def start_op(self, opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
        """A random op that starts this fault (``{"f", "value"}``), drawn from ``rng`` only."""
        ...

    def make_nemesis(self, resolver: Resolver, opts: NemesisOptions) -> Nemesis:
        """The nemesis that applies and heals this kind's ops (``fs()`` = the kind's ``fs``)."""
        ...

    def residue(self, node: KafkaNode) -> list[str]:
        """What this kind left on ``node`` (one line per finding); empty when healed."""
        ...


def load(kind: FaultKind) -> FaultImpl:
    """The module implementing ``kind``; ``TypeError`` if it lacks part of ``FaultImpl``."""
    module = importlib.import_module(kind.impl)
    if not isinstance(module, FaultImpl):
        members = [m for m, v in vars(FaultImpl).items() if callable(v) and m[0] != "_"]
        missing = [m for m in members if not hasattr(module, m)]
        raise TypeError(f"{kind.impl}, the module of fault kind {kind.name!r}, lacks {missing}")
    return module


def choice(rng: Rng, items: Sequence[T]) -> tuple[T, Rng]:
    """One of ``items``, uniformly, and the next state."""
    i, nxt = rng.below(len(items))
    return items[i], nxt


def chosen(targets: Sequence[str], understood: Callable[[str], bool], defaults: Sequence[str]
           ) -> tuple[str, ...]:
    """The ``--nemesis-targets`` this kind understands, in their order, or its defaults
    if none are given (or none fit)."""
    return tuple(t for t in targets if understood(t)) or tuple(defaults)


def target_of(value: Any, nodes: int | None, *, key: str = "target") -> str | None:
    """The problem with the target a value names (the value itself, or its ``key``
    field when it is a table); None when it names none (the kind's default)."""
    target = value.get(key) if isinstance(value, Mapping) else value
    return None if target is None else target_problem(target, nodes)


def fields_of(value: Any, ranges: Mapping[str, Range], *, whole: Sequence[str] = ()
              ) -> str | None:
    """The first field of a table ``value`` outside its range (the absent ones take
    the kind's default); None if all fit. ``whole`` fields must be integers."""
    if not isinstance(value, Mapping):
        return f"expected a table of fields, got {shown(value)}"
    for name, allowed in ranges.items():
        if name not in value:
            continue
        x = value[name]
        if x not in allowed or (name in whole and not isinstance(x, int)):
            return (f"{name!r} must be {allowed.describe(name in whole)}, "
                    f"got {shown(x)}")
    return None
