"""Each combinator does what its name says, checked on simulated histories."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.gen import (
    NEMESIS,
    PENDING,
    Context,
    Gen,
    Op,
    Pending,
    SimulationError,
    Step,
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
    phases,
    repeat,
    simulate,
    sleep,
    stagger,
    time_limit,
    until_done,
)
from harness.gen.combinators import Limit
from harness.gen.core import fill_in
from harness.gen.plan import Ahead

MS = 1_000_000
POLL = {"f": "poll", "value": [["poll"]]}


def invokes(history: list[Op], f: str | None = None) -> list[Op]:
    return [op for op in history if op["type"] == "invoke" and (f is None or op["f"] == f)]


def jitter(op: Op, rng: random.Random) -> int:
    return rng.randint(1, 20) * MS


@given(n=st.integers(0, 200), concurrency=st.integers(1, 8), seed=st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_limit_is_exact(n: int, concurrency: int, seed: int) -> None:
    history = simulate(limit(n, repeat(POLL)), concurrency=concurrency, seed=seed,
                       latency_fn=jitter)
    assert len(invokes(history)) == n
    assert len(history) == 2 * n  # and every op completed


@given(seconds=st.floats(0.05, 3.0), rate=st.floats(5, 500), seed=st.integers(0, 2**32))
@settings(max_examples=30, deadline=None)
def test_time_limit_is_exact(seconds: float, rate: float, seed: int) -> None:
    history = simulate(time_limit(seconds, stagger(1 / rate, repeat(POLL))), concurrency=4,
                       seed=seed)
    times = [op["time"] for op in invokes(history)]
    assert times and max(times) < ns(seconds)
    # Nothing stopped it early: the last op is within a few intervals of the cutoff.
    assert ns(seconds) - max(times) <= 10 * ns(1 / rate) + MS


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_time_limit_waits_for_its_cutoff_when_the_soonest_op_is_past_it(seed: int) -> None:
    """One client thread, busy 5 s per op, and faults 0-20 s apart: whenever the thread is
    busy, the soonest op is the next fault, often due after the cutoff. The clients still
    have ops before it, so the limit ends at the cutoff (polls at 0, 5, ..., 55 s)."""
    faults = nemesis(stagger(10, cycle([{"f": "kill", "value": None},
                                        {"f": "start", "value": None}])))
    gen = time_limit(60, any_of(clients(repeat(POLL)), faults))
    history = simulate(gen, concurrency=1, seed=seed,
                       latency_fn=lambda op, r: ns(5) if op["process"] != NEMESIS else MS)
    polls = [op["time"] for op in invokes(history, "poll")]
    assert polls == [ns(s) for s in range(0, 60, 5)]


class EndsOnce(Gen):
    """Offers a poll and ends; once that poll completes it would offer one more."""

    def __init__(self, polls: int = 0, completed: bool = False) -> None:
        self.polls, self.completed = polls, completed

    def op(self, ctx: Context) -> Step:
        if self.polls == 2 or (self.polls == 1 and not self.completed):
            return None
        if not ctx.free_threads():
            return PENDING, self
        return fill_in(dict(POLL), ctx), EndsOnce(self.polls + 1, self.completed)

    def update(self, ctx: Context, event: Op) -> Gen:
        return self if event["type"] == "invoke" else EndsOnce(self.polls, True)


def test_the_simulator_asks_no_more_once_the_generator_has_ended() -> None:
    """As the runner's interpreter: a ``None`` is the end, with ops still in flight."""
    history = simulate(EndsOnce(), concurrency=2)
    assert len(invokes(history)) == 1 and len(history) == 2


@pytest.mark.parametrize("rate", [10.0, 100.0, 1000.0])
def test_stagger_honours_the_rate_on_average(rate: float) -> None:
    seconds = max(20.0, 2000 / rate)  # >= 2000 ops expected: ~1.3% standard deviation
    history = simulate(time_limit(seconds, clients(stagger(1 / rate, repeat(POLL)))),
                       concurrency=20, seed=int(rate), latency_fn=jitter)
    achieved = len(invokes(history)) / seconds
    assert abs(achieved - rate) / rate < 0.05, achieved


def test_stagger_is_limited_by_busy_threads() -> None:
    # One thread, 100 ms per op: 1000/s asked, 10/s possible.
    history = simulate(time_limit(5, clients(stagger(0.001, repeat(POLL)))), concurrency=1,
                       latency_fn=lambda op, r: 100 * MS)
    assert 48 <= len(invokes(history)) <= 50


