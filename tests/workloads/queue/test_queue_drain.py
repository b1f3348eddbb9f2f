"""The queue workload's final drain and its tracker, by simulation and by hand."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_kafka import FakeKafka

from harness.gen import Context, Gen, Op, plan_gen, run_phases, simulate
from workloads.queue import drain
from workloads.queue.drain import Drain, DrainTracker, drain_complete, unread
from workloads.queue.generator import QueueGen
from workloads.queue.shape import QueueOptions


def invokes(history: list[Op], *fs: str) -> list[Op]:
    return [op for op in history if op["type"] == "invoke" and (not fs or op["f"] in fs)]


def sends(history: list[Op]) -> list[tuple[str, int]]:
    return [(mop[1], mop[2]) for op in invokes(history, "send", "txn")
            for mop in op["value"] if mop[0] == "send"]


def queue_plan(opts: QueueOptions, *, rate: float, time_limit_s: float, quiet_s: float,
               final_time_limit_s: float) -> Gen:
    return plan_gen(run_phases(QueueGen.start(opts), rate=rate, time_limit_s=time_limit_s,
                               quiet_s=quiet_s, drain=Drain(),
                               final_time_limit_s=final_time_limit_s))


def test_the_drain_rereads_every_key_ever_once_from_the_beginning_as_fresh_processes(
) -> None:
    opts = QueueOptions(key_count=2, max_writes_per_key=5, weights={"send": 1, "poll": 1})
    kafka = FakeKafka()
    history = simulate(queue_plan(opts, rate=100, time_limit_s=3, quiet_s=1,
                                  final_time_limit_s=2),
                       concurrency=3, seed=8, outcome_fn=kafka)
    every_key = sorted({k for k, _ in sends(history)} |
                       {k for op in invokes(history, "assign") for k in op["value"]})
    drain = [op for op in invokes(history) if op.get("seek") == "beginning"]
    assert {op["process"] for op in drain} == {3, 4, 5}  # threads 0-2 after one crash each
    shares = [set(op["value"]) for op in drain]  # each key re-read by one process
    assert sorted(k for share in shares for k in share) == every_key
    assert all(len(share) >= len(every_key) // 3 for share in shares)
    for op in drain:  # the old process crashed just before; it never re-reads itself
        old = [o for o in invokes(history) if o["process"] == op["process"] - 3]
        assert old[-1]["f"] == "crash"
        assert old[-1]["index"] > max(o["index"] for o in invokes(history, "send"))
    assert len(every_key) > 10
    tracker = DrainTracker()
    done_at = None
    for op in history:
        tracker = tracker.observe(op)
        if done_at is None and tracker.complete and op["index"] > drain[-1]["index"]:
            done_at = op["time"]
    assert done_at is not None, unread(tracker.acked, tracker.read)
    assert tracker.missing == {}
    assert unread(tracker.acked, tracker.read) == {}
    assert done_at < history[-1]["time"]  # the runner could have stopped before the time limit


def test_threads_left_without_keys_only_crash_their_old_process_and_then_idle() -> None:
    opts = QueueOptions(key_count=1, max_writes_per_key=10_000, weights={"send": 1, "poll": 1})
    history = simulate(queue_plan(opts, rate=50, time_limit_s=2, quiet_s=1,
                                  final_time_limit_s=2),
                       concurrency=4, seed=3, outcome_fn=FakeKafka())
    keys = {k for k, _ in sends(history)}
    assert len(keys) == 1
    drain = [op for op in invokes(history) if op.get("seek") == "beginning"]
    assert {tuple(op["value"]) for op in drain} == {tuple(keys)}
    readers = {op["process"] for op in drain}
    assert len(readers) == 1
    first = drain[0]["index"]
    idle = {op["process"] for op in invokes(history, "poll", "assign") if op["index"] > first}
    assert idle == readers  # the three threads with no key never poll in the drain


def test_the_drain_stays_incomplete_while_a_write_is_missing() -> None:
    history_ops: list[Op] = [
        {"type": "ok", "f": "send", "value": [["send", "t0-0", [0, 1]], ["send", "t0-0", 2]]},
        {"type": "ok", "f": "poll", "value": [["poll", {"t0-0": [[0, 1]]}]]},
        {"type": "info", "f": "poll", "value": [["poll", {"t0-0": [[1, 2]]}]]},
        {"type": "ok", "f": "txn", "value": [["send", "t0-1", [0, 7]], ["poll", {}]]},
    ]
    tracker = DrainTracker()
    for op in history_ops:
        tracker = tracker.observe(op)
    assert not tracker.complete  # value 2 was read only by an info op; 7 never
    assert unread(tracker.acked, tracker.read) == {"t0-0": {2}, "t0-1": {7}}
    assert tracker.missing == {"t0-0": {2}, "t0-1": {7}}
    tracker = tracker.observe({"type": "ok", "f": "poll",
                               "value": [["poll", {"t0-0": [[1, 2]], "t0-1": [[0, 7]]}]]})
    assert tracker.complete


@pytest.mark.parametrize(
    ("acked", "read", "complete"),
    [
        pytest.param({}, {}, True, id="nothing-acked"),
        pytest.param({"a": [1, 2]}, {"a": [2, 1, 3]}, True, id="all-read-plus-more"),
        pytest.param({"a": [1, 2]}, {"a": [1]}, False, id="one-missing"),
        pytest.param({"a": [1], "b": [5]}, {"a": [1]}, False, id="key-never-read"),
        pytest.param({"a": []}, {}, True, id="empty-key"),
    ],
)
def test_drain_complete(acked: dict[str, list[int]], read: dict[str, list[int]],
                        complete: bool) -> None:
    assert drain_complete(acked, read) is complete


def test_an_empty_run_has_nothing_to_drain() -> None:
    assert Drain().op(_ctx()) is None


def _ctx() -> Any:
    return Context(0, (0,), frozenset({0}), {0: 0})


def test_the_drain_must_read_everything_again_itself() -> None:
    tracker = DrainTracker()
    for op in (
        {"type": "ok", "f": "send", "value": [["send", "t0-0", [0, 1]]]},
        {"type": "ok", "f": "poll", "value": [["poll", {"t0-0": [[0, 1]]}]]},
    ):
        tracker = tracker.observe(op)
    assert tracker.complete and tracker.unread_count() == 0
    drain = tracker.reread()  # what earlier polls saw does not count any more
    assert not drain.complete and drain.unread_count() == 1
    drain = drain.observe({"type": "ok", "f": "poll", "value": [["poll", {"t0-0": [[0, 1]]}]]})
    assert drain.complete


ops_strategy = st.lists(
    st.tuples(
        st.sampled_from(["send", "poll", "txn", "assign"]),
        st.sampled_from(["ok", "ok", "fail", "info"]),
        st.lists(st.tuples(st.sampled_from(["t0-0", "t0-1", "t1-0"]), st.integers(0, 40)),
                 max_size=5),
        st.booleans(),  # ask the tracker (complete) after this op
    ),
    max_size=60,
)


@given(ops=ops_strategy, fold_every=st.integers(1, 8), reread_at=st.integers(0, 60))
@settings(max_examples=150, deadline=None)
def test_the_batched_tracker_agrees_with_the_sets_computed_op_by_op(
    ops: list[tuple[str, str, list[tuple[str, int]], bool]], fold_every: int, reread_at: int,
) -> None:
    """Folding many completions at once (and from wherever the last question left it)
    gives exactly the acked, read and missing sets of a plain op-by-op model."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(drain, "FOLD_EVERY", fold_every)
        check_tracker(ops, reread_at)


