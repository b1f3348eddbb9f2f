"""Synthetic histories for the benchmarks and the tests: one simulation, three shapes.

Not part of the runtime (no command but ``insync bench`` uses it), so it lives
beside the benchmarks. The parts: :mod:`.kafka` (an in-memory Kafka),
:mod:`.shape` (what a history looks like), :mod:`.sim` (the virtual-time run
that writes it) and :mod:`.runs` (bare histories and run directories).
"""

from harness.bench._synth.runs import (
    Plan,
    plans,
    simulate,
    write_history,
    write_plan,
    write_run,
    write_runs,
)
from harness.bench._synth.shape import CHECK, INJECTABLE, REPORT, Shape, analyze_shape
from harness.bench._synth.sim import Simulation, Summary, fault_ops

__all__ = [
    "CHECK",
    "INJECTABLE",
    "REPORT",
    "Plan",
    "Shape",
    "Simulation",
    "Summary",
    "analyze_shape",
    "fault_ops",
    "plans",
    "simulate",
    "write_history",
    "write_plan",
    "write_run",
    "write_runs",
]
