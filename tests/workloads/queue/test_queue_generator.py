"""The queue workload's generator, and a run's phases around it, by simulation.

``FakeKafka`` (``tests/support/sim_kafka.py``) is the in-memory stand-in: an
outcome function (a handler) that keeps one log per key and a read position per
process, so simulated histories carry real-looking offsets and reads.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_kafka import FakeKafka

from harness.base.contract import f_codes, parse_key
from harness.gen import (
    NEMESIS,
    Gen,
    GenLike,
    Op,
    clients,
    cycle,
    limit,
    ns,
    plan_gen,
    run_phases,
    simulate,
    sleep,
    time_limit,
)
from workloads.queue.drain import Drain
from workloads.queue.generator import QueueGen
from workloads.queue.shape import OPS, QueueOptions, key_name

MS = 1_000_000


def queue_plan(
    opts: QueueOptions | None = None,
    *,
    rate: float | None,
    time_limit_s: float,
    nemesis_gen: GenLike = None,
    final_nemesis: GenLike = None,
    quiet_s: float = 0.0,
    final_time_limit_s: float = 60.0,
) -> Gen:
    """A run of the queue workload as one generator: the run's phases around it."""
    return plan_gen(run_phases(QueueGen.start(opts), rate=rate, time_limit_s=time_limit_s,
                               nemesis_gen=nemesis_gen, final_nemesis=final_nemesis,
                               quiet_s=quiet_s, drain=Drain(),
                               final_time_limit_s=final_time_limit_s))


def invokes(history: list[Op], *fs: str) -> list[Op]:
    return [op for op in history if op["type"] == "invoke" and (not fs or op["f"] in fs)]


def sends(history: list[Op]) -> list[tuple[str, int]]:
    """(key, value) of every send micro-op, in invocation order."""
    return [(mop[1], mop[2]) for op in invokes(history, "send", "txn")
            for mop in op["value"] if mop[0] == "send"]


def assert_threads_sequential(history: list[Op], concurrency: int) -> None:
    busy: dict[Any, Op] = {}
    for op in history:
        thread = op["process"] if op["process"] == NEMESIS else op["process"] % concurrency
        if op["type"] == "invoke":
            assert thread not in busy, f"thread {thread} invoked {op} during {busy.get(thread)}"
            busy[thread] = op
        else:
            assert busy.pop(thread)["process"] == op["process"]


@given(
    concurrency=st.integers(1, 6),
    key_count=st.integers(1, 5),
    budget=st.integers(1, 20),
    txn=st.floats(0, 3),
    crash=st.floats(0, 0.5),
    max_txn_len=st.integers(1, 6),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=60, deadline=None)
def test_values_are_unique_per_key_and_budgets_hold(
    *,
    concurrency: int, key_count: int, budget: int, txn: float, crash: float,
    max_txn_len: int, seed: int,
) -> None:
    opts = QueueOptions(key_count=key_count, max_writes_per_key=budget, max_txn_len=max_txn_len,
                        partitions_per_topic=3,
                        weights={"send": 3, "poll": 2, "txn": txn, "assign": 0.2, "crash": crash})
    plan = queue_plan(opts, rate=200, time_limit_s=2, quiet_s=0.5, final_time_limit_s=0.5,
                      final_nemesis={"f": "heal", "value": None})
    history = simulate(plan, concurrency=concurrency, seed=seed, outcome_fn=FakeKafka(),
                       latency_fn=lambda op, r: r.randint(1, 30) * MS)
    written = sends(history)
    assert written, "a 2 s run at 200/s sends something"
    per_key: defaultdict[str, list[int]] = defaultdict(list)
    for key, value in written:
        per_key[key].append(value)
    for key, values in per_key.items():
        assert len(values) == len(set(values)), f"duplicate value on {key}"
        assert len(values) <= budget, f"{key} took {len(values)} writes, budget {budget}"
    # Never more than key_count keys are open (written, budget not spent) at once.
    counts: Counter[str] = Counter()
    for key, _ in written:
        counts[key] += 1
        assert sum(1 for n in counts.values() if n < budget) <= key_count
    assert_threads_sequential(history, concurrency)


