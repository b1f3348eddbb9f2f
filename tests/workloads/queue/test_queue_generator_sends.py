"""Send ops of many records, the writer bound per key and stalled keys, by simulation.

A ``send`` op carries 1 to ``sends_per_op`` records to one key; at most
``writers_per_key`` ops sending to one key are in flight (one until a send to
it succeeded); a key whose send has been stuck for ``stall_ns`` is retired. The
simulator plays a Kafka whose partitions 0, 3 and 6 of every topic are stalled
for good (their sends take the op timeout and end ``info``: a broker that leads
3 of 8 partitions is gone), to show that the healthy keys keep being written.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_kafka import FakeKafka

from checkers import check_history
from harness.base.contract import parse_key
from harness.gen import Op, clients, ns, plan_gen, run_phases, simulate, time_limit
from workloads.queue.drain import Drain, DrainTracker
from workloads.queue.generator import QueueGen
from workloads.queue.shape import QueueOptions

MS = 1_000_000
TIMEOUT = ns(15)


def send_ops(history: list[Op]) -> list[Op]:
    return [op for op in history if op["type"] == "invoke" and op["f"] in ("send", "txn")]


def in_flight_per_key(history: list[Op]) -> Counter[str]:
    """The most ops sending to each key that were ever in flight at once."""
    now: Counter[str] = Counter()
    most: Counter[str] = Counter()
    pending: dict[Any, set[str]] = {}
    for op in history:
        if op["type"] == "invoke" and op["f"] in ("send", "txn"):
            keys = {m[1] for m in op["value"] if m[0] == "send"}
            pending[op["process"]] = keys
            for key in keys:
                now[key] += 1
                most[key] = max(most[key], now[key])
        elif op["type"] != "invoke":
            for key in pending.pop(op["process"], set()):
                now[key] -= 1
    return most


@given(
    concurrency=st.integers(1, 8),
    key_count=st.integers(1, 5),
    budget=st.integers(1, 80),
    sends_per_op=st.integers(1, 40),
    writers=st.one_of(st.none(), st.integers(1, 3)),
    txn=st.floats(0, 2),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=60, deadline=None)
def test_send_ops_carry_one_to_n_records_to_one_key_with_unique_values(
    *, concurrency: int, key_count: int, budget: int, sends_per_op: int, writers: int | None,
    txn: float, seed: int,
) -> None:
    opts = QueueOptions(key_count=key_count, max_writes_per_key=budget, partitions_per_topic=3,
                        sends_per_op=sends_per_op, writers_per_key=writers, stall_ns=ns(0.5),
                        weights={"send": 3, "poll": 2, "txn": txn, "assign": 0.2, "crash": 0.1})
    history = simulate(clients(time_limit(1, QueueGen.start(opts))), concurrency=concurrency,
                       seed=seed, outcome_fn=FakeKafka(),
                       latency_fn=lambda op, r: r.randint(1, 30) * MS)
    per_key: defaultdict[str, list[int]] = defaultdict(list)
    for op in send_ops(history):
        mops = [m for m in op["value"] if m[0] == "send"]
        if op["f"] == "send":
            assert 1 <= len(mops) <= sends_per_op and len(op["value"]) == len(mops)
            assert len({m[1] for m in mops}) == 1, f"a send op spans keys: {op}"
        else:  # each of a txn's at most max_txn_len picks writes 1 to sends_per_op records
            assert len(mops) <= opts.max_txn_len * sends_per_op, op
        for _, key, value in mops:
            per_key[key].append(value)
    values = [v for vs in per_key.values() for v in vs]
    assert values and len(values) == len(set(values)), "a value was sent twice"
    assert all(len(vs) <= budget for vs in per_key.values())
    if writers is not None:
        assert max(in_flight_per_key(history).values()) <= writers
    # A key is written only while it is active: never more than key_count at once.
    assert most_keys_alive(send_ops(history)) <= key_count


def test_transactions_carry_several_records_over_several_keys() -> None:
    """A txn's send picks each write 1 to ``sends_per_op`` records, as a send op does: a
    transaction of one record makes a transactional run's rate that of its commits."""
    opts = QueueOptions(key_count=4, max_writes_per_key=10_000, sends_per_op=16,
                        txn_send_ratio=1.0, weights={"txn": 1})
    history = simulate(clients(time_limit(1, QueueGen.start(opts))), concurrency=3, seed=5,
                       outcome_fn=FakeKafka(), latency_fn=lambda op, r: r.randint(1, 30) * MS)
    txns = [[m for m in op["value"] if m[0] == "send"] for op in send_ops(history)]
    assert len(txns) > 20
    records = [len(mops) for mops in txns]
    keys = [len({m[1] for m in mops}) for mops in txns]
    assert sum(records) / len(records) > 8
    assert max(records) > 16 and max(keys) > 1
    assert sum(keys) / len(keys) > 1.5