def check_tracker(ops: list[tuple[str, str, list[tuple[str, int]], bool]],
                  reread_at: int) -> None:
    tracker = DrainTracker()
    acked: dict[str, set[int]] = {}
    read: dict[str, set[int]] = {}
    for i, (f, kind, items, ask) in enumerate(ops):
        if i == reread_at:
            tracker, read = tracker.reread(), {}
        if f == "poll":
            by_key: dict[str, list[list[int]]] = {}
            for key, v in items:
                by_key.setdefault(key, []).append([0, v])
            value: Any = [["poll", by_key]]
        else:
            value = [["send", key, [0, v] if j % 2 else v] for j, (key, v) in enumerate(items)]
        before, acked_before = tracker, (dict(tracker.acked) if ask else None)
        tracker = tracker.observe({"type": kind, "f": f, "value": value})
        if kind == "ok" and f in ("send", "txn"):
            for key, v in items:
                acked.setdefault(key, set()).add(v)
        if kind == "ok" and f == "poll":
            for key, v in items:
                read.setdefault(key, set()).add(v)
        if ask:
            missing = {k: vs - read.get(k, set()) for k, vs in acked.items()}
            assert tracker.complete is not any(missing.values())
            assert tracker.unread_count() == sum(map(len, missing.values()))
        if acked_before is not None:  # a tracker is a value: observing never changes it
            assert before.acked == acked_before
    missing = {k: vs - read.get(k, set()) for k, vs in acked.items()}
    assert {k: set(v) for k, v in tracker.acked.items()} == {k: v for k, v in acked.items() if v}
    assert {k: set(v) for k, v in tracker.missing.items()} == {k: v for k, v in missing.items()
                                                               if v}