def test_keys_retire_after_their_budget_and_new_ones_take_over() -> None:
    opts = QueueOptions(key_count=2, max_writes_per_key=3, partitions_per_topic=4,
                        weights={"send": 1})
    history = simulate(clients(limit(40, QueueGen.start(opts))), concurrency=1, seed=1)
    written = sends(history)
    counts = Counter(key for key, _ in written)
    full = [k for k, n in counts.items() if n == 3]
    assert len(full) >= 9  # 40 ops minus the joins after each retirement
    assert all(n <= 3 for n in counts.values())
    assert "t2-0" in counts  # key number 8 lives in the third topic
    for key in full:  # after its third write a key is never written again
        third = [i for i, (k, _) in enumerate(written) if k == key][2]
        assert key not in {k for k, _ in written[third + 1:]}
    # After each retirement the client joins the new key set before anything else.
    assigns = [op["value"] for op in invokes(history, "assign")]
    assert assigns[0] == ["t0-0", "t0-1"]
    assert len(assigns) == len(full) + 1
    assert assigns[1] in (["t0-1", "t0-2"], ["t0-0", "t0-2"])


def test_a_crashed_client_continues_as_a_fresh_process_that_joins_first() -> None:
    opts = QueueOptions(weights={"send": 1, "poll": 1, "crash": 1})
    history = simulate(clients(limit(300, QueueGen.start(opts))), concurrency=3, seed=4)
    crashes = [op for op in history if op["f"] == "crash" and op["type"] == "info"]
    assert len(crashes) > 20
    for crash in crashes:
        after = [op for op in invokes(history)
                 if op["index"] > crash["index"] and op["process"] % 3 == crash["process"] % 3]
        if after:
            assert after[0]["process"] == crash["process"] + 3
            assert after[0]["f"] == "assign"
    for p in {c["process"] for c in crashes}:
        crash_at = next(c["index"] for c in crashes if c["process"] == p)
        assert not [op for op in history if op["process"] == p and op["index"] > crash_at]


@pytest.mark.parametrize(("rate", "life_s"), [(250, 3.0), (50, 3.0), (250, 10.0)],
                         ids=["fast-ops", "slow-ops", "longer-lives"])
def test_timed_crashes_follow_the_clock_not_the_op_rate(rate: float, life_s: float) -> None:
    """Each of 4 clients lives ``life_s`` on average: over 60 s about 60 * 4 / life_s
    crashes, whether the run does 50 or 250 ops a second (virtual time).

    Five times the ops would give five times the crashes if crashes followed the op
    rate, far outside the +-40 % both rates must meet; a faster rate proves no more
    and costs a simulated op per extra op."""
    opts = QueueOptions(weights={"send": 1, "poll": 1}, client_life_ns=int(life_s * 1e9))
    history = simulate(queue_plan(opts, rate=rate, time_limit_s=60.0, final_time_limit_s=1.0),
                       concurrency=4, seed=3, outcome_fn=FakeKafka(), max_ops=400_000)
    crashes = [op for op in invokes(history, "crash") if op["time"] < ns(59)]  # not the drain's
    expected = 59 * 4 / life_s
    assert 0.6 * expected <= len(crashes) <= 1.4 * expected
    gaps = [b["time"] - a["time"] for a, b in itertools.pairwise(crashes)]
    assert max(gaps) <= 2 * ns(life_s / 4) + ns(1)  # uniform from 0 to twice the mean gap


def test_no_timed_crash_without_a_client_life() -> None:
    opts = QueueOptions(weights={"send": 1, "poll": 1})
    history = simulate(queue_plan(opts, rate=200, time_limit_s=20.0, final_time_limit_s=1.0),
                       concurrency=3, seed=2, outcome_fn=FakeKafka())
    # (the drain ends the main phase's clients with crash ops of its own: after 19.9 s)
    assert [op for op in invokes(history, "crash") if op["time"] < ns(19)] == []


def test_every_process_joins_before_its_first_read() -> None:
    opts = QueueOptions(weights={"poll": 1, "txn": 1}, consume="subscribe")
    history = simulate(clients(limit(100, QueueGen.start(opts))), concurrency=4, seed=2)
    for process in range(4):
        mine = [op["f"] for op in invokes(history) if op["process"] == process]
        assert mine[0] == "subscribe"


def test_a_failed_join_is_retried() -> None:
    def assign_fails_once(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "fail" if op["f"] == "assign" and op["index"] == 0 else "ok"}

    opts = QueueOptions(weights={"poll": 1})
    history = simulate(clients(limit(3, QueueGen.start(opts))), concurrency=1,
                       outcome_fn=assign_fails_once)
    assert [op["f"] for op in invokes(history)] == ["assign", "assign", "poll"]


