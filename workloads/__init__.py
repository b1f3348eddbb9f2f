"""insync's workloads, and the registry the runner finds them in by ``--workload``.

A workload is one :class:`~workloads.protocol.Workload` record (client,
generators, drain tracker, checker, options, test.json block); the runner
uses nothing else, and never names one. Shared by every workload:
``client`` (what a worker needs from a client), ``outcomes`` (whether a Kafka
error means ``fail`` or ``info``).

Adding a workload: its folder (``workloads/<name>/``, like ``workloads/queue``),
its record in :data:`WORKLOADS`, and its settings among
:class:`WorkloadSettings`' bases (so the run's options hold its fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.base.errors import UsageError
from harness.base.values import HELP_HINT, Spec, shown
from workloads.eos import EOS, EosSettings
from workloads.protocol import Workload
from workloads.queue import QUEUE, QueueSettings

#: Every workload ``insync run --workload`` knows, by name.
WORKLOADS: dict[str, Workload[Any]] = {QUEUE.name: QUEUE, EOS.name: EOS}
DEFAULT_WORKLOAD = QUEUE.name


@dataclass(frozen=True)
class WorkloadSettings(QueueSettings, EosSettings):
    """Every registered workload's option values (``harness.run.options.RunOptions``
    inherits them, so each is declared once, in its workload)."""


def workload_rows() -> tuple[Spec, ...]:
    """Every registered workload's rows of the run's ``OPTIONS`` table, in registry order."""
    return tuple(row for w in WORKLOADS.values() for row in w.options)


def workload_name(x: Any) -> str:
    """A ``--workload`` value: the name of a registered workload (read when called)."""
    if isinstance(x, str) and x.strip().lower() in WORKLOADS:
        return x.strip().lower()
    raise ValueError(f"must be one of {', '.join(WORKLOADS)}, got {shown(x)}")


def check_only_its_options(settings: WorkloadSettings, name: str) -> None:
    """Refuse an option of another workload set away from its default (one ``UsageError``).

    Every workload's options are fields of the run's options, so ``--txn`` with
    another workload would otherwise be silently ignored.
    """
    chosen = workload_of(name)
    own = {spec.name for spec in chosen.options}
    for other in WORKLOADS.values():
        if other is chosen:
            continue
        defaults = other.settings()
        for spec in other.options:
            if spec.name not in own and getattr(settings, spec.name) != getattr(
                defaults, spec.name
            ):
                raise UsageError(
                    f"{spec.flag} is an option of the {other.name} workload, "
                    f"not of --workload {name}",
                    hint=f"drop {spec.flag} or pass --workload {other.name}",
                )


def workload_of(name: str) -> Workload[Any]:
    """The registered workload called ``name``, or one ``UsageError`` line."""
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UsageError(
            f"--workload must be one of {', '.join(WORKLOADS)}, got {shown(name)}",
            hint=HELP_HINT,
        ) from None


__all__ = [
    "DEFAULT_WORKLOAD",
    "WORKLOADS",
    "WorkloadSettings",
    "check_only_its_options",
    "workload_name",
    "workload_of",
    "workload_rows",
]
