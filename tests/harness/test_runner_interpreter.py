"""The interpreter and its workers, driven by fake clients built from a handler function.

No Docker: ``MemKafka`` (``tests/support/mem_kafka.py``) is an in-memory log per
key, and each fake client keeps its own consumer positions, as a real consumer
does. A test states what its Kafka does to one op (the handler); the real plan
(the queue workload's phases), interpreter, workers, history writer and checker
do the rest, in real (short) time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from mem_kafka import MemClient, MemKafka, kafka_like

from checkers import check_file
from harness.base.history_writer import HistoryWriter
from harness.run.interpreter import Interpreter
from harness.run.options import RunOptions
from harness.run.plan import DrainFeed, build_plan, drive
from harness.run.stats import Stats
from workloads import WORKLOADS
from workloads.client import Completed


def run_fake(
    tmp_path: Path,
    handler: Callable[[MemClient, dict[str, Any]], Completed | None] = kafka_like,
    kafka: MemKafka | None = None,
    **overrides: Any,
) -> tuple[list[dict[str, Any]], DrainFeed, Stats, MemKafka]:
    settings: dict[str, Any] = {
        "time_limit": 1.0,
        "rate": 500,
        "quiet_time": 0,
        "final_time_limit": 5.0,
        "concurrency": 3,
        "seed": 7,
        "max_writes_per_key": 16,
    }
    settings.update(overrides)
    opts = RunOptions(**settings).validate().resolved()
    mem = kafka or MemKafka()
    path = tmp_path / "history.jsonl"
    history = HistoryWriter(path)
    workload = WORKLOADS[opts.workload]
    feed, stats = DrainFeed(workload.tracker()), Stats()
    interp = Interpreter(
        history=history,
        concurrency=opts.concurrency or 3,
        seed=opts.seed or 0,
        client_factory=lambda thread, process: MemClient(mem, process, handler),
        start_ns=0,
        clock=lambda: __import__("time").monotonic_ns() - START[0],
        observers=(stats.observe, feed.observe),
    )
    START[0] = __import__("time").monotonic_ns()
    interp.start()
    try:
        drive(interp, build_plan(opts, workload), stats=stats, feed=feed)
    finally:
        assert interp.stop(5)
        history.close()
    ops = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return ops, feed, stats, mem


START = [0]


def test_a_correct_kafka_gives_a_valid_well_formed_history(tmp_path: Path) -> None:
    ops, feed, stats, _ = run_fake(tmp_path)
    assert [op["index"] for op in ops] == list(range(len(ops)))
    times = [op["time"] for op in ops]
    assert times == sorted(times)
    verdict = check_file(tmp_path / "history.jsonl")
    assert verdict["valid"] is True, verdict
    assert stats.ops > 100
    assert feed.complete  # the drain re-read every acknowledged value
    sends = [op for op in ops if op["f"] == "send" and op["type"] == "ok"]
    assert sends and all(isinstance(op["value"][0][2], list) for op in sends)


def test_the_drain_stops_once_everything_is_reread(tmp_path: Path) -> None:
    ops, feed, stats, _ = run_fake(tmp_path, final_time_limit=30.0)
    drain = stats.phase_times["drain"]
    assert drain[1] - drain[0] < 10, "the drain ran to its time limit though all was read"
    assert feed.complete
    assert any(op.get("seek") == "beginning" for op in ops if op["type"] == "invoke")


def test_a_lost_write_keeps_the_drain_going_and_makes_the_run_invalid(tmp_path: Path) -> None:
    mem = MemKafka(lose={5})
    _, feed, stats, _ = run_fake(tmp_path, kafka=mem, final_time_limit=1.5)
    assert not feed.complete and feed.unread() == 1
    drain = stats.phase_times["drain"]
    assert drain[1] - drain[0] >= 1.4
    verdict = check_file(tmp_path / "history.jsonl")
    assert verdict["valid"] is False
    assert set(verdict["bad-anomaly-types"]) & {"lost-write", "unseen"}


def test_an_exception_is_info_and_the_thread_goes_on_as_a_fresh_process(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(client: MemClient, op: dict[str, Any]) -> Completed | None:
        calls["n"] += 1
        if op["f"] == "send" and calls["n"] % 7 == 0:
            raise RuntimeError("broker on fire")
        return None

    ops, _, _, mem = run_fake(tmp_path, handler=flaky)
    infos = [op for op in ops if op["type"] == "info" and op["f"] == "send"]
    assert infos and all("RuntimeError: broker on fire" in op["error"] for op in infos)
    assert all(op["value"] is None for op in infos)  # what it did is unknown, as abandoned
    for op in infos:  # the process never invokes again; its thread does, as process + 3
        later = [o for o in ops if o["index"] > op["index"] and o["type"] == "invoke"]
        assert all(o["process"] != op["process"] for o in later)
        assert any(o["process"] == op["process"] + 3 for o in later)
    assert mem.closed >= len(infos)  # the old client was closed
    assert check_file(tmp_path / "history.jsonl")["valid"] is True


@pytest.mark.parametrize("outcome", ["fail", "info"], ids=["fail-keeps-process", "info-retires"])
def test_failed_polls_and_info_retire_only_on_info(tmp_path: Path, outcome: str) -> None:
    def bad_polls(client: MemClient, op: dict[str, Any]) -> Completed | None:
        if op["f"] == "poll" and client.process % 2 == 0 and op.get("seek") is None:
            return Completed(outcome, op["value"], "poll refused")  # type: ignore[arg-type]
        return None

    ops, _, _, _ = run_fake(tmp_path, handler=bad_polls, final_time_limit=2.0)
    bad = [op for op in ops if op["type"] == outcome and op["f"] == "poll"]
    assert bad
    last_invoke: dict[int, int] = {}  # process -> index of its last invoke (one pass)
    for o in ops:
        if o["type"] == "invoke":
            last_invoke[o["process"]] = o["index"]
    again = [last_invoke.get(op["process"], -1) > op["index"] for op in bad]
    if outcome == "fail":  # the process goes on (its very last op may be the run's last)
        assert sum(again) >= len(bad) - 3
    else:
        assert not any(again)


def test_a_reset_retires_the_process_even_after_fail(tmp_path: Path) -> None:
    def resets(client: MemClient, op: dict[str, Any]) -> Completed | None:
        if op["f"] == "poll" and client.process == 1:
            return Completed("fail", op["value"], "could not seek back", reset=True)
        return None

    ops, _, _, _ = run_fake(tmp_path, handler=resets)
    first = next(op for op in ops if op["process"] == 1 and op["type"] == "fail")
    assert not any(o["process"] == 1 and o["index"] > first["index"] for o in ops)


def test_crash_ops_close_the_client_and_complete_info(tmp_path: Path) -> None:
    ops, _, _, mem = run_fake(tmp_path)
    crashes = [op for op in ops if op["f"] == "crash" and op["type"] != "invoke"]
    assert crashes and all(op["type"] == "info" for op in crashes)
    assert mem.closed >= len(crashes)


@dataclass
class FakeNemesis:
    """Records what it was asked; ``start-kill`` fails the way a broken fault would."""

    asked: list[str] = field(default_factory=list)

    def fs(self) -> frozenset[str]:
        return frozenset({"start-pause", "stop-pause", "start-kill"})

    def setup(self, cluster: Any) -> None:
        pass

    def invoke(self, cluster: Any, op: Any) -> dict[str, Any]:
        self.asked.append(op["f"])
        if op["f"] == "start-kill":
            raise RuntimeError("no such process")
        return {"value": {"paused": ["n1"]} if op["f"] == "start-pause" else {"resumed": ["n1"]}}

    def teardown(self, cluster: Any) -> None:
        pass


def test_nemesis_ops_are_recorded_as_invoke_then_info_and_never_raise(tmp_path: Path) -> None:
    from harness.gen import nemesis as on_nemesis

    nem = FakeNemesis()
    path = tmp_path / "history.jsonl"
    history = HistoryWriter(path)
    interp = Interpreter(
        history=history,
        concurrency=2,
        seed=1,
        nemesis=nem,
        cluster=object(),
        start_ns=__import__("time").monotonic_ns(),
        client_factory=lambda t, p: MemClient(MemKafka(), p, kafka_like),
    )
    interp.start()
    try:
        interp.run(
            on_nemesis(
                [
                    {"f": "start-pause", "value": "one"},
                    {"f": "start-kill", "value": "one"},
                    {"f": "stop-pause", "value": None},
                ]
            )
        )
    finally:
        assert interp.stop(5)
        history.close()
    ops = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert nem.asked == ["start-pause", "start-kill", "stop-pause"]
    assert [(op["process"], op["type"], op["f"]) for op in ops] == [
        ("nemesis", "invoke", "start-pause"),
        ("nemesis", "info", "start-pause"),
        ("nemesis", "invoke", "start-kill"),
        ("nemesis", "info", "start-kill"),
        ("nemesis", "invoke", "stop-pause"),
        ("nemesis", "info", "stop-pause"),
    ]
    assert ops[1]["value"] == {"paused": ["n1"]}
    assert "RuntimeError: no such process" in ops[3]["error"]
