"""``harness.bench._fakes`` and the loops on it: the Kafka made of sleeps ``insync bench run``
compares the harness with a bare producer loop on (``--no-kafka`` runs only that part).

Timing is asserted only as a lower bound (a reply never comes before its latency),
or as a share far from the boundary: the host is shared and slow at times.
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
from harness.base.history import ClientPair, pairs, read_history
from harness.bench import run as bench_run
from harness.bench._fakes import Latency, LatentProducer, MemoryClient
from harness.bench.loops import fake_bare_loop, load_of, memory_loop
from harness.run.options import parse


def test_a_request_takes_its_time_plus_a_share_per_record() -> None:
    latency = Latency(8.0, 0.5)
    assert latency.seconds(0) == pytest.approx(0.008)
    assert latency.seconds(10) == pytest.approx(0.013)
    with pytest.raises(ValueError, match=">= 0"):
        Latency(-1.0, 0.0)


def test_the_producer_delivers_a_batch_after_the_latency_and_not_before() -> None:
    producer = LatentProducer(Latency(30.0, 1.0))
    reports: list[float] = []
    t0 = time.monotonic()
    for _ in range(5):
        producer.produce("t", value=b"x", partition=0,
                         on_delivery=lambda err, msg: reports.append(time.monotonic() - t0))
    assert producer.poll(0) == 0 and reports == []  # nothing is due yet
    while len(reports) < 5:
        producer.poll(1.0)
    assert min(reports) >= 0.031 and max(reports) >= 0.035  # op_ms + 1..5 records
    assert producer.flush(1.0) == 0


def test_flush_waits_for_every_report() -> None:
    producer = LatentProducer(Latency(5.0, 0.0))
    delivered: list[Any] = []
    for _ in range(3):
        producer.produce("t", value=b"x", partition=1,
                         on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(5.0) == 0 and delivered == [None, None, None]


def test_the_memory_client_acks_in_log_order_after_the_latency() -> None:
    logs: dict[str, list[int]] = {}
    client = MemoryClient(logs, threading.Lock(), Latency(20.0, 0.0))
    t0 = time.monotonic()
    done = client.invoke({"f": "send", "value": [["send", "t0-1", 7], ["send", "t0-1", 8]]})
    assert time.monotonic() - t0 >= 0.02
    assert (done.type, done.value) == ("ok", [["send", "t0-1", [0, 7]], ["send", "t0-1", [1, 8]]])
    txn = client.invoke({"f": "txn", "value": [["poll"], ["send", "t0-2", 9]]})
    assert txn.value == [["poll", {}], ["send", "t0-2", [0, 9]]]
    assert client.invoke({"f": "poll", "value": [["poll"]]}).value == [["poll", {}]]
    assert client.invoke({"f": "crash", "value": None}).type == "info"
    assert logs == {"t0-1": [7, 8], "t0-2": [9]}


def test_load_sums_each_client_ops_duration_and_leaves_the_nemesis_out() -> None:
    ms = 1_000_000
    history = [
        {"process": 0, "type": "invoke", "f": "send", "time": 0, "value": [1, 2, 3]},
        {"process": 1, "type": "invoke", "f": "poll", "time": 0, "value": [["poll"]]},
        {"process": "nemesis", "type": "invoke", "f": "kill", "time": 0, "value": None},
        {"process": 0, "type": "ok", "f": "send", "time": 10 * ms, "value": [1, 2, 3]},
        {"process": "nemesis", "type": "info", "f": "kill", "time": 900 * ms, "value": None},
        {"process": 1, "type": "ok", "f": "poll", "time": 30 * ms, "value": [["poll", {}]]},
    ]
    load = load_of(history)
    assert (load.ops, load.op_ns, load.send_ops, load.records) == (2, 40 * ms, 1, 3)
    assert load.record_ns == 30 * ms
    assert load.busy(0.1, 2) == pytest.approx(0.2)  # 40 ms inside ops over 2 x 100 ms


def test_the_bare_loop_on_the_fake_keeps_its_threads_inside_ops() -> None:
    loop = fake_bare_loop(Latency(10.0, 0.1), producers=3, sends_per_op=8, seconds=0.5)
    assert loop.ops is not None and loop.ops > 3 * 10
    assert loop.busy is not None and 0.6 < loop.busy <= 1.0
    assert loop.acked >= loop.ops  # 1 to 8 records an op


def test_the_memory_loop_runs_the_runs_main_phase_on_the_fake(tmp_path: Path) -> None:
    """Every send waits at least the fake's latency, the rate is the run's own (each op
    paced at --rate), and the busy share is the history's ops over wall x threads."""
    latency = Latency(15.0, 0.0)
    opts = parse(["--concurrency", "3", "--rate", "100"]).resolved()
    loop = memory_loop(opts, 1.0, tmp_path, latency)
    history = list(read_history(tmp_path / "memory-history.jsonl"))
    sends = [p for p in pairs(history) if isinstance(p, ClientPair) and p.type == "ok"
             and p.invoke["f"] == "send" and p.completion is not None]
    assert sends and all(p.completion["time"] - p.invoke["time"] >= 15_000_000
                         for p in sends if p.completion is not None)
    assert loop.ops == load_of(history).ops and loop.ops is not None
    assert loop.ops <= 100 * loop.seconds + 5  # --rate 100 ops/s in total
    assert loop.busy == pytest.approx(load_of(history).busy(loop.seconds, 3))
    assert loop.acked == sum(len(p.invoke["value"]) for p in sends)


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench_run.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_no_kafka_runs_both_fake_loops_and_never_asks_docker(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    code = bench_run.main(args("--no-kafka", "--ceiling-seconds", "0.5", "--latency-ms", "5",
                               "--run-option", "concurrency=2"))
    out = capsys.readouterr().out
    assert code == 0 and engine.calls() == []
    assert "2 client threads/producers at --rate 1000" in out
    assert "fake Kafka of 5 ms per request" in out and "ratio on the fake:" in out
    assert "harness, fake Kafka" in out and "bare loop, fake Kafka" in out


@pytest.mark.parametrize("flag", ["--latency-ms", "--record-ms"], ids=["request", "record"])
def test_a_negative_latency_is_one_usage_error_before_anything_runs(
    flag: str, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError) as err:
        bench_run.main(args("--no-kafka", flag, "-1"))
    assert ">= 0" in err.value.one_line() and "give 0 or more" in err.value.one_line()
    assert capsys.readouterr().out == "" and engine.calls() == []
