"""Where an abandoned op's thread is stuck: real threads blocked in known functions."""

from __future__ import annotations

import logging
import threading
import time
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest
from mem_kafka import MemClient, MemKafka

from harness.base.history_writer import HistoryWriter
from harness.gen import clients, time_limit
from harness.run.interpreter import Interpreter
from harness.run.stuck import OWN, where
from workloads.client import Completed

HERE = "tests/harness/test_run_stuck.py"


def wait_in_a_named_function(gate: threading.Event) -> None:
    gate.wait(30)


def blocked(target: Any, *args: Any) -> tuple[threading.Thread, threading.Event]:
    """A thread in ``target``, held there until the returned event is set."""
    gate = threading.Event()
    thread = threading.Thread(target=target, args=(gate, *args), daemon=True)
    thread.start()
    for _ in range(200):  # until it is inside Event.wait
        if "Condition.wait" in where(thread):
            break
        time.sleep(0.01)
    return thread, gate


def test_it_names_the_own_function_its_line_and_the_innermost_frame() -> None:
    thread, gate = blocked(wait_in_a_named_function)
    try:
        line = where(thread)
    finally:
        gate.set()
        thread.join(5)
    first, innermost = line.split("; innermost ")
    assert first.startswith(f"in wait_in_a_named_function ({HERE}:")
    assert first.endswith(": gate.wait(30))")  # the source line of the call that blocks
    assert innermost.startswith("Condition.wait (threading:")


def test_it_names_the_callers_outward_up_to_its_depth() -> None:
    def outer(gate: threading.Event) -> None:
        middle(gate)

    def middle(gate: threading.Event) -> None:
        wait_in_a_named_function(gate)

    thread, gate = blocked(outer)
    try:
        three, two = where(thread), where(thread, depth=2)
    finally:
        gate.set()
        thread.join(5)
    names = [part.split(" (")[0] for part in three.split("; ")[0].removeprefix("in ").split(
        " <- ")]
    assert names == ["wait_in_a_named_function",
                     "test_it_names_the_callers_outward_up_to_its_depth.<locals>.middle",
                     "test_it_names_the_callers_outward_up_to_its_depth.<locals>.outer"]
    assert two.count(" <- ") == 1


def test_a_thread_that_finished_or_never_started_has_no_frame_and_says_so() -> None:
    thread = threading.Thread(target=lambda: None)
    assert where(thread) == "its thread never started"
    thread.start()
    thread.join(5)
    assert where(thread) == "its thread has no frame: it finished in between"


def test_it_never_raises() -> None:
    assert where(cast(threading.Thread, object())).startswith("where unknown (AttributeError")


def test_own_code_is_the_packages_pyproject_ships_and_the_tests() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert set(OWN) == {p.removesuffix("*") for p in shipped} | {"tests"}


def stuck_in_kafka(release: threading.Event) -> None:
    release.wait(30)


def test_the_interpreter_logs_where_the_op_it_abandons_is_stuck(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    def handler(client: MemClient, op: dict[str, Any]) -> Completed | None:
        if client.process == 0:  # the first process of thread 0 never gets an answer
            stuck_in_kafka(release)
            return Completed("ok", op["value"])
        return None

    kafka = MemKafka()
    history = HistoryWriter(tmp_path / "history.jsonl")
    interp = Interpreter(history=history, concurrency=2, seed=1, start_ns=time.monotonic_ns(),
                         client_factory=lambda thread, process: MemClient(kafka, process,
                                                                          handler),
                         op_timeout_s=0.3)
    interp.start()
    try:
        with caplog.at_level(logging.INFO, logger="insync.run"):
            interp.run(clients(time_limit(1.0, lambda ctx: {"f": "send", "value": [
                ["send", "k", 1]]})))
    finally:
        release.set()
        assert interp.stop(5)
        history.close()
    lines = [r.getMessage() for r in caplog.records if "abandoned" in r.getMessage()]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("thread 0: send 0 abandoned after 0.3 s, in stuck_in_kafka (")
    assert f"({HERE}:" in line and ": release.wait(30))" in line
    assert "<- test_the_interpreter_logs_where_the_op_it_abandons_is_stuck.<locals>.handler" \
        in line
    assert line.split("; innermost ")[1].startswith("Condition.wait (threading:")
