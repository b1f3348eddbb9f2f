"""The script generator in virtual time: ``after`` counts from completions, a wait that did
not hold ends the script, and the final generator still heals. No threads, no sleeps: the
simulator completes each wait as a test says (``held`` true or false)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.base.history import Op
from harness.base.waits import AWAIT_STATE
from harness.gen import nemesis, phases, simulate, time_limit
from nemesis import NemesisOptions, build_package
from nemesis.schedule import ScheduleStep
from nemesis.script import schedule_gen

S = 1_000_000_000


def wait_step(step: int, at: float | None = None, after: float = 0.0) -> ScheduleStep:
    return ScheduleStep(at, AWAIT_STATE, {"until": "isr-is-leader", "key": "t0-0",
                                          "timeout-s": 30, "step": step}, after)


def holding(held: Mapping[int, bool]) -> Any:
    """An outcome function: each wait holds or not, by its step number (default: holds)."""
    def outcome(op: Op, _rng: random.Random) -> Mapping[str, Any]:
        if op["f"] != AWAIT_STATE:
            return {"type": "info"}
        return {"type": "info", "value": {**op["value"], "held": held.get(op["value"]["step"],
                                                                          True)}}
    return outcome


def invokes(history: list[Op]) -> list[tuple[int, str]]:
    return [(op["time"], op["f"]) for op in history if op["type"] == "invoke"]


def test_after_counts_from_the_previous_steps_completion() -> None:
    steps = [ScheduleStep(None, "start-partition", {"isolate": "followers:t0-0"}),
             wait_step(2),
             ScheduleStep(None, "kill", "leader:t0-0", after=2.0),
             ScheduleStep(None, "start", "all", after=0.5)]
    # the wait takes 7 s to hold, every other op 1 s
    history = simulate(nemesis(schedule_gen(steps)), concurrency=1, outcome_fn=holding({}),
                       latency_fn=lambda op, _r: 7 * S if op["f"] == AWAIT_STATE else S)
    assert invokes(history) == [(0, "start-partition"), (1 * S, AWAIT_STATE),
                                (10 * S, "kill"), (11 * S + S // 2, "start")]


def test_a_wait_that_did_not_hold_ends_the_script() -> None:
    steps = [ScheduleStep(None, "kill", "n2"), wait_step(2),
             ScheduleStep(None, "kill", "leader:t0-0")]
    history = simulate(nemesis(schedule_gen(steps)), concurrency=1,
                       outcome_fn=holding({2: False}))
    assert [f for _, f in invokes(history)] == ["kill", AWAIT_STATE]


def test_an_at_step_after_a_wait_waits_for_its_time_or_runs_at_once_if_it_passed() -> None:
    steps = [wait_step(1), ScheduleStep(5.0, "kill", "n1"), wait_step(3),
             ScheduleStep(2.0, "start", "all")]
    history = simulate(nemesis(schedule_gen(steps)), concurrency=1, outcome_fn=holding({}),
                       latency_fn=lambda op, _r: 3 * S if op["f"] == AWAIT_STATE else S)
    assert invokes(history) == [(0, AWAIT_STATE), (5 * S, "kill"), (6 * S, AWAIT_STATE),
                                (9 * S, "start")]


def test_the_package_heals_after_a_failed_wait_and_bounds_waits_by_the_phase(
        tmp_path: Path) -> None:
    path = tmp_path / "isr.toml"
    path.write_text('[[step]]\nf = "start-partition"\nvalue = { isolate = "followers:t0-0" }\n\n'
                    '[[step]]\nafter = 1\nwait = "isr-is-leader"\nkey = "t0-0"\ntimeout = 30\n\n'
                    '[[step]]\nf = "kill"\nvalue = "leader:t0-0"\n')
    pkg = build_package(NemesisOptions(schedule=path, time_limit=20))
    gen = phases(time_limit(20, nemesis(pkg.generator)), nemesis(pkg.final_generator))
    history = simulate(gen, concurrency=1, outcome_fn=holding({2: False}))
    assert [f for _, f in invokes(history)] == [
        "start-partition", AWAIT_STATE, "stop-partition", "start", "await-recovery"]
    wait = next(op for op in history if op["f"] == AWAIT_STATE and op["type"] == "invoke")
    assert wait["value"] == {"until": "isr-is-leader", "key": "t0-0", "timeout-s": 30,
                             "step": 2, "within-s": 18.999}, "the phase has 19 s left"


step_spec = st.tuples(
    st.booleans(),                                    # a wait (else a kill)
    st.booleans(),                                    # the wait holds
    st.one_of(st.none(), st.integers(0, 20)),         # at (s), or None: after
    st.integers(0, 5),                                # after (s)
    st.integers(1, 9),                                # how long it takes (s)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(step_spec, min_size=1, max_size=8))
def test_each_step_runs_when_due_and_the_script_stops_at_the_first_wait_that_failed(
        spec: list[tuple[bool, bool, int | None, int, int]]) -> None:
    steps = [wait_step(i + 1, at, after) if waits else
             ScheduleStep(None if at is None else float(at), "kill", f"n{i}", float(after))
             for i, (waits, _, at, after, _) in enumerate(spec)]
    held = {i + 1: ok for i, (waits, ok, *_) in enumerate(spec) if waits}
    took = {i + 1: dt for i, (*_, dt) in enumerate(spec)}

    def latency(op: Op, _r: random.Random) -> int:
        step = op["value"]["step"] if op["f"] == AWAIT_STATE else int(op["value"][1:]) + 1
        return took[step] * S

    history = simulate(nemesis(schedule_gen(steps)), concurrency=1, outcome_fn=holding(held),
                       latency_fn=latency)
    failed = next((i for i, (waits, ok, *_) in enumerate(spec) if waits and not ok), None)
    ran = spec[:len(spec) if failed is None else failed + 1]
    expected: list[int] = []
    done = 0
    for at, after, dt in ((at, after, dt) for _, _, at, after, dt in ran):
        start = max(at * S, done) if at is not None else done + after * S
        expected.append(start)
        done = start + dt * S
    assert [t for t, _ in invokes(history)] == expected
