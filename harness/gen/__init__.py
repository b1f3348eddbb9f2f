"""Pure, Jepsen-style generators: what the runner does next, tested by simulation.

Modules: ``core`` (the protocol, context, RNG), ``combinators`` (limit,
time_limit, stagger, mix, phases, ...; their classes by job in ``choose``,
``timing``, ``threads`` and ``repetition``), ``plan`` (a run's phases, the one
list the simulator tests and the runner runs), ``simulate`` (virtual-time runs).
A workload's own generators live with the workload (``workloads.queue``).
"""

from harness.base.contract import NEMESIS
from harness.base.history import Op
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
    until_done,
)
from harness.gen.core import PENDING, Context, Gen, GenLike, Pending, Rng, Step, lift
from harness.gen.plan import Ahead, Phase, plan_gen, run_phases
from harness.gen.simulate import SimulationError, fixed_latency, ok_outcome, simulate

__all__ = [
    "NEMESIS",
    "PENDING",
    "Ahead",
    "Context",
    "Gen",
    "GenLike",
    "Op",
    "Pending",
    "Phase",
    "Rng",
    "SimulationError",
    "Step",
    "any_of",
    "clients",
    "cycle",
    "each_thread",
    "fixed_latency",
    "interleave",
    "lift",
    "limit",
    "map_ops",
    "mix",
    "nemesis",
    "ns",
    "ok_outcome",
    "on_threads",
    "once",
    "phases",
    "plan_gen",
    "repeat",
    "run_phases",
    "simulate",
    "sleep",
    "stagger",
    "synchronize",
    "time_limit",
    "until_done",
]
