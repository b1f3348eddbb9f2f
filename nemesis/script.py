"""The generator that plays a fault script (``nemesis.schedule``): pure, one step at a time.

A script step may wait for the cluster (``await-state``), so its timing depends
on when earlier steps *completed*, not only on the clock. The generator stays a
pure value all the same (``harness.gen.core``): it never sleeps or looks at the
cluster. It issues a step, then answers pending until the interpreter reports
that step's completion through ``update``; the completion's time is when the
next ``after`` step's clock starts. A wait is just an op the nemesis thread
executes by polling (``nemesis.waits``), so the simulator tests exactly what
the runner runs: a test states the completions (``held`` true or false) and
sees which steps follow, in virtual time.

A completion that says a wait did not hold (``harness.base.waits.not_held``, the
same rule the checker applies to the history) ends the script: nothing after
it is issued. The run's final generator, outside the script, still heals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.base.contract import NEMESIS
from harness.base.history import Op
from harness.base.waits import not_held
from harness.gen.combinators import ns
from harness.gen.core import PENDING, Context, Gen, Pending, Step, fill_in
from nemesis.schedule import ScheduleStep


@dataclass(frozen=True, slots=True)
class Planned:
    """One step in ns: at ``at`` from the start, else ``after`` from the last completion."""

    at: int | None
    after: int
    template: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Script(Gen):
    """Steps in order, each issued when due and once the previous one has completed.

    ``start``: when first asked (the main phase's start); ``done``: when the last
    issued step completed; ``busy``: a step was issued and has not completed;
    ``stopped``: a wait did not hold, so no further step runs.
    """

    steps: tuple[Planned, ...]
    start: int | None = None
    done: int | None = None
    busy: bool = False
    stopped: bool = False

    def op(self, ctx: Context) -> Step:
        if self.stopped or not self.steps:
            return None
        here = self if self.start is not None else replace(self, start=ctx.time)
        if here.busy:
            return PENDING, here
        step = here.steps[0]
        assert here.start is not None
        due = (here.start + step.at if step.at is not None
               else (here.start if here.done is None else here.done) + step.after)
        if ctx.time < due:
            return Pending(due), here
        op = fill_in(step.template, ctx)
        if isinstance(op, Pending):
            return op, here
        return op, replace(here, steps=here.steps[1:], busy=True)

    def update(self, ctx: Context, event: Op) -> Gen:
        if not self.busy or event.get("process") != NEMESIS or event.get("type") == "invoke":
            return self
        return replace(self, busy=False, done=ctx.time, stopped=not_held(event) is not None)


def schedule_gen(steps: Sequence[ScheduleStep]) -> Gen:
    """The generator that plays ``steps`` (run it on the nemesis thread)."""
    return Script(tuple(Planned(None if s.at is None else ns(s.at), ns(s.after),
                                {"f": s.f, "value": s.value}) for s in steps))
