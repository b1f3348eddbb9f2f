"""``harness.bench._synth``: one simulation, three shapes; valid unless told otherwise.

The checker is the judge throughout: it refuses a malformed or mispaired history,
so a shape that broke HISTORY.md would fail here, and each planted anomaly must
be the one it finds.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers import check_file
from harness.base.faults import fault_names, start_fs, stop_fs
from harness.bench._synth import (
    CHECK,
    INJECTABLE,
    REPORT,
    Shape,
    analyze_shape,
    fault_ops,
    plans,
    simulate,
    write_history,
    write_plan,
    write_run,
)
from harness.bench._synth.kafka import ABORTED, COMMITTED, LOST, MARKER, OPEN, Kafka, Partition
from harness.run.options import read_replay

SHAPES = {
    "check": CHECK,
    "report": REPORT.with_faults(("partition", "kill"), 50_000_000),
    "analyze": analyze_shape(loss=0.0).with_faults(("pause",), 50_000_000),
}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


# -- the in-memory Kafka -----------------------------------------------------------------------


def test_a_read_sees_committed_records_only_and_stops_at_an_open_one() -> None:
    log = Partition()
    for value, state in [(1, COMMITTED), (2, ABORTED), (None, MARKER), (3, LOST),
                         (4, COMMITTED), (5, OPEN), (6, COMMITTED)]:  # fmt: skip
        log.append(value, state)
    assert log.read(0, 10) == ([[0, 1], [4, 4]], 5)  # the open record at 5 is the LSO
    assert log.read(0, 1) == ([[0, 1]], 1)
    assert log.read(5, 10) == ([], 5)


def test_a_transaction_ends_with_one_marker_per_key() -> None:
    kafka = Kafka(["a", "b"])
    slots = [("a", kafka.logs["a"].append(1, OPEN)), ("a", kafka.logs["a"].append(2, OPEN)),
             ("b", kafka.logs["b"].append(3, OPEN))]  # fmt: skip
    kafka.resolve(slots, commit=False)
    assert kafka.logs["a"].states == [ABORTED, ABORTED, MARKER]
    assert kafka.logs["b"].states == [ABORTED, MARKER]


def test_the_drain_starts_where_nobody_read_or_where_a_read_lied() -> None:
    kafka = Kafka(["a"])
    kafka.acknowledge_read("a", 7)
    kafka.acknowledge_read("a", 4)  # a slower reader does not move it back
    assert kafka.unread_from("a") == 7
    kafka.misread("a", 5)
    assert kafka.unread_from("a") == 5


# -- shapes: valid, about the asked size, deterministic ----------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(SHAPES)),
    ops=st.integers(300, 3000),
    seed=st.integers(0, 2**31),
)
def test_every_shape_is_valid_and_about_the_asked_size(
    tmp_path_factory: pytest.TempPathFactory, name: str, ops: int, seed: int
) -> None:
    path = tmp_path_factory.mktemp(name) / "history.jsonl"
    summary = simulate(path, SHAPES[name], ops=ops, seed=seed)
    verdict = check_file(path)
    assert verdict["valid"] is True, (name, seed, verdict["anomaly-types"])
    assert summary.lines == path.read_bytes().count(b"\n")
    assert abs(summary.lines - ops) <= max(60, ops // 10)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_same_seed_same_bytes(tmp_path: Path, name: str) -> None:
    a, b, c = (tmp_path / f"{x}.jsonl" for x in "abc")
    simulate(a, SHAPES[name], ops=2000, seed=4)
    simulate(b, SHAPES[name], ops=2000, seed=4)
    simulate(c, SHAPES[name], ops=2000, seed=5)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_check_shape_has_what_the_benchmark_promises(tmp_path: Path) -> None:
    """Failed sends, write-only transactions (holes in the offsets), no faults, no info."""
    path = tmp_path / "h.jsonl"
    write_history(path, 20_000)
    ops = lines(path)
    completions = Counter((op["f"], op["type"]) for op in ops if op["type"] != "invoke")
    assert completions[("send", "fail")] > 0 and completions[("txn", "ok")] > 0
    assert not any(op["process"] == "nemesis" or op["type"] == "info" for op in ops)
    assert not any(m[0] == "poll" for op in ops if op["f"] == "txn" for m in op.get("value", []))
    # no info ops: every record that landed is in an ok op, so a gap is a marker or an abort
    offsets = sorted(m[2][0] for op in ops if op["type"] == "ok" and op["f"] in ("send", "txn")
                     for m in op["value"] if m[1] == "t0-0")  # fmt: skip
    assert any(b - a > 1 for a, b in itertools.pairwise(offsets)), "no hole"


def test_a_retired_process_never_comes_back(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    simulate(path, SHAPES["report"], ops=5000, seed=9)
    retired: set[int] = set()
    for op in lines(path):
        assert op["process"] not in retired, op
        if op["type"] == "info" and op["process"] != "nemesis":
            retired.add(op["process"])
    assert retired, "no info op: nothing was tested"


@pytest.mark.parametrize("kind", fault_names())
def test_every_registered_fault_kind_can_be_simulated(tmp_path: Path, kind: str) -> None:
    start, stop, *_ = fault_ops(kind)
    assert start in start_fs() and stop in stop_fs()
    path = tmp_path / "h.jsonl"
    simulate(path, REPORT.with_faults((kind,), 20_000_000), ops=1500, seed=1)
    nemesis = [(op["type"], op["f"]) for op in lines(path) if op["process"] == "nemesis"]
    assert nemesis[:4] == [("invoke", start), ("info", start), ("invoke", stop), ("info", stop)]
    assert check_file(path)["valid"] is True


# -- planted anomalies, lost writes --------------------------------------------------------------


@pytest.mark.parametrize("kind", INJECTABLE)
def test_each_planted_anomaly_is_the_one_found(tmp_path: Path, kind: str) -> None:
    run = write_run(tmp_path / "run", ops=6000, seed=3, interval_s=0.5, inject=[kind])
    verdict = check_file(run)
    assert verdict["valid"] is False
    assert kind in verdict["anomaly-types"]
    assert verdict["anomaly-counts"][kind] == 1


def test_nothing_is_planted_without_a_fault(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    simulate(path, replace(CHECK, inject=frozenset(INJECTABLE)), ops=3000, seed=1)
    assert check_file(path)["valid"] is True


def test_an_unknown_anomaly_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot inject"):
        Shape(roles=REPORT.roles, inject=frozenset({"meteor"}))


def test_planned_runs_lose_writes_only_when_unsafe(tmp_path: Path) -> None:
    chosen = plans(96, 3000, seed=7)  # the whole grid: 12 safe combinations
    lossy = next(p for p in chosen if p.loss_rate > 0)
    safe = next(p for p in chosen if p.loss_rate == 0)
    for plan, valid in ((lossy, False), (safe, True)):
        run = write_plan(tmp_path, plan)
        results = json.loads((run / "results.json").read_text())
        assert results["valid"] is valid, plan
        assert ("lost-write" in results["anomaly-types"]) is not valid
        ops = lines(run / "history.jsonl")
        counted = Counter(op["type"] for op in ops if op["process"] != "nemesis")
        starts = sum(1 for op in ops if op["type"] == "info" and op["f"] in start_fs())
        assert results["run"]["ops"] == len(ops)
        assert {t: results["run"][t] for t in ("ok", "fail", "info")} == {
            t: counted[t] for t in ("ok", "fail", "info")}  # fmt: skip
        assert results["run"]["faults"] == starts > 0


def test_plans_spread_over_the_grid_and_nights() -> None:
    chosen = plans(8, 1000, seed=1, nights=2)
    assert len({p.timestamp[:8] for p in chosen}) == 2
    assert len({json.dumps(p.config, sort_keys=True) for p in chosen}) == 8


# -- test.json ---------------------------------------------------------------------------------


def test_a_synthetic_run_records_a_command_insync_run_replays(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", ops=800, seed=11, concurrency=5, faults=["kill"],
                    interval_s=0.25)  # fmt: skip
    test = json.loads((run / "test.json").read_text())
    assert test["synthetic"] is True
    replayed = read_replay(run)
    assert (replayed["seed"], replayed["concurrency"], replayed["nemesis"]) == (11, 5, ["kill"])
    assert replayed["nemesis_interval"] == 0.25


def test_lost_write_and_duplicate_share_one_batch_whose_offsets_skip(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", ops=6000, seed=3, interval_s=0.5,
                    inject=["lost-write", "duplicate"])  # fmt: skip
    verdict = check_file(run)
    assert {"lost-write", "duplicate", "int-send-skip"} <= set(verdict["anomaly-types"])
    lost, duplicate = verdict["anomalies"]["lost-write"][0], verdict["anomalies"]["duplicate"][0]
    assert lost["writer"] == duplicate["writer"]
