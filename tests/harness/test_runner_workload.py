"""The runner finds its workload in the registry and uses nothing else (no Docker, no Kafka).

A fake workload built from a handler function (``tests/support/mem_kafka.py``)
is registered in ``workloads.WORKLOADS`` beside a fake provisioner
(``tests/support/fake_provisioner.py``); ``insync run --workload fake`` then
runs the whole lifecycle on an in-memory Kafka: options, test.json, the
workload's setup, an interpreter whose clients the workload makes, the phases,
the workload's checker, its teardown. The queue is registered too, poisoned:
the runner must never touch it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_provisioner import comes_up, install
from mem_kafka import MemClient, fake_workload

from harness.base.errors import UsageError
from harness.run import parse, run
from workloads import WORKLOADS
from workloads.client import Completed
from workloads.protocol import RunEnv

pytestmark = pytest.mark.usefixtures("engine")  # a fake docker on PATH: nothing reaches Docker


def poisoned(env: RunEnv, settings: Any) -> Any:
    raise AssertionError("the runner opened the queue workload for a --workload fake run")


def flags(tmp_path: Path, *more: str) -> list[str]:
    return ["--workload", "fake", "--results-dir", str(tmp_path / "results"),
            "--cluster-name", "mine", "--time-limit", "1", "--rate", "300",
            "--quiet-time", "0.2", "--final-time-limit", "5", "--concurrency", "3",
            "--seed", "5", *more]


def test_the_runner_runs_a_registered_workload_from_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provisioner = install(monkeypatch, comes_up)
    seen: list[str] = []

    def handler(client: MemClient, op: dict[str, Any]) -> Completed | None:
        seen.append(op["f"])
        return None  # then behave like Kafka

    workload, state = fake_workload(handler)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    monkeypatch.setitem(WORKLOADS, "queue", replace(WORKLOADS["queue"], open=poisoned))
    said: list[str] = []
    result = run(parse(flags(tmp_path)), say=said.append, live=False)

    assert (result.exit_code, result.verdict["valid"]) == (0, True), (said, result.verdict)
    [session] = state.runs
    assert session.calls == ["setup", "teardown"]  # the cluster stays: its topics go
    assert session.env.bootstrap == "127.0.0.1:9" and session.env.token.startswith("i")
    assert session.env.replication_factor == 3
    assert session.env.topic_config == {"min.insync.replicas": "2",
                                        "unclean.leader.election.enable": "false"}
    assert {thread for thread, _ in session.clients} == {0, 1, 2}  # every worker's client
    assert {"send", "poll", "assign", "crash"} <= set(seen)
    summary = result.summary
    assert [p for p in summary["phase_times"] if p in ("main", "quiet", "drain")] == [
        "main", "quiet", "drain"]
    assert summary["drain_complete"] is True and summary["unread_after_drain"] == 0
    test = json.loads((result.run_dir.path / "test.json").read_text())
    assert test["name"] == "fake" and result.run_dir.path.parent.name == "fake"
    assert test["workload"]["name"] == "fake" and test["workload"]["fake"] is True
    assert "partitions_per_topic" not in test["workload"]  # the queue's block is the queue's
    ops = [orjson.loads(line) for line in result.run_dir.history_path.read_bytes().splitlines()]
    sent = {mop[1] for op in ops if op["type"] == "ok" and op["f"] == "send"
            for mop in op["value"]}
    assert sent and sent <= set(state.kafka.logs)
    assert provisioner.touched() == []  # kept: no down


def test_the_workloads_checker_judges_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, comes_up)
    workload, state = fake_workload()
    state.kafka.lose = {3}  # acknowledged, never stored
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    result = run(parse(flags(tmp_path, "--final-time-limit", "1")), say=lambda _: None,
                 live=False)
    assert (result.exit_code, result.verdict["valid"]) == (1, False)
    assert set(result.verdict["bad-anomaly-types"]) & {"lost-write", "unseen"}
    assert result.summary["drain_complete"] is False


def test_an_unregistered_workload_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        parse(flags(tmp_path))  # "fake" is not registered here
    assert "--workload must be one of queue, eos, got 'fake'" in err.value.one_line()


def test_every_run_reports_its_coverage_writes_its_report_and_prints_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.run.summary import render

    install(monkeypatch, comes_up)
    workload, _state = fake_workload(lambda client, op: None)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    said: list[str] = []
    result = run(parse(flags(tmp_path)), say=said.append, live=False)

    cov = result.summary["coverage"]
    ops = [orjson.loads(line) for line in result.run_dir.history_path.read_bytes().splitlines()]
    acked = sum(1 for op in ops if op["type"] == "ok" and op["f"] == "send"
                for mop in op["value"] if mop[0] == "send")
    assert 0 < cov["acked_sends_main"] <= cov["acked_sends"] == acked
    # the main phase up to --time-limit 1, not the ops completing after it
    assert 0.9 <= cov["main_s"] <= 1.0
    assert cov["live_seconds"] >= 1
    stored = json.loads(result.run_dir.results_path.read_text())["run"]["coverage"]
    assert stored == cov
    assert result.report == result.run_dir.path / "report.html" and result.report.is_file()
    assert list(result.run_dir.path.glob("*.png"))
    text = render(result)
    assert "coverage:" in text and f"report: {result.report}" in text
    assert any(line.startswith("workload 'fake' set up (") for line in said), said


def test_a_report_that_cannot_be_written_changes_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import results.report.write

    def broken(run_dir: Path, *, pngs: bool = True) -> Path:
        raise OSError("disk full")

    install(monkeypatch, comes_up)
    workload, _state = fake_workload(lambda client, op: None)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    monkeypatch.setattr(results.report.write, "write_report", broken)
    said: list[str] = []
    result = run(parse(flags(tmp_path)), say=said.append, live=False)
    assert (result.exit_code, result.verdict["valid"]) == (0, True)
    assert result.report is None
    assert any("report was not written: disk full" in line for line in said)


class _LoggingNode:
    """A node whose collected server.log holds KAFKA-17507's line."""

    name = "n2"
    remote = None  # nothing the host watch can ask

    def collect_logs(self, dest: Path) -> list[Path]:
        path = dest / self.name / "var_log_kafka_server.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "java.lang.IllegalStateException: Trying to complete a transactional offset "
            "commit for producerId 3 and groupId g0 even though the offset commit record "
            "itself hasn't been appended to the log.\n")
        return [path]


@pytest.mark.parametrize("logs", [True, False], ids=["logs-collected", "no-logs"])
def test_the_run_block_says_what_the_collected_logs_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: bool
) -> None:
    """Scanned after cleanup collected the logs; informational: the verdict is the history's."""
    from fake_provisioner import FakeCluster

    from harness.run.summary import render

    install(monkeypatch, lambda: FakeCluster(nodes={"n2": _LoggingNode()} if logs else {}))
    workload, _state = fake_workload(lambda client, op: None)
    monkeypatch.setitem(WORKLOADS, "fake", workload)
    result = run(parse(flags(tmp_path)), say=lambda _: None, live=False)
    assert (result.exit_code, result.verdict["valid"]) == (0, True)
    stored = json.loads(result.run_dir.results_path.read_text())["run"]
    if not logs:
        assert "log_signatures" not in stored and "broker logs:" not in render(result)
        return
    assert stored["log_signatures"]["KAFKA-17507"]["nodes"] == {"n2": 1}
    assert stored["log_signatures"] == result.summary["log_signatures"]
    assert ("broker logs: KAFKA-17507 (transactional offsets completed early) once, on n2"
            in render(result).splitlines())
