"""The drain ends once every key with values unread was read to a settled end offset.

``Settling`` and ``EndWatch.step`` by hand (a fake clock, readers built from a
handler function); then ``drive`` on the real interpreter against an in-memory
Kafka that acknowledged writes it never stored, with and without the watch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from pathlib import Path

from mem_kafka import MemKafka, drive_in_memory

from harness.gen.plan import DRAIN, HEAL
from harness.run.drain_end import EndWatch, Settling, window_s
from harness.run.options import RunOptions
from harness.run.plan import DrainFeed, build_plan
from workloads import WORKLOADS

Ends = Callable[[Collection[str]], dict[str, int | None]]


class Reader:
    """An ``EndOffsetReader`` from a handler function; remembers what it was asked."""

    def __init__(self, handler: Ends) -> None:
        self.handler = handler
        self.asked: list[set[str]] = []
        self.closed = False

    def ends(self, keys: Collection[str]) -> dict[str, int | None]:
        self.asked.append(set(keys))
        return self.handler(keys)

    def close(self) -> None:
        self.closed = True


def test_an_end_counts_once_it_held_for_the_window() -> None:
    s = Settling(window=10.0)
    assert s.look({"a": 5, "b": None}, at=0.0) == {}
    assert s.look({"a": 5, "b": None}, at=9.9) == {}
    assert s.look({"a": 5, "b": None}, at=10.0) == {"a": 5}, "an unknown end never counts"


def test_an_end_that_moves_starts_its_window_again() -> None:
    s = Settling(window=10.0)
    s.look({"a": 5}, at=0.0)
    assert s.look({"a": 7}, at=8.0) == {}  # a follower caught up: the watermark moved
    assert s.look({"a": 7}, at=17.0) == {}
    assert s.look({"a": 7}, at=18.0) == {"a": 7}
    assert s.look({"a": None}, at=19.0) == {}, "a look that failed is not the same end"


def test_the_window_outlasts_a_lagging_follower() -> None:
    assert window_s(5.0) == 10.0 and window_s(30.0) == 60.0 and window_s(1.0) == 10.0


def test_each_look_asks_for_the_keys_still_unread_and_publishes_what_settled() -> None:
    now = [0.0]
    watch = EndWatch(lambda: reader, window=2.0, clock=lambda: now[0])
    reader = Reader(lambda keys: {k: 3 for k in keys})
    watch.step(reader, {"a", "b"})
    now[0] = 2.0
    watch.step(reader, {"a"})
    watch.step(reader, set())  # nothing left to read: no look
    assert reader.asked == [{"a", "b"}, {"a"}] and watch.looks == 2
    assert watch.settled == {"a": 3, "b": 3}


def test_the_thread_closes_its_reader_and_a_reader_that_fails_only_stops_the_looks() -> None:
    reader = Reader(lambda keys: {k: 0 for k in keys})
    watch = EndWatch(lambda: reader, window=0.0, every_s=0.01)
    watch.start(lambda: {"a"})
    deadline = time.monotonic() + 5
    while watch.looks < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    watch.stop()
    assert watch.looks >= 3 and reader.closed and watch.settled == {"a": 0}

    def broken(keys: Collection[str]) -> dict[str, int | None]:
        raise RuntimeError("no broker answers")

    failing = Reader(broken)
    watch = EndWatch(lambda: failing, window=0.0, every_s=0.01)
    watch.start(lambda: {"a"})
    watch.stop()
    assert failing.closed and watch.settled == {}


def drain_seconds(tmp_path: Path, *, watched: bool) -> tuple[float, DrainFeed]:
    """One short run on an in-memory Kafka that acknowledges every 7th value but never
    stores it; the drain phase's length in seconds, and the feed. ``watched``: with an
    ``EndWatch`` whose reader takes each key's end from the in-memory logs."""
    opts = RunOptions(time_limit=1.0, rate=300.0, quiet_time=0.2, final_time_limit=6.0,
                      concurrency=3, seed=1).validate().resolved()
    plan = tuple(p for p in build_plan(opts, WORKLOADS[opts.workload]) if p.name != HEAL)
    kafka = MemKafka(lose=set(range(0, 100_000, 7)))

    def ends(keys: Collection[str]) -> dict[str, int | None]:
        with kafka.lock:
            return {k: len(kafka.logs[k]) if k in kafka.logs else None for k in keys}

    watch = EndWatch(lambda: Reader(ends), window=0.3, every_s=0.05) if watched else None
    feed = DrainFeed(WORKLOADS[opts.workload].tracker(), ends=watch)
    stats = drive_in_memory(kafka, plan, feed, tmp_path / "history.jsonl")
    start, end = stats.phase_times[DRAIN]
    return end - start, feed