@pytest.mark.parametrize("seed", [1, 2, 3], ids=["seed1", "seed2", "seed3"])
def test_stagger_with_catch_up_reaches_the_rate_near_capacity(seed: int) -> None:
    """Two threads of 15-25 ms ops can do ~100 ops/s; 80/s asked. Without catch-up every
    op that found both threads busy pushes the rest back; with it, they make up for it."""
    def run(catch_up: float) -> float:
        gen = clients(stagger(1 / 80, repeat(POLL), catch_up=catch_up))
        history = simulate(time_limit(60, gen), concurrency=2, seed=seed,
                           latency_fn=lambda op, r: r.randint(15, 25) * MS)
        return len(invokes(history)) / 60

    plain, caught_up = run(0.0), run(0.1)
    assert plain < 74 and 77 < caught_up < 83, (plain, caught_up)


def test_stagger_catches_up_on_a_stall_by_at_most_its_bound() -> None:
    """The only thread is stuck for 1 s: at 1000 ops/s asked, 0.05 s of catch-up lets
    about 50 ops through at once afterwards, not the 1000 the stall held back."""
    def latency(op: Op, r: random.Random) -> int:
        return ns(1) if op["value"] == "stall" else 0

    gen = clients(stagger(0.001, [{"f": "poll", "value": "stall"}, repeat(POLL)],
                          catch_up=0.05))
    history = simulate(time_limit(1.2, gen), concurrency=1, seed=4, latency_fn=latency)
    burst = [op for op in invokes(history) if op["time"] == ns(1)]
    assert 35 <= len(burst) <= 65, len(burst)
    assert len(invokes(history)) < 1 + 65 + 0.2 * 1000 * 1.2


def test_mix_draws_by_weight_and_drops_exhausted_generators() -> None:
    gen = mix([repeat({"f": "a"}), repeat({"f": "b"}), limit(5, repeat({"f": "c"}))],
              weights=[3, 1, 1])
    history = simulate(limit(4000, gen), concurrency=3, seed=9)
    counts = Counter(op["f"] for op in invokes(history))
    assert counts["c"] == 5
    assert 2.6 < counts["a"] / counts["b"] < 3.4


def test_mix_of_finite_generators_ends_when_all_do() -> None:
    history = simulate(mix([limit(3, repeat({"f": "a"})), limit(2, repeat({"f": "b"}))]),
                       concurrency=2)
    assert Counter(op["f"] for op in invokes(history)) == {"a": 3, "b": 2}


def test_mix_refuses_mismatched_weights() -> None:
    with pytest.raises(ValueError):
        mix([POLL, POLL], weights=[1])


@settings(max_examples=100, deadline=None)
@given(counts=st.lists(st.integers(0, 6), min_size=1, max_size=5), seed=st.integers(0, 2**16))
def test_interleave_takes_turns_and_drops_exhausted_generators(
    counts: list[int], seed: int
) -> None:
    names = [chr(ord("a") + i) for i in range(len(counts))]
    gen = interleave([limit(n, repeat({"f": f})) for f, n in zip(names, counts, strict=True)])
    got = [op["f"] for op in invokes(simulate(gen, concurrency=1, seed=seed))]
    expected = [
        f for turn in range(max(counts)) for f, n in zip(names, counts, strict=True) if turn < n
    ]
    assert got == expected


def test_interleave_keeps_the_turn_of_a_pending_generator() -> None:
    gen = interleave([[sleep(5), repeat({"f": "a"})], repeat({"f": "b"})])
    history = simulate(limit(6, gen), concurrency=1)
    fs = [op["f"] for op in invokes(history)]
    assert fs == ["a", "b", "a", "b", "a", "b"], "b never runs ahead while a sleeps"
    assert invokes(history)[0]["time"] >= 5 * 10**9


def test_phases_wait_for_every_op_of_the_previous_phase() -> None:
    gen = phases(limit(20, repeat({"f": "a"})), sleep(0.5), limit(20, repeat({"f": "b"})),
                 limit(7, repeat({"f": "c"})))
    history = simulate(clients(gen), concurrency=5, seed=3, latency_fn=jitter)
    last_a = max(op["time"] for op in history if op["f"] == "a")
    first_b = min(op["time"] for op in invokes(history, "b"))
    last_b = max(op["time"] for op in history if op["f"] == "b")
    first_c = min(op["time"] for op in invokes(history, "c"))
    assert first_b >= last_a + ns(0.5)
    assert first_c >= last_b
    fs = [op["f"] for op in history]
    assert fs.index("b") > len(fs) - 1 - fs[::-1].index("a")
    assert Counter(op["f"] for op in invokes(history)) == {"a": 20, "b": 20, "c": 7}


def test_clients_and_nemesis_route_to_their_threads() -> None:
    gen = any_of(clients(limit(50, repeat(POLL))),
                 nemesis(limit(3, repeat({"f": "kill", "value": None}))))
    history = simulate(gen, concurrency=3)
    assert {op["process"] for op in invokes(history, "poll")} == {0, 1, 2}
    assert {op["process"] for op in invokes(history, "kill")} == {NEMESIS}
    assert len(invokes(history, "kill")) == 3


