"""An interrupted run never cries wolf: what needs the drain is not judged without one.

A fake provisioner and an in-memory Kafka whose polls return nothing (every
acknowledged value stays unread, so a run whose drain went idle is ``unseen``,
INVALID); the signal comes from a timer thread during the main phase, as a CI
system's cancel would. A drain that ``--final-time-limit`` stops first is cut
short too. The same run directory, checked again with ``insync check``,
gets the same verdict; a bare copy of its history is judged in full.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_provisioner import comes_up, install
from mem_kafka import MemClient, fake_workload

from harness.run import parse, run
from harness.run import runner as runner_module
from harness.run.plan import DrainFeed
from harness.run.runner import RunResult
from harness.run.signals import signals_interrupt
from harness.run.summary import render
from workloads import WORKLOADS
from workloads.client import Completed

pytestmark = pytest.mark.usefixtures("engine")  # a fake docker on PATH: nothing reaches Docker


def reads_nothing(client: MemClient, op: dict[str, Any]) -> Completed | None:
    if op["f"] == "poll":
        return Completed("ok", [["poll", {}]])
    return None


def go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, time_limit: str,
       signum: int | None, *, final_time_limit: str = "1",
       idle_s: float | None = None) -> RunResult:
    install(monkeypatch, comes_up)
    if idle_s is not None:  # a drain that goes idle this soon, not after a minute
        monkeypatch.setattr(runner_module, "DrainFeed", partial(DrainFeed, idle_s=idle_s))
    workload, _ = fake_workload(reads_nothing)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    flags = ["--workload", "fake", "--results-dir", str(tmp_path / "results"),
             "--cluster-name", "mine", "--time-limit", time_limit, "--rate", "200",
             "--quiet-time", "0.1", "--final-time-limit", final_time_limit, "--concurrency", "2",
             "--seed", "3"]
    timer = None
    # a suite started in the background inherits SIGINT ignored (tests/support/ctrl_c.py);
    # a terminal's Ctrl-C reaches a process whose Python handler is in place
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    if signum is not None:
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signum))
        timer.start()
    try:
        return run(parse(flags), say=lambda _: None, live=False)
    finally:
        if timer is not None:
            timer.cancel()
        signal.signal(signal.SIGINT, old_int)


def check(path: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "harness", "check", str(path)],
                          capture_output=True, text=True, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def test_a_run_whose_drain_went_idle_with_values_unread_is_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = go(tmp_path, monkeypatch, "1", None, final_time_limit="20", idle_s=0.5)
    assert result.summary["drain_idle"] is True
    assert (result.exit_code, result.verdict["valid"]) == (1, False), result.verdict
    assert "unseen" in result.verdict["bad-anomaly-types"]
    test = orjson.loads(result.run_dir.test_path.read_bytes())
    assert test["drain_finished"] is True
    assert check(result.run_dir.path)[0] == 1


def test_a_drain_that_final_time_limit_stopped_first_leaves_unseen_unjudged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = go(tmp_path, monkeypatch, "1", None)  # 1 s of drain; idle only after 60 s
    assert not result.summary["drain_idle"] and not result.summary["drain_complete"]
    assert (result.exit_code, result.verdict["valid"]) == (2, "unknown"), result.verdict
    assert result.verdict["not-judged"] == ["unseen"]
    assert "the drain ran out of --final-time-limit" in result.verdict["error"]
    assert result.summary["drain_finished"] is False
    assert orjson.loads(result.run_dir.test_path.read_bytes())["drain_finished"] is False
    assert "drain: did not run to its end" in render(result)
    code, out = check(result.run_dir.path)  # the stored run: the same answer
    assert code == 2 and "unseen: not judged" in out


#: A signal landing while the main thread runs a finaliser has its KeyboardInterrupt
#: printed as "Exception ignored" by Python (pytest reports that as an error of its
#: own); the run stops anyway, through its loop, which is what these tests check.
LOST_INTERRUPT_IS_EXPECTED = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning")


@LOST_INTERRUPT_IS_EXPECTED
def test_a_signal_whose_interrupt_python_loses_still_stops_the_loop() -> None:
    stopped: list[str] = []

    class Finalised:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs inside this finaliser

    with signals_interrupt(on_signal=lambda: stopped.append("loop")) as caught:
        Finalised()  # collected at once: the KeyboardInterrupt is raised in __del__, lost
    assert caught.name == "SIGTERM" and stopped == ["loop"]


@LOST_INTERRUPT_IS_EXPECTED
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_before_the_drain_makes_unseen_unjudged_and_the_verdict_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    result = go(tmp_path, monkeypatch, "30", signum)
    name = signal.Signals(signum).name
    assert result.interrupted and result.signal == name
    assert (result.exit_code, result.verdict["valid"]) == (2, "unknown"), result.verdict
    assert "unseen" not in result.verdict["anomaly-types"]
    assert result.verdict["not-judged"] == ["unseen"]
    assert result.verdict["not-judged-counts"]["unseen"] >= 1  # found, but not judged
    assert f"cut short by {name}" in result.verdict["error"]
    text = render(result)
    assert f"verdict: UNKNOWN (interrupted by {name})" in text
    assert "unseen: not judged" in text
    stored = orjson.loads(result.run_dir.results_path.read_bytes())
    assert stored["run"]["signal"] == name and stored["run"]["drain_finished"] is False
    assert orjson.loads(result.run_dir.test_path.read_bytes())["drain_finished"] is False

    # the stored run, checked again: the same answer, naming the signal
    code, out = check(result.run_dir.path)
    assert code == 2 and f"cut short by {name}" in out and "unseen: not judged" in out
    # the bare history, without the record: judged as any history is
    bare = tmp_path / "bare.jsonl"
    shutil.copy(result.run_dir.history_path, bare)
    assert check(bare)[0] == 1