def test_a_drain_with_lost_writes_ends_once_read_to_the_ends_not_at_its_limit(
        tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "watched").mkdir()
    # without the watch the drain cannot tell the lost values are nowhere: its whole limit
    slow, plain = drain_seconds(tmp_path / "plain", watched=False)
    assert not plain.complete and not plain.read_to_end and plain.unread() > 0
    assert slow >= 5.5
    fast, feed = drain_seconds(tmp_path / "watched", watched=True)
    assert not feed.complete and feed.read_to_end and feed.unread() > 0
    assert feed.ends is not None and feed.ends.looks > 0
    assert fast < 3.0, f"the drain took {fast:.1f} s of its 6"


def test_read_to_end_is_said_only_of_a_drain_that_left_values_unread() -> None:
    send = {"process": 0, "type": "ok", "f": "send", "value": [["send", "t0-0", [0, 7]]]}
    poll = {"process": 1, "type": "ok", "f": "poll", "value": [["poll", {"t0-0": [[0, 7]]}]]}
    watch = EndWatch(lambda: Reader(lambda keys: {}), window=0.0)
    feed = DrainFeed(WORKLOADS["queue"].tracker(), ends=watch)
    feed.observe(send)
    feed.tracker = feed.tracker.reread()
    feed.started, feed.last_read = True, feed.clock()  # as start() leaves it, no look thread
    watch.settled = {"t0-0": 1}
    assert not feed.read_to_end and not feed.done, "offset 0 not read yet"
    feed.observe(poll)
    assert feed.complete and feed.done and not feed.read_to_end


def test_a_drain_that_reads_nothing_new_for_a_minute_ends_and_a_read_restarts_the_minute(
) -> None:
    send = {"process": 0, "type": "ok", "f": "send", "value": [["send", "t0-0", [0, 7]]]}
    empty = {"process": 1, "type": "ok", "f": "poll", "value": [["poll", {}]]}
    other = {"process": 1, "type": "ok", "f": "poll", "value": [["poll", {"t0-1": [[0, 8]]}]]}
    now = [100.0]
    feed = DrainFeed(WORKLOADS["queue"].tracker(), clock=lambda: now[0])
    feed.observe(send)
    feed.start()
    now[0] = 159.0
    feed.observe(empty)  # a poll that returned nothing is no progress
    assert not feed.idle and not feed.done
    now[0] = 150.0
    feed.observe(other)  # a record, even of a key with nothing unread, is
    now[0] = 209.9
    assert not feed.done
    now[0] = 210.0
    assert feed.idle and feed.done and not feed.complete
    feed.finish()
    assert feed.stopped_idle


def test_a_drain_still_reading_at_the_old_minute_goes_on() -> None:
    """The reason for the idle rule: a drain re-reading a million records needs more than
    the flat 60 s it had, and stopping it made values that were in the log ``unseen``."""
    send = {"process": 0, "type": "ok", "f": "send",
            "value": [["send", "t0-0", [i, i]] for i in range(100)]}
    now = [0.0]
    feed = DrainFeed(WORKLOADS["queue"].tracker(), clock=lambda: now[0])
    feed.observe(send)
    feed.start()
    for i in range(99):
        now[0] = 10.0 * i  # one record every 10 s: 990 s in all
        feed.observe({"process": 1, "type": "ok", "f": "poll",
                      "value": [["poll", {"t0-0": [[i, i]]}]]})
        assert not feed.done
    feed.observe({"process": 1, "type": "ok", "f": "poll",
                  "value": [["poll", {"t0-0": [[99, 99]]}]]})
    assert feed.complete and feed.done and not feed.idle
