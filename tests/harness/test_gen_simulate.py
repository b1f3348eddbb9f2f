"""The simulator plays the interpreter faithfully: determinism, sequential threads, retirement."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.gen import (
    NEMESIS,
    Context,
    Gen,
    Op,
    SimulationError,
    Step,
    clients,
    limit,
    mix,
    repeat,
    simulate,
    stagger,
)

MS = 1_000_000


def random_latency(op: Op, rng: random.Random) -> int:
    return rng.randint(1, 100) * MS


def flaky(op: Op, rng: random.Random) -> Mapping[str, Any]:
    return {"type": rng.choice(["ok", "ok", "fail", "info"]), "error": "flaky"}


def workload() -> Gen:
    return mix([repeat({"f": "send", "value": 1}), repeat({"f": "poll", "value": None})])


@given(concurrency=st.integers(1, 10), seed=st.integers(0, 2**32))
@settings(max_examples=30, deadline=None)
def test_same_seed_same_history(concurrency: int, seed: int) -> None:
    def run() -> list[Op]:
        return simulate(limit(100, stagger(0.01, workload())), concurrency=concurrency,
                        seed=seed, latency_fn=random_latency, outcome_fn=flaky)

    assert run() == run()


def test_different_seeds_differ() -> None:
    runs = {str(simulate(limit(50, workload()), concurrency=3, seed=s,
                         latency_fn=random_latency)) for s in range(5)}
    assert len(runs) == 5


@given(concurrency=st.integers(1, 8), seed=st.integers(0, 2**32))
@settings(max_examples=30, deadline=None)
def test_threads_run_one_op_at_a_time_and_info_retires_the_process(
    concurrency: int, seed: int,
) -> None:
    history = simulate(limit(200, clients(workload())), concurrency=concurrency, seed=seed,
                       latency_fn=random_latency, outcome_fn=flaky)
    running: dict[int, Op] = {}
    retired: set[int] = set()
    current = {t: t for t in range(concurrency)}
    for op in history:
        p = op["process"]
        thread = p % concurrency
        assert p not in retired, f"process {p} reused after info"
        assert p == current[thread]
        if op["type"] == "invoke":
            assert thread not in running
            running[thread] = op
        else:
            assert running.pop(thread)["f"] == op["f"]
            assert op["error"] == "flaky"
            if op["type"] == "info":
                retired.add(p)
                current[thread] = p + concurrency
    assert retired, "some op ended info"
    times = [op["time"] for op in history]
    assert times == sorted(times)


def test_the_nemesis_is_never_retired() -> None:
    def always_info(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "info"}

    history = simulate(limit(10, repeat({"f": "kill", "value": None, "process": NEMESIS})),
                       concurrency=1, outcome_fn=always_info)
    assert {op["process"] for op in history} == {NEMESIS}
    assert len(history) == 20


@dataclass(frozen=True)
class AlwaysProcessZero(Gen):
    """A broken generator: it ignores which threads are free."""

    def op(self, ctx: Context) -> Step:
        return {"f": "x", "value": None, "time": ctx.time, "type": "invoke", "process": 0}, self


def test_an_op_for_a_busy_process_is_caught() -> None:
    with pytest.raises(SimulationError, match="not free"):
        simulate(AlwaysProcessZero(), concurrency=2)


def test_a_generator_that_never_ends_is_caught() -> None:
    with pytest.raises(SimulationError, match="no end"):
        simulate(repeat({"f": "x"}), concurrency=2, max_ops=1000)


def test_outcome_values_and_errors_reach_the_history() -> None:
    def handler(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "ok", "value": [["send", "t0-0", [0, op["value"][0][2]]]]}

    history = simulate(clients({"f": "send", "value": [["send", "t0-0", 5]]}), concurrency=1,
                       outcome_fn=handler)
    assert history[1] == {"index": 1, "time": MS, "process": 0, "type": "ok", "f": "send",
                          "value": [["send", "t0-0", [0, 5]]]}


def test_outcome_fields_reach_the_completion_line() -> None:
    def handler(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "ok", "fields": {"committed": {"t0-0": None}}}

    history = simulate(clients({"f": "assign", "value": ["t0-0"], "seek": "committed"}),
                       concurrency=1, outcome_fn=handler)
    assert history[1] == {"index": 1, "time": MS, "process": 0, "type": "ok", "f": "assign",
                          "value": ["t0-0"], "committed": {"t0-0": None}}