def most_keys_alive(ops: list[Op]) -> int:
    """The most keys alive at once, a key living from its first send to its last, in the
    order the generator made the sends (the order of the invokes)."""
    order = [m[1] for op in ops for m in op["value"] if m[0] == "send"]
    last = {key: i for i, key in enumerate(order)}
    alive: set[str] = set()
    most = 0
    for i, key in enumerate(order):
        alive.add(key)
        most = max(most, len(alive))
        if last[key] == i:
            alive.discard(key)
    return most


def test_send_ops_use_the_whole_range_of_sizes_and_the_budget_cuts_the_last() -> None:
    opts = QueueOptions(key_count=2, max_writes_per_key=50, sends_per_op=6, weights={"send": 1})
    history = simulate(clients(time_limit(1, QueueGen.start(opts))), concurrency=3, seed=7)
    sizes = Counter(len(op["value"]) for op in send_ops(history))
    assert set(sizes) == set(range(1, 7))
    per_key = Counter(m[1] for op in send_ops(history) for m in op["value"])
    retired = [key for key, n in per_key.items() if n == 50]
    assert len(retired) >= 10  # every full key took exactly its budget, never more


def stalled(key: str) -> bool:
    return parse_key(key)[1] % 3 == 0


def sends_to_a_stalled_key(op: Op) -> bool:
    return any(m[0] == "send" and stalled(m[1]) for m in op["value"] or ())


def stalling_latency(op: Op, rng: random.Random) -> int:
    if op["f"] in ("send", "txn") and sends_to_a_stalled_key(op):
        return TIMEOUT
    return rng.randint(10, 30) * MS


def stalling_outcome(kafka: FakeKafka) -> Any:
    def outcome(op: Op, rng: random.Random) -> Mapping[str, Any]:
        if op["f"] in ("send", "txn") and sends_to_a_stalled_key(op):
            return {"type": "info", "error": "no delivery report after 15s"}
        return kafka(op, rng)

    return outcome


