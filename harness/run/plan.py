"""The generators of a run's phases, and when the drain is done.

The phases are the ones ``harness.gen.plan.queue_plan`` describes (main → heal →
quiet → drain) but run one at a time by the runner, so it knows which phase it
is in (for the display and ``phase_times``) and can end the drain as soon as
every acknowledged value has been read again.

The drain needs what the earlier phases did (every key, every process that ran
an op): :class:`DrainFeed` passes every completion to a :class:`Drain`, as
``phases`` would. It ends when :class:`DrainTracker` has seen, *in the drain's
own polls*, every value an ``ok`` op sent during the whole run: the drain is a
re-read from the beginning, so it must find everything again, not merely what
earlier polls happened to see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.base.history import NEMESIS, Op
from harness.gen import (
    Context,
    Drain,
    DrainTracker,
    Gen,
    GenLike,
    QueueGen,
    QueueOptions,
    any_of,
    clients,
    nemesis,
    sleep,
    stagger,
    time_limit,
)
from harness.run.options import RunOptions

if TYPE_CHECKING:
    from harness.run.interpreter import Interpreter
    from harness.run.stats import Stats
    from nemesis.protocol import NemesisPackage

PARTITIONS_PER_TOPIC = 8
KEY_COUNT = 4


def queue_options(opts: RunOptions) -> QueueOptions:
    """The workload's shape: op weights follow ``--txn`` and ``--sub-via``."""
    weights = {
        "send": 4.0,
        "poll": 4.0,
        "txn": 1.0 if opts.txn else 0.0,
        "assign": 0.1 if opts.sub_via == "assign" else 0.0,
        "subscribe": 0.1 if opts.sub_via == "subscribe" else 0.0,
        "crash": 0.02,
    }
    return QueueOptions(
        key_count=KEY_COUNT,
        max_writes_per_key=opts.max_writes_per_key,
        partitions_per_topic=PARTITIONS_PER_TOPIC,
        weights=weights,
        consume="subscribe" if opts.sub_via == "subscribe" else "assign",
    )


def main_phase(opts: RunOptions, nemesis_gen: GenLike = None) -> Gen:
    """Client ops at ``--rate`` (0: as fast as they go) beside the nemesis, for ``--time-limit``."""
    workload: Gen = QueueGen.start(queue_options(opts))
    client_gen = workload if not opts.rate else stagger(1.0 / opts.rate, workload)
    return time_limit(opts.time_limit, any_of(clients(client_gen), nemesis(nemesis_gen)))


_NO_CONTEXT = Context(0, (NEMESIS,), frozenset(), {NEMESIS: NEMESIS})


@dataclass
class DrainFeed:
    """Keeps a ``Drain`` and the acknowledged values up to date with every completion."""

    drain: Gen = field(default_factory=Drain)
    acked: DrainTracker = field(default_factory=DrainTracker)
    reread: DrainTracker | None = None  # from the drain's start: its own reads

    def observe(self, op: Op) -> None:
        if self.reread is None:
            self.drain = self.drain.update(_NO_CONTEXT, op)
            self.acked = self.acked.observe(op)
        else:
            self.reread = self.reread.observe(op)

    def start(self, final_time_limit_s: float) -> Gen:
        """The drain phase's generator; from now on only drain reads count."""
        acked = self.acked.acked
        self.reread = DrainTracker(
            acked=acked, read={}, missing={k: v for k, v in acked.items() if v}
        )
        return clients(time_limit(final_time_limit_s, self.drain))

    @property
    def complete(self) -> bool:
        return self.reread is not None and self.reread.complete

    def unread(self) -> int:
        tracker = self.reread if self.reread is not None else self.acked
        return sum(len(v) for v in tracker.missing.values())


def drive(
    interp: Interpreter,
    opts: RunOptions,
    *,
    stats: Stats,
    feed: DrainFeed,
    package: NemesisPackage | None = None,
) -> None:
    """Run the phases in turn on ``interp``: main, heal, quiet, then the drain."""
    stats.enter("main", opts.time_limit)
    interp.run(main_phase(opts, package.generator if package else None))
    if package is not None and package.final_generator is not None:
        stats.enter("heal")
        interp.run(nemesis(package.final_generator))
    if opts.quiet_time > 0:
        stats.enter("quiet", opts.quiet_time)
        interp.run(sleep(opts.quiet_time))
    stats.enter("drain", opts.final_time_limit)
    interp.run(feed.start(opts.final_time_limit), stop=lambda: feed.complete)
    stats.enter("done")
