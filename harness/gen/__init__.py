"""Pure, Jepsen-style generators: what the runner does next, tested by simulation.

Modules: ``core`` (the protocol, context, RNG), ``combinators`` (limit,
time_limit, stagger, mix, phases, ...; their classes by job in ``choose``,
``timing``, ``threads`` and ``repetition``), ``queue`` (the queue workload and its
final drain), ``plan`` (a run's phases), ``simulate`` (virtual-time runs).
"""

from harness.base.history import NEMESIS, Op
from harness.gen.combinators import (
    any_of,
    clients,
    cycle,
    each_thread,
    interleave,
    limit,
    map_ops,
    mix,
    nemesis,
    ns,
    on_threads,
    once,
    phases,
    repeat,
    sleep,
    stagger,
    synchronize,
    time_limit,
)
from harness.gen.core import PENDING, Context, Gen, GenLike, Pending, Rng, Step, lift
from harness.gen.plan import queue_plan, run_plan
from harness.gen.queue import (
    Drain,
    DrainTracker,
    QueueGen,
    QueueOptions,
    drain_complete,
    key_name,
    parse_key,
    unread,
)
from harness.gen.simulate import SimulationError, fixed_latency, ok_outcome, simulate

__all__ = [
    "NEMESIS",
    "PENDING",
    "Context",
    "Drain",
    "DrainTracker",
    "Gen",
    "GenLike",
    "Op",
    "Pending",
    "QueueGen",
    "QueueOptions",
    "Rng",
    "SimulationError",
    "Step",
    "any_of",
    "clients",
    "cycle",
    "drain_complete",
    "each_thread",
    "fixed_latency",
    "interleave",
    "key_name",
    "lift",
    "limit",
    "map_ops",
    "mix",
    "nemesis",
    "ns",
    "ok_outcome",
    "on_threads",
    "once",
    "parse_key",
    "phases",
    "queue_plan",
    "repeat",
    "run_plan",
    "simulate",
    "sleep",
    "stagger",
    "synchronize",
    "time_limit",
    "unread",
]
