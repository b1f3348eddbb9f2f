"""What a person sees: the run's counters, the plain progress line, the final summary."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.base.rundir import RunDir
from harness.run.display import Display, line
from harness.run.runner import RunResult
from harness.run.stats import Stats
from harness.run.summary import render


def test_stats_count_completions_sends_and_faults_in_force() -> None:
    stats = Stats(fault_spans={"partition": ("start-partition", "stop-partition")})
    stats.enter("main", 60)
    stats.observe({"process": 0, "type": "ok", "f": "send", "value": [["send", "t0-0", [0, 1]]]})
    stats.observe(
        {
            "process": 1,
            "type": "ok",
            "f": "txn",
            "value": [["send", "t0-0", [1, 2]], ["poll", {}], ["send", "t0-1", [0, 3]]],
        }
    )
    stats.observe({"process": 2, "type": "fail", "f": "poll", "value": [["poll"]]})
    stats.observe({"process": 3, "type": "info", "f": "crash", "value": None})
    stats.observe({"process": "nemesis", "type": "info", "f": "start-partition", "value": {}})
    snap = stats.snapshot()
    assert (snap["ok"], snap["fail"], snap["info"], snap["acked_sends"]) == (2, 1, 1, 3)
    assert snap["in_force"] == ["partition"] and snap["faults"] == 1
    stats.observe({"process": "nemesis", "type": "info", "f": "stop-partition", "value": {}})
    assert stats.snapshot()["in_force"] == []
    stats.enter("drain", 10)
    times = stats.summary()["phase_times"]
    assert list(times) == ["main", "drain"] and times["main"][1] >= times["main"][0]


def test_plain_progress_lines_when_not_a_terminal() -> None:
    stats = Stats()
    stats.enter("main", 30)
    out = io.StringIO()
    with Display(stats, "t", out=out, interval_s=0.05):
        import time

        time.sleep(0.2)
    text = out.getvalue()
    assert "main" in text and "ops/s" in text and "faults in force: none" in text
    assert "\x1b[" not in text  # no terminal control codes in a log
    assert "left" in line(stats)


def test_summary_names_verdict_anomalies_and_how_to_reproduce(tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "queue", datetime(2026, 11, 21, tzinfo=UTC))
    verdict = {
        "valid": False,
        "anomaly-types": ["G0", "lost-write"],
        "bad-anomaly-types": ["lost-write"],
        "anomalies": {"lost-write": [{"key": "t0-0"}, {"key": "t0-1"}], "G0": [{}]},
    }
    summary = {
        "ops": 10,
        "ok": 8,
        "fail": 1,
        "info": 1,
        "acked_sends": 4,
        "faults": 0,
        "duration_s": 3.5,
        "drain_complete": False,
        "unread_after_drain": 2,
    }
    text = render(RunResult(run_dir, verdict, 1, summary=summary))
    assert text.splitlines()[0] == "verdict: INVALID"
    assert "lost-write: 2" in text and "G0: 1 (informational)" in text
    assert "2 acknowledged value(s) not read again" in text
    assert "end offset" not in text
    assert f"insync run --replay {run_dir.path / 'test.json'}" in text
    ended = render(RunResult(run_dir, verdict, 1, summary={**summary, "drain_read_to_end": True}))
    assert ("2 acknowledged value(s) not read again; every key was read to its end offset: "
            "no consumer can read them") in ended


def test_summary_prefers_the_true_anomaly_counts(tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "queue", datetime(2026, 11, 21, tzinfo=UTC))
    verdict = {
        "valid": False,
        "anomaly-types": ["duplicate"],
        "bad-anomaly-types": ["duplicate"],
        "anomalies": {"duplicate": [{"key": "t0-0"}]},
        "anomaly-counts": {"duplicate": 40},
    }
    assert "duplicate: 40" in render(RunResult(run_dir, verdict, 1))


def test_the_live_panel_draws_without_a_terminal_too() -> None:
    stats = Stats()
    stats.enter("drain", 10)
    out = io.StringIO()
    with Display(stats, "insync run t", out=out, live=True):
        import time

        time.sleep(0.3)
    assert "drain" in out.getvalue() and "ok / fail / info" in out.getvalue()


@pytest.mark.parametrize(("acked", "warned"), [(0, True), (3, False)])
def test_a_valid_run_without_acknowledged_sends_says_it_proved_little(
    tmp_path: Path, acked: int, warned: bool
) -> None:
    run_dir = RunDir.create(tmp_path, "queue", datetime(2026, 11, 21, tzinfo=UTC))
    verdict = {"valid": True, "anomaly-types": [], "bad-anomaly-types": [], "anomalies": {}}
    summary = {"ops": 77, "ok": 46, "fail": 0, "info": 31, "acked_sends": acked, "faults": 7,
               "duration_s": 93.0}
    text = render(RunResult(run_dir, verdict, 0, summary=summary))
    assert ("warning: no send was acknowledged" in text) is warned


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ({"KAFKA-17507": {"count": 3, "nodes": {"n3": 3}, "first": "java.lang...",
                          "where": "n3/var_log_kafka_server.log:1209"}},
         "broker logs: KAFKA-17507 (transactional offsets completed early) 3 times, on n3"),
        ({}, None),
        (None, None),
    ],
    ids=["found", "scanned-none-found", "not-scanned"],
)
def test_summary_names_known_bugs_the_broker_logs_show(
    tmp_path: Path, block: dict[str, object] | None, line: str | None
) -> None:
    """Informational: a VALID verdict stays VALID, with one line saying what the logs show."""
    run_dir = RunDir.create(tmp_path, "eos", datetime(2026, 11, 21, tzinfo=UTC))
    verdict = {"valid": True, "anomaly-types": [], "bad-anomaly-types": [], "anomalies": {}}
    summary: dict[str, object] = {"ops": 5, "ok": 5, "acked_sends": 5, "duration_s": 9.0}
    if block is not None:
        summary["log_signatures"] = block
    lines = render(RunResult(run_dir, verdict, 0, summary=summary)).splitlines()
    assert lines[0] == "verdict: VALID"
    assert [x for x in lines if x.startswith("broker logs:")] == ([line] if line else [])
