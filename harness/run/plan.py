"""A run's phases, built once from its options and workload, and run one at a time.

:func:`build_plan` makes the one phase list (main → heal → quiet → drain,
``harness.gen.plan.run_phases``) from the registered workload's generators and
the nemesis package: the same list the simulator tests
(``tests/harness/test_run_plan.py`` simulates exactly what this returns).
:func:`drive` runs it a phase at a time, each wrapped in
``harness.gen.plan.Ahead`` so the later phases see every event, as the single
``phases`` generator the simulator runs would: the runner then knows which
phase it is in (for the display and ``phase_times``) and can end the drain as
soon as the workload's drain tracker says everything was read again.

:class:`DrainFeed` keeps that tracker up to date with every completion; from
the drain's start only the drain's own reads count (the drain is a re-read
from the beginning, so it must find everything again, not merely what earlier
polls happened to see). With an :class:`~harness.run.drain_end.EndWatch` (the
workload's ``EndOffsets`` power) the drain also ends once every key with values
still unread has been read to its settled end offset: those values are in no
log, and reading on could not find them. And it ends once it has read nothing
new for :data:`IDLE_S` (``--final-time-limit``, the hard bound, is by default
300 s or half the main phase, whichever is longer): a drain that is still
reading goes on, however many records it has to read again. A flat 60 s stops a
long drain while it reads: a control's 16,733 values of one key, all on both
replicas, would count ``unseen``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.base.history import Op
from harness.gen.plan import DRAIN, Ahead, Phase, run_phases
from harness.run.drain_end import EndWatch
from harness.run.options import RunOptions

if TYPE_CHECKING:
    from harness.run.interpreter import Interpreter
    from harness.run.stats import Stats
    from nemesis.protocol import NemesisPackage
    from workloads.protocol import DrainTracker, Workload


def build_plan(
    opts: RunOptions, workload: Workload[Any], package: NemesisPackage | None = None
) -> tuple[Phase, ...]:
    """The run's phases: the workload's generators at ``--rate`` beside the nemesis package."""
    return run_phases(
        workload.generator(opts),
        rate=opts.rate,
        time_limit_s=opts.time_limit,
        nemesis_gen=package.generator if package else None,
        final_nemesis=package.final_generator if package else None,
        quiet_s=opts.quiet_time,
        drain=workload.final_generator(opts),
        final_time_limit_s=opts.drain_limit,
        script_tail_s=opts.script_tail,
    )


#: The drain ends once it has read nothing new for this long: a minute of reading nothing,
#: long enough for a recovering cluster's partitions to come back under their leaders.
IDLE_S = 60.0


@dataclass
class DrainFeed:
    """The workload's drain tracker, fed every completion (an interpreter observer)."""

    tracker: DrainTracker
    ends: EndWatch | None = None
    started: bool = False
    idle_s: float = IDLE_S
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    last_read: float = 0.0  # when the drain last read a record (its start, at first)
    stopped_idle: bool = False  # whether ``idle`` held when the drain ended

    def observe(self, op: Op) -> None:
        if not self.started and op.get("f") == "poll":
            return  # reads before the drain are dropped by ``start`` anyway: skip folding them
        reads = self.tracker.reads
        self.tracker = self.tracker.observe(op)
        if self.started and self.tracker.reads != reads:
            self.last_read = self.clock()

    def start(self) -> None:
        """The drain begins: from now on only its own reads count."""
        self.tracker = self.tracker.reread()
        self.started = True
        self.last_read = self.clock()
        if self.ends is not None:
            self.ends.start(self.unread_keys)

    def unread_keys(self) -> Collection[str]:
        """The keys the drain has still to read something of (asked from the look thread:
        the tracker it sees is whichever value is current)."""
        return self.tracker.unread_keys()

    def finish(self) -> None:
        """The drain is over: stop looking at end offsets, and remember whether it had gone
        idle (``idle`` itself goes on counting)."""
        self.stopped_idle = self.idle and not self.read_to_end
        if self.ends is not None:
            self.ends.stop()

    @property
    def complete(self) -> bool:
        """Every acknowledged value was read again."""
        return self.started and self.tracker.complete

    @property
    def read_to_end(self) -> bool:
        """Values are still unread, and every key holding some was read to its settled
        end offset (so the drain may stop: reading on could not find them)."""
        return (self.started and self.ends is not None and not self.tracker.complete
                and self.tracker.read_to(self.ends.settled))

    @property
    def idle(self) -> bool:
        """The drain has read nothing new for ``idle_s``, with values still unread."""
        return (self.started and not self.tracker.complete
                and self.clock() - self.last_read >= self.idle_s)

    @property
    def ran_its_course(self) -> bool:
        """Whether the drain ended because it had nothing more to find (no drain at all,
        every value read again, every key read to its end, or nothing new read for
        ``idle_s``), not because ``--final-time-limit`` stopped it while it was still
        reading. Only such a drain proves ``unseen`` (``harness.base.drain``): one stopped
        mid-read, as a long run's drain on a slow machine is, leaves values unread that
        reading on would have found."""
        return not self.started or self.complete or self.read_to_end or self.stopped_idle

    @property
    def done(self) -> bool:
        return self.complete or self.read_to_end or self.idle

    def unread(self) -> int:
        return self.tracker.unread_count()

    def shortfall(self) -> str | None:
        """The line that says a drain ended with acknowledged values unread, and why; None
        when it read them all (or never ran)."""
        if not self.started or self.complete:
            return None
        why = (": every key was read to its end offset" if self.read_to_end
               else f": it read nothing new for {self.idle_s:g} s" if self.stopped_idle else
               ": --final-time-limit stopped it first, so unseen is not judged "
               "(a longer --final-time-limit lets it finish)")
        return f"the drain ended with {self.unread()} acknowledged value(s) unread{why}"


def drive(interp: Interpreter, plan: Sequence[Phase], *, stats: Stats, feed: DrainFeed) -> None:
    """Run ``plan``'s phases in turn on ``interp``, the later ones listening to each."""

    def drained() -> bool:
        return feed.done

    step = Ahead.first(plan)
    for phase in plan:
        stats.enter(phase.name, phase.limit_s)
        if phase.name == DRAIN:
            feed.start()
        try:
            ended = interp.run(step, stop=drained if phase.name == DRAIN else None)
        finally:
            if phase.name == DRAIN:
                feed.finish()
        if not isinstance(ended, Ahead):  # run() returns the state it ends in: an Ahead
            raise TypeError(f"the interpreter ended {phase.name!r} in {ended!r}, not an Ahead")
        step = ended.next()
    stats.enter("done")