def acked_per_second(history: list[Op], seconds: int) -> list[int]:
    out = [0] * seconds
    for op in history:
        if op["type"] == "ok" and op["f"] == "send" and op["time"] < ns(seconds):
            out[op["time"] // ns(1)] += len(op["value"])
    return out


def stalled_run(**shape: Any) -> list[Op]:
    opts = QueueOptions(key_count=4, max_writes_per_key=2048, partitions_per_topic=8,
                        sends_per_op=32, weights={"send": 4, "poll": 4, "assign": 0.1}, **shape)
    return simulate(clients(time_limit(40, QueueGen.start(opts))), concurrency=12, seed=3,
                    latency_fn=stalling_latency, outcome_fn=stalling_outcome(FakeKafka()))


def test_a_stalled_partition_holds_a_few_threads_and_the_rest_keep_writing() -> None:
    history = stalled_run(writers_per_key=2, stall_ns=ns(2))
    most = in_flight_per_key(history)
    assert max(most.values()) == 2
    # A send to a stalled key never succeeds, so such a key never had a second writer.
    assert {most[key] for key in most if stalled(key)} == {1}
    per_second = acked_per_second(history, 40)
    assert min(per_second) > 500, per_second  # every second, healthy keys took writes
    # Each stalled key took sends only until its first stuck send was 2 s old.
    first: dict[str, int] = {}
    for op in send_ops(history):
        for _, key, _ in op["value"]:
            if stalled(key):
                first.setdefault(key, op["time"])
                assert op["time"] <= first[key] + ns(2), f"{key} written after it stalled"
    assert len(first) >= 3


@pytest.mark.parametrize(
    "shape",
    [{}, {"writers_per_key": 2}, {"stall_ns": ns(2)}],
    ids=["neither", "bound-only", "retirement-only"],
)
def test_either_defence_alone_lets_the_same_stall_stop_the_run(shape: dict[str, Any]) -> None:
    """Without the bound every thread soon waits on a stalled key; without the retirement
    stalled keys, which never spend their budget, fill the active set."""
    per_second = acked_per_second(stalled_run(**shape), 40)
    assert per_second.count(0) >= 10, per_second


@given(concurrency=st.integers(1, 6), sends_per_op=st.integers(1, 32),
       seed=st.integers(0, 2**32))
@settings(max_examples=15, deadline=None)
def test_a_run_of_many_record_sends_drains_completely_and_passes_the_checker(
    concurrency: int, sends_per_op: int, seed: int
) -> None:
    opts = QueueOptions(key_count=3, max_writes_per_key=60, sends_per_op=sends_per_op,
                        writers_per_key=2, stall_ns=ns(1),
                        weights={"send": 3, "poll": 3, "txn": 0.5, "assign": 0.2, "crash": 0.1})
    plan = run_phases(QueueGen.start(opts), rate=100, time_limit_s=3, drain=Drain(),
                      final_time_limit_s=5)
    history = simulate(plan_gen(plan), concurrency=concurrency, seed=seed,
                       outcome_fn=FakeKafka(batch=50),
                       latency_fn=lambda op, r: r.randint(1, 30) * MS)
    drain_start = next(i for i, op in enumerate(history)
                       if op["type"] == "invoke" and op.get("seek") == "beginning")
    tracker = DrainTracker()
    for op in history[:drain_start]:
        tracker = tracker.observe(op)
    assert tracker.acked, "the main phase acknowledged sends"
    tracker = tracker.reread()
    for op in history[drain_start:]:
        tracker = tracker.observe(op)
    assert tracker.complete, f"{tracker.unread_count()} acknowledged values never re-read"
    verdict = check_history(history)
    assert verdict["valid"] is True, verdict["anomalies"]


def test_a_pinned_key_keeps_its_sends_through_a_stall_and_the_rest_keep_writing() -> None:
    """A scenario pins the key its fault script names (``t0-0``: partition 0, stalled
    here for good): it is never retired, so it is still written after the stall, while
    the bound per key keeps the other keys written every second."""
    history = stalled_run(writers_per_key=2, stall_ns=ns(2), pinned=frozenset({"t0-0"}))
    times = [op["time"] for op in send_ops(history) if any(m[1] == "t0-0" for m in op["value"])]
    assert times and times[-1] > times[0] + ns(10), "the pinned key was given up"
    per_second = acked_per_second(history, 40)
    assert min(per_second) > 300, per_second
    unpinned = stalled_run(writers_per_key=2, stall_ns=ns(2))
    late = [op for op in send_ops(unpinned) if any(m[1] == "t0-0" for m in op["value"])]
    assert late and late[-1]["time"] <= late[0]["time"] + ns(2)  # retired, as before


def test_a_refused_send_gives_its_key_back_its_budget() -> None:
    """Sends to topics past ``t0`` are refused at once (``fail``: their topic cannot be
    created while a broker is down) for the first 5 s. A refused send writes nothing, so it
    spends none of its key's budget: the refused keys stay, and take their writes once their
    topic can be made, instead of each being used up by refusals and replaced."""
    kafka = FakeKafka()

    def outcome(op: Op, rng: random.Random) -> Mapping[str, Any]:
        keys = {m[1] for m in op["value"] or () if m[0] == "send"}
        if op["f"] == "send" and op["time"] < ns(5) and any(
                parse_key(k)[0] != "t0" for k in keys):
            return {"type": "fail", "error": "not started: INVALID_REPLICATION_FACTOR"}
        return kafka(op, rng)

    opts = QueueOptions(key_count=2, max_writes_per_key=64, partitions_per_topic=2,
                        sends_per_op=8, writers_per_key=2, stall_ns=ns(2),
                        weights={"send": 4, "poll": 1})
    history = simulate(clients(time_limit(10, QueueGen.start(opts))), concurrency=4, seed=5,
                       outcome_fn=outcome, latency_fn=lambda op, r: r.randint(1, 3) * MS)
    refused = [op for op in history if op["type"] == "fail" and op["f"] == "send"]
    assert len(refused) > 100  # the refusals came fast and many
    refused_keys = {m[1] for op in refused for m in op["value"]}
    assert refused_keys <= {"t1-0", "t1-1"}, refused_keys  # not a new key per refusal
    acked: Counter[str] = Counter()
    for op in history:
        if op["type"] == "ok" and op["f"] == "send":
            acked.update(m[1] for m in op["value"])
    assert acked["t1-0"] == 64 and acked["t1-1"] == 64  # each took its whole budget later


def refusing_before(seconds: float, refused: Any) -> Any:
    """A Kafka that refuses (``fail``) every send to a key ``refused(key)`` names until
    ``seconds`` into the run, and otherwise behaves."""
    kafka = FakeKafka()

    def outcome(op: Op, rng: random.Random) -> Mapping[str, Any]:
        keys = {m[1] for m in op["value"] or () if m[0] == "send"}
        if op["f"] == "send" and op["time"] < ns(seconds) and any(map(refused, keys)):
            return {"type": "fail", "error": "not started: INVALID_REPLICATION_FACTOR"}
        return kafka(op, rng)

    return outcome


def test_a_key_a_send_was_refused_on_rests_and_the_others_keep_writing() -> None:
    """The same refusals as above, with ``refused_ns``: a refused key takes no send for
    1 s, so its writer asks a few times in the 5 s, not hundreds, and the budget still
    comes back: the keys take their whole budget once their topic can be made."""
    opts = QueueOptions(key_count=2, max_writes_per_key=64, partitions_per_topic=2,
                        sends_per_op=8, writers_per_key=2, stall_ns=ns(2),
                        weights={"send": 4, "poll": 1}, refused_ns=ns(1))
    history = simulate(clients(time_limit(10, QueueGen.start(opts))), concurrency=4, seed=5,
                       outcome_fn=refusing_before(5, lambda k: parse_key(k)[0] != "t0"),
                       latency_fn=lambda op, r: r.randint(1, 3) * MS)
    refused = [op for op in history if op["type"] == "fail" and op["f"] == "send"]
    per_key = Counter(m[1] for op in refused for m in op["value"][:1])
    assert per_key and max(per_key.values()) <= 6, per_key  # once a second, at most
    for key in per_key:
        tries = sorted(op["time"] for op in refused if op["value"][0][1] == key)
        assert all(b - a >= ns(1) for a, b in pairwise(tries)), tries
    acked: Counter[str] = Counter()
    for op in history:
        if op["type"] == "ok" and op["f"] == "send":
            acked.update(m[1] for m in op["value"])
    assert acked["t1-0"] == 64 and acked["t1-1"] == 64
    polls = [op for op in history if op["type"] == "ok" and op["f"] == "poll"
             and op["time"] < ns(5)]
    assert polls, "the threads that could not send read meanwhile"


def test_when_every_key_rests_a_send_only_workload_waits_for_the_first_to_rest_out() -> None:
    opts = QueueOptions(key_count=2, max_writes_per_key=1000, partitions_per_topic=2,
                        sends_per_op=1, writers_per_key=2, weights={"send": 1},
                        refused_ns=ns(1))
    history = simulate(clients(time_limit(3.5, QueueGen.start(opts))), concurrency=4, seed=2,
                       outcome_fn=refusing_before(3, lambda k: True),
                       latency_fn=lambda op, r: MS)
    early = [op for op in send_ops(history) if op["time"] < ns(3)]
    assert 2 <= len(early) <= 2 * 3, len(early)  # each key once a second
    assert any(op["type"] == "ok" for op in history), "sends resume once Kafka takes them"