def poll_of(key: str, *records: tuple[int, int]) -> Op:
    return {"process": 1, "type": "ok", "f": "poll",
            "value": [["poll", {key: [list(r) for r in records]}]]}


def send_of(key: str, *values: int) -> Op:
    return {"process": 0, "type": "ok", "f": "send",
            "value": [["send", key, [None, v]] for v in values]}


def test_a_key_counts_as_read_to_its_end_once_a_read_returned_the_offset_below_it() -> None:
    tracker = DrainTracker().observe(send_of("t0-0", 1, 2, 3)).reread()
    assert tracker.unread_keys() == {"t0-0"}
    assert not tracker.read_to({"t0-0": 3})  # nothing read yet
    tracker = tracker.observe(poll_of("t0-0", (0, 1), (1, 3)))  # value 2 is in no log
    assert tracker.reached == {"t0-0": 1} and tracker.unread_keys() == {"t0-0"}
    assert tracker.read_to({"t0-0": 2})
    assert not tracker.read_to({"t0-0": 3}), "offset 2 may still hold the value"
    assert not tracker.read_to({"t0-0": None}), "an end not known is never reached"
    assert not tracker.read_to({}), "nor is a missing one"


def test_only_keys_with_values_unread_need_their_end() -> None:
    tracker = (DrainTracker().observe(send_of("t0-0", 1)).observe(send_of("t0-1", 2))
               .reread().observe(poll_of("t0-1", (0, 2))))
    assert tracker.unread_keys() == {"t0-0"}
    assert tracker.read_to({"t0-0": 0}), "an empty log: nothing to read of it"
    assert not tracker.read_to({"t0-1": 1})


def test_the_drain_reaches_only_what_it_reads_itself() -> None:
    before = DrainTracker().observe(send_of("t0-0", 1)).observe(poll_of("t0-0", (5, 9)))
    assert before.reached == {"t0-0": 5}
    assert before.reread().reached == {}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a-0", "a-1"]), st.integers(0, 30)), max_size=40),
       st.dictionaries(st.sampled_from(["a-0", "a-1"]),
                       st.one_of(st.none(), st.integers(0, 32))))
def test_read_to_is_every_unread_key_read_to_the_offset_below_its_end(
        reads: list[tuple[str, int]], ends: dict[str, int | None]) -> None:
    tracker = DrainTracker().observe(send_of("a-0", -1)).observe(send_of("a-1", -2)).reread()
    for i in range(0, len(reads), 3):  # a few records per poll, unordered across polls
        batch = reads[i:i + 3]
        for key in {k for k, _ in batch}:
            tracker = tracker.observe(poll_of(key, *[(o, o + 100) for k, o in batch if k == key]))
    top = {k: max(o for kk, o in reads if kk == k) for k, _ in reads}
    expected = all(ends.get(k) is not None and top.get(k, -1) >= ends[k] - 1  # type: ignore[operator]
                   for k in ("a-0", "a-1"))
    assert tracker.read_to(ends) == expected
