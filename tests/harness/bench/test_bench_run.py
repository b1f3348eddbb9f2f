"""``harness.bench.run``: its pure parts and its loops on fakes (the real figures need Docker).

The benchmark's numbers come from a real cluster (the lead runs ``insync bench
run``); here its loops run against fake producers built from a few lines, and
the in-memory harness loop runs for real, so a wrong count, a loop that waits
for the wrong records or a run that is not the default one is caught without
Kafka.
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_engine import Engine

from harness.base.errors import UsageError
from harness.bench import run as bench_run
from harness.bench.pairs import bare_loops, interleaved, median_ratio, summed
from harness.bench.run_text import render
from harness.run.options import THREADS_PER_NODE, RunOptions, parse


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench_run.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_measured_run_is_a_default_run_but_for_its_length_and_place() -> None:
    opts = parse(bench_run.run_flags(args())).resolved()
    defaults = RunOptions().resolved()
    assert (opts.nodes, opts.time_limit, opts.cluster_name) == (3, 30.0, "run-bench")
    assert opts.faults == [] and opts.teardown is False  # the bare loops reuse its cluster
    assert opts.concurrency == THREADS_PER_NODE * 3
    for name in ("sends_per_op", "rate", "acks", "idempotence", "max_in_flight",
                 "max_writes_per_key", "txn"):
        assert getattr(opts, name) == getattr(defaults, name), name


def test_run_options_reach_the_run_and_a_malformed_one_is_refused() -> None:
    flags = bench_run.run_flags(args("--run-option", "sends-per-op=64",
                                     "--run-option=--concurrency=5"))
    opts = parse(flags).resolved()
    assert (opts.sends_per_op, opts.concurrency) == (64, 5)
    with pytest.raises(UsageError) as err:
        bench_run.run_flags(args("--run-option", "sends-per-op"))
    assert "not FLAG=VALUE" in err.value.one_line()


@pytest.mark.parametrize(
    "argv",
    [["--run-option", "sends-per-op"], ["--run-option", "sends-per-op=0"],
     ["--run-option", "no-such-option=1"], ["--runs", "0"]],
    ids=["not-flag-value", "out-of-range", "unknown", "no-measured-run"],
)
def test_bad_run_options_are_one_line_before_docker_is_asked(
    argv: list[str], tmp_path: Path, engine: Engine
) -> None:
    with pytest.raises(UsageError):
        bench_run.main(args(*argv, "--results-dir", str(tmp_path / "results")))
    assert engine.calls() == []


def test_send_load_is_littles_law_over_the_send_ops() -> None:
    s = 1_000_000_000
    history = [
        {"process": 0, "type": "invoke", "f": "send", "time": 0, "value": [1, 2, 3, 4]},
        {"process": 1, "type": "invoke", "f": "send", "time": 0, "value": [5, 6]},
        {"process": 2, "type": "invoke", "f": "poll", "time": 0, "value": [["poll"]]},
        {"process": 0, "type": "ok", "f": "send", "time": s, "value": [1, 2, 3, 4]},
        {"process": 1, "type": "info", "f": "send", "time": 2 * s, "value": [5, 6]},
        {"process": 3, "type": "invoke", "f": "send", "time": 0, "value": [7]},  # never ends
    ]
    load = bench_run.send_load(history, seconds=2.0)
    assert load == {"send_ops_in_flight": 1.5, "records_in_flight": 4.0, "records_per_op": 3.0}


class FakeProducer:
    """Queues records; ``poll`` delivers the queue after ``delay`` s. ``room``: queue size
    at which ``produce`` raises BufferError, like librdkafka's full queue."""

    def __init__(self, delay: float = 0.002, room: int | None = None) -> None:
        self.delay, self.room = delay, room
        self.queue: list[Any] = []
        self.most_queued = 0
        self.sizes: list[int] = []
        self.partitions: set[int] = set()
        self.lock = threading.Lock()

    def produce(self, topic: str, *, value: bytes, partition: int, on_delivery: Any) -> None:
        if self.room is not None and len(self.queue) >= self.room:
            raise BufferError("queue full")
        self.queue.append(on_delivery)
        self.partitions.add(partition)
        self.most_queued = max(self.most_queued, len(self.queue))

    def poll(self, timeout: float) -> int:
        if not self.queue:
            return 0
        time.sleep(self.delay)
        callbacks, self.queue = self.queue, []
        for callback in callbacks:
            callback(None, None)
        return len(callbacks)

    def flush(self, timeout: float) -> int:
        self.poll(timeout)
        return 0