def test_the_plan_runs_main_then_heal_then_quiet_then_drain() -> None:
    nem = cycle([sleep(1), {"f": "start-partition", "value": "majority"}, sleep(1),
                 {"f": "stop-partition", "value": None}])
    plan = queue_plan(QueueOptions(), rate=50, time_limit_s=10, nemesis_gen=nem,
                      final_nemesis={"f": "heal", "value": None}, quiet_s=5,
                      final_time_limit_s=3)
    history = simulate(plan, concurrency=4, seed=6, outcome_fn=FakeKafka(),
                       latency_fn=lambda op, r: r.randint(1, 50) * MS)
    heal = next(op for op in history if op["f"] == "heal" and op["type"] == "invoke")
    heal_done = next(op for op in history if op["f"] == "heal" and op["type"] != "invoke")
    before, after = history[:heal["index"]], history[heal["index"] + 1:]
    assert all(op["time"] < ns(10) for op in invokes(before))
    assert len({op["f"] for op in invokes(before) if op["process"] == NEMESIS}) == 2
    assert not [op for op in after if op["type"] == "invoke" and op["process"] == NEMESIS]
    # Every main-phase op completed before the heal started.
    pending = {op["process"] for op in before if op["type"] == "invoke"} - {
        op["process"] for op in before if op["type"] != "invoke"}
    assert not pending
    first_drain = min(op["time"] for op in invokes(after))
    assert first_drain >= heal_done["time"] + ns(5)
    assert all(op.get("seek") == "beginning" or op["f"] in ("poll", "crash")
               for op in invokes(after))
    assert {op["f"] for op in invokes(after)} == {"crash", "assign", "poll"}
    assert max(op["time"] for op in invokes(after)) < first_drain + ns(3)


