"""The public surface of harness.gen is deliberate: adding or removing a name is a decision."""

from __future__ import annotations

import harness.gen


def test_public_names_are_pinned() -> None:
    assert sorted(harness.gen.__all__) == sorted([
        "NEMESIS", "PENDING", "Context", "Drain", "DrainTracker", "Gen", "GenLike", "Op",
        "Pending", "QueueGen", "QueueOptions", "Rng", "SimulationError", "Step", "any_of",
        "clients", "cycle", "drain_complete", "each_thread", "fixed_latency", "interleave",
        "key_name", "lift", "limit", "map_ops", "mix", "nemesis", "ns", "ok_outcome",
        "on_threads", "once",
        "parse_key", "phases", "queue_plan", "repeat", "run_plan", "simulate", "sleep",
        "stagger", "synchronize", "time_limit", "unread",
    ])
    for name in harness.gen.__all__:
        assert hasattr(harness.gen, name), name
