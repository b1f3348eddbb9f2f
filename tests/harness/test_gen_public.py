"""The public surface of harness.gen is deliberate: adding or removing a name is a decision."""

from __future__ import annotations

import harness.gen


def test_public_names_are_pinned() -> None:
    assert sorted(harness.gen.__all__) == sorted([
        "NEMESIS", "PENDING", "Ahead", "Context", "Gen", "GenLike", "Op", "Pending", "Phase",
        "Rng", "SimulationError", "Step", "any_of", "clients", "cycle", "each_thread",
        "fixed_latency", "interleave", "lift", "limit", "map_ops", "mix", "nemesis", "ns",
        "ok_outcome", "on_threads", "once", "phases", "plan_gen", "repeat", "run_phases",
        "simulate", "sleep", "stagger", "synchronize", "time_limit", "until_done",
    ])
    for name in harness.gen.__all__:
        assert hasattr(harness.gen, name), name