def script(n: int, gap: float) -> Gen:
    """``n`` nemesis ops, ``gap`` seconds apart: a fault script's shape."""
    return nemesis([{"f": "kill", "value": None}, sleep(gap)] * n)


def test_until_done_ends_its_tail_after_the_script_whatever_the_time_limit() -> None:
    gen = time_limit(600, until_done(script(3, 5), clients(stagger(0.1, repeat(POLL))), tail=4))
    history = simulate(gen, concurrency=2, latency_fn=jitter, seed=3)
    kills = invokes(history, "kill")
    assert len(kills) == 3
    last_kill_done = max(op["time"] for op in history
                         if op["f"] == "kill" and op["type"] != "invoke")
    polls = invokes(history, "poll")
    # the sleep, the tail, and the gap to the first question after the sleep (an op's wait)
    assert max(op["time"] for op in polls) < last_kill_done + ns(5) + ns(4) + ns(0.5)
    assert max(op["time"] for op in polls) > last_kill_done + ns(5)  # the tail did run
    assert history[-1]["time"] < ns(40)  # not the 600 s limit


def test_until_done_without_an_end_is_any_of() -> None:
    """A lead that never ends: the same history as ``any_of(rest, lead)`` (same draws)."""
    def make(combine: Callable[[Gen, Gen], Gen]) -> list[Op]:
        lead = nemesis(cycle([{"f": "kill", "value": None}, sleep(2)]))
        rest = clients(stagger(0.05, mix([repeat(POLL), repeat({"f": "send", "value": 1})])))
        return simulate(time_limit(20, combine(lead, rest)), concurrency=3, latency_fn=jitter,
                        seed=11)

    assert make(lambda lead, rest: until_done(lead, rest, tail=1)) == make(
        lambda lead, rest: any_of(rest, lead))


def test_until_done_counts_its_tail_from_the_end_of_the_scripts_last_op() -> None:
    """A script whose last step is a 30 s wait (``await-state`` for a recovering cluster):
    the workload runs on through the wait and for the tail after it, not for the tail
    after the wait began (the main phase used to end before the cluster came back)."""
    def slow_wait(op: Op, rng: random.Random) -> int:
        return ns(30) if op["f"] == "await-state" else jitter(op, rng)

    lead = nemesis([{"f": "kill", "value": None}, sleep(2), {"f": "await-state", "value": None}])
    gen = time_limit(600, until_done(lead, clients(stagger(0.1, repeat(POLL))), tail=5))
    history = simulate(gen, concurrency=2, latency_fn=slow_wait, seed=4)
    wait_done = next(op["time"] for op in history
                     if op["f"] == "await-state" and op["type"] != "invoke")
    last_poll = max(op["time"] for op in invokes(history, "poll"))
    assert wait_done > ns(30)
    assert wait_done + ns(4) < last_poll <= wait_done + ns(5)
    assert history[-1]["time"] < wait_done + ns(10)


@given(st.integers(1, 4), st.floats(0, 3), st.floats(0.5, 6), st.integers(0, 2**16))
@settings(max_examples=25, deadline=None)
def test_until_done_never_runs_an_op_past_its_cutoff(
    steps: int, gap: float, tail: float, seed: int
) -> None:
    history = simulate(until_done(script(steps, gap), clients(repeat(POLL)), tail=tail),
                       concurrency=2, latency_fn=jitter, seed=seed)
    lead_done = max(op["time"] for op in history if op["f"] == "kill")
    assert all(op["time"] <= lead_done + ns(gap) + ns(tail) for op in invokes(history, "poll"))
    assert len(invokes(history, "kill")) == steps


def test_each_thread_gives_every_thread_its_own_copy() -> None:
    history = simulate(clients(each_thread([{"f": "open"}, {"f": "a"}, {"f": "b"}])),
                       concurrency=4, latency_fn=jitter, seed=5)
    for process in range(4):
        assert [op["f"] for op in invokes(history) if op["process"] == process] == [
            "open", "a", "b"]


def test_each_thread_includes_the_nemesis_thread_when_not_routed() -> None:
    history = simulate(each_thread([{"f": "a"}, {"f": "b"}]), concurrency=2,
                       latency_fn=jitter, seed=1)
    per_process = Counter((op["process"], op["f"]) for op in invokes(history))
    assert per_process == {(p, f): 1 for p in (0, 1, NEMESIS) for f in "ab"}


def test_each_thread_copy_follows_the_thread_across_process_numbers() -> None:
    def crash_first(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "info" if op["f"] == "a" else "ok"}

    history = simulate(clients(each_thread([{"f": "a"}, {"f": "b"}])), concurrency=2,
                       outcome_fn=crash_first)
    # Thread t ran "a" as process t, ended info, and ran "b" as process t + 2.
    assert sorted((op["process"], op["f"]) for op in invokes(history)) == [
        (0, "a"), (1, "a"), (2, "b"), (3, "b")]