def test_same_seed_same_run_other_seed_other_run() -> None:
    def run(seed: int) -> list[Op]:
        return simulate(queue_plan(QueueOptions(weights={"send": 2, "poll": 2, "txn": 1,
                                                         "crash": 0.1}),
                                   rate=100, time_limit_s=3, final_time_limit_s=1),
                        concurrency=5, seed=seed, outcome_fn=FakeKafka(),
                        latency_fn=lambda op, r: r.randint(1, 40) * MS)

    assert run(11) == run(11)
    assert run(11) != run(12)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"weights": {"send": 1, "read": 1}}, id="unknown-op"),
        pytest.param({"weights": {"send": 0}}, id="no-positive-weight"),
        pytest.param({"weights": {"send": 1, "poll": -1}}, id="negative-weight"),
        pytest.param({"key_count": 0}, id="no-keys"),
        pytest.param({"max_writes_per_key": 0}, id="no-budget"),
        pytest.param({"txn_send_ratio": 1.5}, id="ratio-above-one"),
        pytest.param({"client_life_ns": 0}, id="clients-that-never-live"),
    ],
)
def test_queue_options_refuse_nonsense(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        QueueOptions(**kwargs)


def test_key_names_round_trip() -> None:
    assert [key_name(n, 3) for n in range(5)] == ["t0-0", "t0-1", "t0-2", "t1-0", "t1-1"]
    assert parse_key("t12-7") == ("t12", 7)
    assert parse_key("my-topic-3") == ("my-topic", 3)
    with pytest.raises(ValueError):
        parse_key("t0")


def lose_one_acked_write(kafka: FakeKafka) -> Any:
    """The same fake, except the 5th record ever acknowledged vanishes from its log."""
    acked = 0

    def handler(op: Op, rng: random.Random) -> Mapping[str, Any]:
        nonlocal acked
        end = kafka(op, rng)
        for mop in end.get("value") or []:
            if mop[0] == "send":
                acked += 1
                if acked == 5:
                    del kafka.logs[mop[1]][mop[2][0]]
        return end

    return handler


@given(concurrency=st.integers(1, 5), txn=st.floats(0, 2), crash=st.floats(0, 0.3),
       seed=st.integers(0, 2**32))
@settings(max_examples=15, deadline=None)
def test_a_simulated_run_against_a_correct_kafka_passes_the_checker(
    concurrency: int, txn: float, crash: float, seed: int,
) -> None:
    """Generator, simulator and checker agree on the history contract, end to end."""
    from checkers import check_history

    opts = QueueOptions(key_count=3, max_writes_per_key=8,
                        weights={"send": 3, "poll": 3, "txn": txn, "assign": 0.2, "crash": crash})
    plan = queue_plan(opts, rate=100, time_limit_s=3, final_time_limit_s=1,
                      nemesis_gen=cycle([sleep(1), {"f": "start-partition", "value": None}]),
                      final_nemesis={"f": "heal", "value": None})
    history = simulate(plan, concurrency=concurrency, seed=seed, outcome_fn=FakeKafka(),
                       latency_fn=lambda op, r: r.randint(1, 30) * MS)
    verdict = check_history(history)
    assert verdict["valid"] is True, verdict["anomalies"]


def test_the_same_run_with_a_lost_write_fails_the_checker() -> None:
    from checkers import check_history

    plan = queue_plan(QueueOptions(weights={"send": 1, "poll": 1}), rate=100, time_limit_s=3,
                      final_time_limit_s=1)
    history = simulate(plan, concurrency=3, seed=1, outcome_fn=lose_one_acked_write(FakeKafka()),
                       latency_fn=lambda op, r: r.randint(1, 30) * MS)
    verdict = check_history(history)
    assert verdict["valid"] is False
    assert set(verdict["anomaly-types"]) & {"lost-write", "unseen"}


def test_the_queue_asks_only_for_the_history_contracts_client_ops() -> None:
    """Its ops are docs/HISTORY.md's client ``f`` s, which the checker reads by code."""
    assert set(OPS) <= set(f_codes())


def test_the_fast_copy_of_a_state_carries_every_field() -> None:
    """``QueueGen._with`` names the fields by hand (for speed): a field added to the
    class and forgotten there would silently fall back to its default."""
    from dataclasses import fields

    state = QueueGen.start(QueueOptions(key_count=2))
    for f in fields(QueueGen):
        marker = object()
        copy = state._with(**{f.name: marker})
        assert getattr(copy, f.name) is marker, f.name
        assert all(getattr(copy, g.name) is getattr(state, g.name)
                   for g in fields(QueueGen) if g.name != f.name)


def test_a_process_whose_join_failed_sends_until_it_may_join_again() -> None:
    """While a fresh key's topic cannot be created, every join fails at once: a process
    tries again only ``rejoin_ns`` later, sends meanwhile, and reads nothing unjoined."""
    def joins_fail_for_5_s(op: Op, rng: random.Random) -> Mapping[str, Any]:
        if op["f"] == "assign" and op["time"] < ns(5):
            return {"type": "fail", "error": "INVALID_REPLICATION_FACTOR"}
        return {"type": "ok"}

    opts = QueueOptions(weights={"send": 1, "poll": 1}, rejoin_ns=ns(1))
    history = simulate(time_limit(8, clients(QueueGen.start(opts))), concurrency=3, seed=4,
                       outcome_fn=joins_fail_for_5_s, latency_fn=lambda op, r: 2 * MS)
    for process in range(3):
        mine = [op for op in invokes(history) if op["process"] == process]
        joins = [op["time"] for op in mine if op["f"] == "assign"]
        failed = [t for t in joins if t < ns(5)]
        assert 4 <= len(failed) <= 6  # one a second while they fail, not one per op
        assert all(b - a >= ns(1) for a, b in itertools.pairwise(failed))
        first_ok_join = joins[len(failed)]
        assert first_ok_join - failed[-1] >= ns(1)
        assert [op for op in mine if op["f"] == "poll" and op["time"] < first_ok_join] == []
        assert [op for op in mine if op["f"] == "send" and op["time"] < ns(5)]  # went on
        assert [op for op in mine if op["f"] == "poll" and op["time"] > first_ok_join]


def test_without_a_rejoin_delay_a_failed_join_is_tried_again_at_once() -> None:
    def assign_fails(op: Op, rng: random.Random) -> Mapping[str, Any]:
        return {"type": "fail" if op["f"] == "assign" else "ok"}

    opts = QueueOptions(weights={"send": 1, "poll": 1}, rejoin_ns=0)
    history = simulate(clients(limit(10, QueueGen.start(opts))), concurrency=1,
                       outcome_fn=assign_fails)
    assert [op["f"] for op in invokes(history)] == ["assign"] * 10