def test_the_bare_loop_waits_for_each_ops_records_and_counts_them() -> None:
    made: list[FakeProducer] = []

    def make(i: int) -> FakeProducer:
        made.append(FakeProducer())
        return made[-1]

    loop = bench_run.bare_loop(make, "t", producers=3, sends_per_op=8, seconds=0.3)
    assert len(made) == 3
    assert loop.acked > 3 * 8  # many ops each
    assert loop.seconds == pytest.approx(0.3)
    for producer in made:  # never more than one op's records outstanding per producer
        assert 1 < producer.most_queued <= 8
        assert len(producer.partitions) > 1


def test_the_free_loop_never_waits_but_for_room_in_the_queue() -> None:
    producer = FakeProducer(delay=0.0005, room=500)
    loop = bench_run.free_loop(lambda i: producer, "t", seconds=0.2)
    assert producer.most_queued == 500  # it filled the queue, then served reports
    assert loop.acked > 1000


def test_the_memory_loop_records_many_record_sends() -> None:
    import tempfile
    from pathlib import Path

    opts = parse(["--concurrency", "4"]).resolved()
    with tempfile.TemporaryDirectory() as tmp:
        loop = bench_run.memory_loop(opts, 0.5, Path(tmp))
    assert loop.acked > 100


def test_the_verdict_holds_the_goals_and_renders() -> None:
    loops = {"insync": bench_run.Loop(2500 * 30, 30.0, None),
             "bare": bench_run.Loop(4000 * 30, 30.0, 5.0),
             "ceiling": bench_run.Loop(40_000 * 10, 10.0, 3.0),
             "memory": bench_run.Loop(9000 * 10, 10.0, 9.0, ops=5000, busy=0.93),
             "fake_bare": bench_run.Loop(10_000 * 10, 10.0, 1.0, ops=6000, busy=0.999)}
    verdict = bench_run.verdict(loops)
    assert verdict["ratio"] == 0.625 and verdict["meets_ratio"] and verdict["meets_sends_s"]
    assert verdict["fake_ratio"] == 0.9 and verdict["meets_fake_ratio"]
    slow = bench_run.verdict({**loops, "insync": bench_run.Loop(1500 * 30, 30.0, 1.0),
                              "memory": bench_run.Loop(6000 * 10, 10.0, 9.0)})
    assert not slow["meets_sends_s"] and not slow["meets_ratio"]
    assert slow["fake_ratio"] == 0.6 and not slow["meets_fake_ratio"]
    result = {"nodes": 3, "verdict": verdict, "latency": {"op_ms": 8.0, "record_ms": 0.05},
              "loops": {name: loop.as_dict() for name, loop in loops.items()},
              "run": {"valid": True, "ops": 9, "send_ops_in_flight": 6.1,
                      "records_in_flight": 100.0, "records_per_op": 16.5, "run_dir": "r",
                      "settings": {"concurrency": 12, "sends_per_op": 32, "rate": 1000.0,
                                   "producer": {"linger.ms": 1}}}}
    text = render(result)
    assert "2500 acked sends/s" in text and "ratio insync/bare: 0.625" in text
    assert "NOT met" not in text and "CPU n/a" in text
    assert "500 ops/s, busy share 0.93" in text and "100 us/send" in text
    assert "fake Kafka of 8 ms per request + 0.05 ms per record" in text
    assert "ratio on the fake: 0.9 (goal >= 0.7: met)" in text


def test_each_run_is_judged_against_the_bare_loops_either_side_and_the_median_decides(
) -> None:
    rates = iter([20_000, 9_000, 18_000, 11_000, 22_000, 7_000, 14_000])
    order: list[str] = []

    def loop(kind: str) -> bench_run.Loop:
        order.append(kind)
        return bench_run.Loop(next(rates) * 10, 10.0, 1.0 if kind == "bare" else None)

    pairs = interleaved(lambda: loop("bare"), lambda: loop("insync"), 3)
    assert order == ["bare", "insync", "bare", "insync", "bare", "insync", "bare"]
    assert [round(p.ratio or 0, 3) for p in pairs] == [0.474, 0.55, 0.389]
    assert median_ratio([p.ratio for p in pairs]) == pytest.approx(0.474, abs=1e-3)
    assert [round(b.rate) for b in bare_loops(pairs)] == [20_000, 18_000, 22_000, 14_000]
    assert summed(bare_loops(pairs)).rate == 18_500 and summed(bare_loops(pairs)).cpu_s == 4.0
    assert summed([p.insync for p in pairs]).cpu_s is None
    loops = {"insync": summed([p.insync for p in pairs]), "bare": summed(bare_loops(pairs))}
    # the pooled rates would say 0.487: the median pair decides, not the pool
    assert bench_run.verdict(loops, [p.ratio for p in pairs])["ratio"] == 0.474
    with pytest.raises(ValueError):
        interleaved(lambda: loop("bare"), lambda: loop("insync"), 0)