def test_sleep_waits_then_ends() -> None:
    history = simulate(clients([{"f": "a"}, sleep(2.5), {"f": "b"}]), concurrency=1)
    a, b = invokes(history)
    assert b["time"] - a["time"] == ns(2.5)


def test_repeat_n_and_cycle_n() -> None:
    history = simulate(clients(repeat({"f": "a"}, 4)), concurrency=2)
    assert len(invokes(history)) == 4
    history = simulate(clients(cycle([{"f": "a"}, {"f": "b"}], 3)), concurrency=2)
    assert [op["f"] for op in invokes(history)] == ["a", "b"] * 3
    assert simulate(cycle([]), concurrency=1) == []


def test_cycle_restarts_stateful_generators() -> None:
    gen = cycle([sleep(1), {"f": "start"}, sleep(1), {"f": "stop"}])
    history = simulate(time_limit(10.5, nemesis(gen)), concurrency=1)
    assert [op["f"] for op in invokes(history)] == ["start", "stop"] * 5
    starts = [op["time"] for op in invokes(history, "start")]
    assert all(later - earlier >= ns(2) for earlier, later in itertools.pairwise(starts))


def test_map_ops_rewrites_each_op() -> None:
    history = simulate(clients(map_ops(lambda op: {**op, "value": 42}, limit(3, repeat(POLL)))),
                       concurrency=1)
    assert [op["value"] for op in invokes(history)] == [42, 42, 42]


@dataclass(frozen=True)
class OneAtATime(Gen):
    """Emits op ``i`` only once it has heard of ``i`` oks: only update() can unblock it."""

    oks: int = 0
    emitted: int = 0

    def op(self, ctx: Context) -> Step:
        if self.emitted >= 5:
            return None
        if self.emitted > self.oks:
            return PENDING, self
        op = fill_in({"f": "x", "value": self.emitted}, ctx)
        if isinstance(op, Pending):
            return op, self
        return op, replace(self, emitted=self.emitted + 1)

    def update(self, ctx: Context, event: Op) -> Gen:
        return replace(self, oks=self.oks + (event["type"] == "ok"))


def test_update_feeds_completions_back() -> None:
    history = simulate(clients(OneAtATime()), concurrency=4)
    assert [(op["type"], op["value"]) for op in history] == [
        (t, i) for i in range(5) for t in ("invoke", "ok")]


def test_a_generator_waiting_for_nothing_is_reported() -> None:
    with pytest.raises(SimulationError, match="nothing in flight"):
        simulate(clients(OneAtATime(oks=-1, emitted=0)), concurrency=1)


def test_limit_counts_ops_not_pending_answers() -> None:
    g = Limit(1, clients(POLL))
    busy = Context(0, (0, NEMESIS), frozenset({NEMESIS}), {0: 0, NEMESIS: NEMESIS})
    step = g.op(busy)
    assert step is not None and step[1] == Limit(1, clients(POLL))


@dataclass(frozen=True)
class Deaf(Gen):
    """Waits for ever and ignores every event: each question and event leaves it as it is."""

    def op(self, ctx: Context) -> Step:
        return PENDING, self


@pytest.mark.parametrize(
    "make",
    [
        lambda g: limit(3, g),
        lambda g: time_limit(5, g),
        lambda g: stagger(0.01, g),
        clients,
        lambda g: any_of(g, Deaf()),
        lambda g: until_done(Deaf(), g, tail=1),
        lambda g: mix([g, Deaf()]),
        lambda g: interleave([g, Deaf()]),
        lambda g: phases(g, Deaf()),
        lambda g: Ahead(time_limit(5, clients(stagger(0.01, g))), (clients(g),)),
    ],
    ids=["limit", "time-limit", "stagger", "clients", "any-of", "until-done", "mix", "interleave",
         "phases", "ahead"],
)
def test_a_combinator_whose_children_did_not_change_stays_the_same_value(
    make: Callable[[Gen], Gen],
) -> None:
    """The interpreter asks and updates several times per op: a state nobody changed is
    kept as it is, not built again (what the simulator then sees is unchanged too)."""
    ctx = Context(0, (0, NEMESIS), frozenset({0, NEMESIS}), {0: 0, NEMESIS: NEMESIS})
    g = make(Deaf())
    g = g.op(ctx)[1] or g  # a time limit learns its cutoff at the first question
    step = g.op(ctx)
    assert step is not None and isinstance(step[0], Pending) and step[1] is g
    event = {"index": 0, "time": 0, "process": 0, "type": "ok", "f": "poll", "value": []}
    assert g.update(ctx, event) is g
