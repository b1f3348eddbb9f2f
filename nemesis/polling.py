"""The nemesis's one polling primitive: look at the cluster until a condition holds or time is up.

Both waits the nemesis runs, ``await-recovery`` (``nemesis.recovery``) and a
script's ``await-state`` (``nemesis.waits``), are the same loop: look, stop
when the look is good or the timeout has passed, else sleep one poll interval
(never past the timeout) and look again. Kept here once, as kafkatest keeps
``wait_until``, so the two waits time out, count polls and round seconds alike.

``clock`` and ``sleep`` are injectable so tests run in no time (``FakeTime``).
A wait in the main phase may be bounded by the seconds the phase has left
(``{"within-s": s}`` in the op's value, stamped by ``recovery.WithinPhase``):
:func:`bounded` applies that bound to a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Seconds between two looks at the metadata while waiting.
POLL_S = 1.0


@dataclass(frozen=True)
class Polled(Generic[T]):
    """What a wait saw: its first and last looks, whether the last was good, and the cost."""

    first: T
    last: T
    held: bool
    seconds: float
    polls: int


@dataclass(frozen=True)
class Poller:
    """Polls every ``poll_s`` seconds of ``clock``, sleeping with ``sleep``."""

    poll_s: float = POLL_S
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep

    def until(self, look: Callable[[], T], good: Callable[[T], bool], timeout_s: float
              ) -> Polled[T]:
        """Call ``look`` until ``good`` of it, or ``timeout_s`` has passed (one look at least)."""
        start = self.clock()
        first: list[T] = []
        polls = 0
        while True:
            seen = look()
            polls += 1
            first = first or [seen]
            waited = self.clock() - start
            held = good(seen)
            if held or waited >= timeout_s:
                return Polled(first[0], seen, held, round(waited, 2), polls)
            self.sleep(max(0.0, min(self.poll_s, timeout_s - waited)))


def budget(value: Any) -> float | None:
    """The seconds a wait may take before the main phase ends (``{"within-s": s}``), if bounded."""
    if isinstance(value, Mapping) and isinstance(value.get("within-s"), int | float):
        return float(value["within-s"])
    return None


def bounded(timeout_s: float, value: Any) -> tuple[float, bool]:
    """(the timeout to use, whether the phase's end cut it below ``timeout_s``)."""
    within = budget(value)
    if within is None:
        return timeout_s, False
    cut = max(0.0, min(timeout_s, within))
    return cut, cut < timeout_s