def test_the_pairs_render_in_the_order_they_ran() -> None:
    loops = {"insync": bench_run.Loop(9000, 1.0, None), "bare": bench_run.Loop(20_000, 1.0, 1.0),
             "ceiling": bench_run.Loop(40_000, 1.0, 1.0),
             "memory": bench_run.Loop(9000, 1.0, 1.0),
             "fake_bare": bench_run.Loop(10_000, 1.0, 1.0)}
    result = {"nodes": 3, "verdict": bench_run.verdict(loops, [0.45, 0.5]),
              "latency": {"op_ms": 8.0, "record_ms": 0.05},
              "loops": {name: loop.as_dict() for name, loop in loops.items()},
              "run": {"valid": True, "ops": 9, "send_ops_in_flight": 6.1,
                      "records_in_flight": 100.0, "records_per_op": 16.5, "run_dir": "r",
                      "bare_sends_s": [20_000, 19_000, 21_000], "insync_sends_s": [8800, 10_000],
                      "pair_ratios": [0.45, 0.5], "settle_sends_s": [], "settle_slice_s": 10.0,
                      "settings": {"concurrency": 12, "sends_per_op": 32, "rate": 1000.0,
                                   "producer": {"linger.ms": 5}}}}
    text = render(result)
    assert "20000 | 8800, 19000 | 10000 | 21000" in text
    assert "either side: 0.45, 0.5 (the ratio is their median)" in text
    assert "ratio insync/bare: 0.475 (goal >= 0.5: NOT met)" in text


def test_a_loop_reports_ops_busy_share_and_cpu_per_send_only_where_known() -> None:
    known = bench_run.Loop(1000, 2.0, 0.5, ops=100, busy=0.8123).as_dict()
    assert known["ops_s"] == 50.0 and known["busy_share"] == 0.812
    assert known["cpu_us_per_send"] == 500.0
    bare = bench_run.Loop(1000, 2.0, None).as_dict()
    assert "ops_s" not in bare and "busy_share" not in bare and bare["cpu_us_per_send"] is None
    assert bench_run.Loop(0, 2.0, 0.5).cpu_us_per_send is None  # no send: no cost per send


def test_the_insync_loop_reads_the_runs_own_main_phase_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    """On the in-memory Kafka (the fake provisioner): the rate is the run's coverage
    figure, the cluster is reported as the run's once it came up."""
    from dataclasses import replace

    from fake_provisioner import comes_up, install
    from mem_kafka import fake_workload

    from workloads import WORKLOADS
    from workloads.queue import options
    from workloads.queue.generator import QueueGen

    install(monkeypatch, comes_up)
    workload, _ = fake_workload()
    shape = options.generator_options(RunOptions(sends_per_op=6))
    monkeypatch.setitem(WORKLOADS, "fake", replace(workload,
                                                   generator=lambda s: QueueGen.start(shape)))
    flags = ["--workload", "fake", "--results-dir", str(tmp_path / "r"), "--time-limit", "1",
             "--rate", "200", "--quiet-time", "0", "--final-time-limit", "5",
             "--concurrency", "3", "--seed", "1", "--cluster-name", "mine"]
    owned: list[str] = []
    loop, opts, facts = bench_run.insync_loop(flags, None, owned)
    assert owned == ["mine"] and opts.concurrency == 3
    assert "valid" in facts and loop.cpu_s is None  # the drain may lag on a busy host
    # the main phase of --time-limit 1, as the run measured it (loose: a loaded host
    # starts and ends phases late; it failed once in a full suite at the tight bounds)
    assert 0.5 < loop.seconds < 10 and loop.acked > 0
    # in flight is rounded to 2 places: sends on the in-memory Kafka take microseconds, so
    # at --rate 200 it can be 0.00 (it was, once, in CI); send_load itself is tested above
    assert 1 <= facts["records_per_op"] <= 6
    assert 0 <= facts["send_ops_in_flight"] <= facts["records_in_flight"] + 0.05
    assert engine.calls() == []


def test_the_bare_loop_settles_once_it_stops_getting_faster() -> None:
    from harness.bench.loops import Loop

    def slices(rates: list[float]) -> Any:
        it = iter(rates)
        return lambda: Loop(int(next(it) * 10), 10.0, None)

    # a fresh cluster measured on 2026-11-22: a slow climb is still a climb
    assert bench_run.settle(slices([3778, 4540, 5360, 5680, 9000, 13000, 13100, 99999])) == \
        [3778, 4540, 5360, 5680, 9000, 13000, 13100]
    # warm already: the least number of slices, as long as none climbs
    assert bench_run.settle(slices([20000, 19000, 20100, 1])) == [20000, 19000, 20100]
    # a noisy dip does not end it early, a new high keeps it going
    assert bench_run.settle(slices([20000, 15000, 21000, 20500, 1])) == \
        [20000, 15000, 21000, 20500]
    # never steady: stops at the cap, every slice on record
    assert bench_run.settle(slices([1000 * 2**i for i in range(10)]), most=4) == \
        [1000, 2000, 4000, 8000]
