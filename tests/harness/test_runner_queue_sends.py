"""The real runner with the queue's own generator shape: many-record sends, end to end.

As ``test_runner_workload.py`` does, a workload over the in-memory Kafka
(``tests/support/mem_kafka.py``) is registered beside a fake provisioner, but
its generator is the queue's, shaped by the queue's own options
(``workloads.queue.options.generator_options``): send ops of 1 to
``--sends-per-op`` records, the writer bound per key, stalled keys retired. The
real interpreter, workers, history writer, drain and checker do the rest.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_provisioner import comes_up, install
from mem_kafka import MemClient, fake_workload

from harness.base.contract import parse_key
from harness.run import parse, run
from workloads import WORKLOADS
from workloads.client import Completed
from workloads.queue import options
from workloads.queue.generator import QueueGen
from workloads.queue.options import QueueSettings

pytestmark = pytest.mark.usefixtures("engine")  # a fake docker on PATH: nothing reaches Docker


def queue_shaped(monkeypatch: pytest.MonkeyPatch, handler: Any = None, **shape: Any) -> None:
    """Register ``fake``: the in-memory Kafka driven by the queue's generator."""
    workload, _ = fake_workload(handler) if handler else fake_workload()
    settings = QueueSettings(sends_per_op=8, max_writes_per_key=120)
    gen = replace(options.generator_options(settings), **shape)
    shaped = replace(workload, generator=lambda s: QueueGen.start(gen))
    monkeypatch.setitem(WORKLOADS, "fake", shaped)


def flags(tmp_path: Path, *more: str) -> list[str]:
    return ["--workload", "fake", "--results-dir", str(tmp_path / "results"),
            "--time-limit", "2", "--rate", "100", "--quiet-time", "0",
            "--final-time-limit", "10", "--concurrency", "4", "--seed", "2", *more]


def history(result: Any) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in result.run_dir.history_path.read_bytes().splitlines()]


def test_many_record_sends_are_recorded_drained_and_judged_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, comes_up)
    queue_shaped(monkeypatch)
    result = run(parse(flags(tmp_path)), say=lambda _: None, live=False)
    assert (result.exit_code, result.verdict["valid"]) == (0, True), result.verdict
    assert result.summary["drain_complete"] is True
    ops = history(result)
    sends = [op for op in ops if op["f"] == "send" and op["type"] == "ok"]
    sizes = Counter(len(op["value"]) for op in sends)
    assert max(sizes) > 1 and set(sizes) <= set(range(1, 9))
    assert all(len({m[1] for m in op["value"]}) == 1 for op in sends)
    assert result.summary["acked_sends"] == sum(len(op["value"]) for op in sends)
    offsets: dict[str, list[int]] = {}
    for op in sends:
        for _, key, (offset, _value) in op["value"]:
            offsets.setdefault(key, []).append(offset)
    for key, seen in offsets.items():  # one op's records sit in order, no offset twice
        assert len(seen) == len(set(seen)), key


def test_a_stalled_partition_holds_one_thread_and_the_others_keep_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sends to partition 0 of every topic hang until the op times out (1 s here)."""

    def stall_partition_zero(client: MemClient, op: dict[str, Any]) -> Completed | None:
        if op["f"] == "send" and parse_key(op["value"][0][1])[1] == 0:
            time.sleep(1.0)
            return Completed("info", op["value"], "no delivery report after 1s")
        return None

    install(monkeypatch, comes_up)
    queue_shaped(monkeypatch, stall_partition_zero, stall_ns=200_000_000, max_writes_per_key=24)
    result = run(parse(flags(tmp_path, "--time-limit", "3")), say=lambda _: None, live=False)
    assert result.verdict["valid"] is True, result.verdict
    ops = history(result)
    stalled = [op for op in ops if op["f"] == "send" and op["type"] == "invoke"
               and parse_key(op["value"][0][1])[1] == 0]
    assert stalled, "the run did meet the stalled partition"
    writers: Counter[str] = Counter()
    for op in ops:
        if op["f"] == "send" and parse_key(key := op["value"][0][1])[1] == 0:
            writers[key] += 1 if op["type"] == "invoke" else -1
            # a fresh key takes one writer until a send to it succeeds: these never do
            assert writers[key] <= 1, op
    half_seconds = Counter(op["time"] // 500_000_000 for op in ops
                           if op["f"] == "send" and op["type"] == "ok" and op["time"] < 3e9)
    assert all(half_seconds[i] > 0 for i in range(6)), half_seconds
