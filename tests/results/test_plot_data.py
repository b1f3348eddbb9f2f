"""The numbers behind the plots: fault bands, quantiles, throughput, downsampling, lanes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.base.faults import fault_spans
from results.report.history_table import read_table
from results.report.plot_data import (
    assign_lanes,
    bucket_width,
    downsample,
    latency_quantiles,
    nemesis_bands,
    throughput,
)

MS = 1_000_000


def nem(index: int, time: int, f: str, type_: str = "info", value: Any = None) -> dict[str, Any]:
    return {"index": index, "time": time, "process": "nemesis", "type": type_, "f": f,
            "value": value}


def test_start_stop_pairs_become_bands_at_their_completions() -> None:
    ops = [nem(0, 10, "start-partition", "invoke"), nem(1, 12, "start-partition", value="p"),
           nem(2, 50, "stop-partition", "invoke"), nem(3, 55, "stop-partition"),
           nem(4, 60, "kill", "invoke"), nem(5, 61, "kill", value={"n1": 7}),
           nem(6, 90, "start", "invoke"), nem(7, 92, "start")]
    bands = nemesis_bands(ops, end_time=1000)
    assert [(b.kind, b.start, b.stop, b.start_index, b.stop_index, b.open) for b in bands] == [
        ("partition", 12, 55, 1, 3, False), ("kill", 61, 92, 5, 7, False)]
    assert bands[0].label == "partition p"
    assert (bands[0].detail, bands[1].detail) == ('"p"', '{"n1":7}')


def test_unmatched_start_extends_to_the_end_and_stray_stop_is_ignored() -> None:
    ops = [nem(0, 5, "resume"), nem(1, 10, "pause", value=["n2"]),
           nem(2, 20, "pause", value=["n3"]), nem(3, 30, "bump-clock", "invoke")]
    bands = nemesis_bands(ops, end_time=500)
    assert [(b.kind, b.start, b.stop, b.open, b.stop_index) for b in bands] == [
        ("pause", 10, 500, True, None), ("clock-bump", 30, 500, True, None)]
    assert "never stopped" in bands[0].label


def test_one_stop_can_end_several_kinds_and_unknown_ops_are_markers() -> None:
    ops = [nem(0, 1, "bump-clock"), nem(1, 2, "strobe-clock"), nem(2, 3, "start-packet"),
           nem(3, 4, "reset-clock"), nem(4, 6, "stop-packet"), nem(5, 7, "compact-logs")]
    bands = nemesis_bands(ops, end_time=100)
    assert {(b.kind, b.start, b.stop) for b in bands} == {
        ("clock-bump", 1, 4), ("clock-strobe", 2, 4), ("packet", 3, 6), ("compact-logs", 7, 7)}


@pytest.mark.parametrize(("label", "span"), sorted(fault_spans().items()),
                         ids=sorted(fault_spans()))
def test_every_registered_span_becomes_a_band(label: str, span: tuple[str, str]) -> None:
    start, stop = span
    bands = nemesis_bands([nem(0, 1, start), nem(1, 5, stop)], end_time=10)
    assert [(b.kind, b.start, b.stop, b.open) for b in bands] == [(label, 1, 5, False)]


def test_test_json_spans_extend_the_defaults() -> None:
    ops = [nem(0, 1, "break-disk"), nem(1, 9, "fix-disk")]
    assert [(b.kind, b.start, b.stop) for b in nemesis_bands(
        ops, 10, {"disk": ("break-disk", "fix-disk")})] == [("disk", 1, 9)]


def test_bands_of_a_simulated_run_line_up_with_its_nemesis_ops(invalid_run_template: Path) -> None:
    table = read_table(invalid_run_template / "history.jsonl")
    done = [op for op in table.nemesis if op["type"] == "info"]
    bands = nemesis_bands(table.nemesis, table.end_time)
    by_index = {op["index"]: op for op in done}
    starts = [op for op in done if op["f"] in ("start-partition", "kill", "pause", "bump-clock")]
    assert len(bands) == len(starts) > 4
    for band in bands:
        first, last = by_index[band.start_index], by_index[band.stop_index or -1]
        assert (first["time"], last["time"]) == (band.start, band.stop)
        assert first["index"] < last["index"]


def test_quantiles_of_known_data() -> None:
    times = np.array([*range(100), 150, 150, 150, 150])
    lat = np.array([*range(1, 101), 7, 7, 9, 1], dtype=float)
    t, q = latency_quantiles(times, lat, width=100, qs=(0.5, 0.95, 1.0))
    assert t.tolist() == [0, 100]
    assert q[0].tolist() == pytest.approx([50.5, 95.05, 100.0])
    assert q[1].tolist() == pytest.approx([7.0, 8.7, 9.0])


def test_quantiles_leave_empty_buckets_empty_and_match_numpy() -> None:
    rng = random.Random(4)
    times = np.array([rng.randrange(0, 10) for _ in range(500)] + [35])
    lat = np.array([rng.lognormvariate(0, 1) for _ in range(501)])
    t, q = latency_quantiles(times, lat, width=10, qs=(0.5, 0.99))
    assert t.tolist() == [0, 10, 20, 30]
    assert q[0].tolist() == pytest.approx(np.quantile(lat[:500], [0.5, 0.99]).tolist())
    assert np.isnan(q[1]).all() and np.isnan(q[2]).all()
    assert q[3].tolist() == pytest.approx([lat[500]] * 2)


def test_throughput_counts_each_outcome_per_bucket_per_second() -> None:
    times = np.array([0, 1, 5, 10, 12, 25]) * 100 * MS
    outcomes = np.array([0, 0, 1, 0, 2, 0])
    t, rates = throughput(times, outcomes, width=1000 * MS, end=4000 * MS)
    assert t.tolist() == [0, 1000 * MS, 2000 * MS, 3000 * MS]
    assert rates.tolist() == [[2, 1, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]


def test_bucket_width_is_round_and_at_least_a_millisecond() -> None:
    assert bucket_width(60 * 10**9) == 500 * MS
    assert bucket_width(10**6) == MS
    assert bucket_width(7 * 10**9, target_buckets=7) == 10**9


def test_downsampling_keeps_every_anomaly_op_then_preferred_then_a_stride() -> None:
    keep = {3, 99_999, 50_000, 12_345}
    preferred = list(range(0, 100_000, 97))
    rows = downsample(100_000, keep, preferred, max_rows=5_000)
    assert keep <= set(rows.tolist())
    assert set(preferred) <= set(rows.tolist())
    assert len(rows) == 5_000 and np.all(np.diff(rows) > 0)
    assert downsample(10, {2}, [], 100).tolist() == list(range(10))


def test_downsampling_never_drops_kept_rows_even_past_the_budget() -> None:
    keep = set(range(0, 1000, 2))
    rows = downsample(1000, keep, range(1000), max_rows=100)
    assert set(rows.tolist()) == keep


def test_lanes_never_overlap_and_reuse_retired_workers(valid_run_template: Path) -> None:
    table = read_table(valid_run_template / "history.jsonl")
    lanes, n = assign_lanes(table.process, table.start, table.end)
    assert n == 8  # the simulated run's 8 workers; the drain's reader starts after them
    assert len(set(table.process.tolist())) > n  # info ops retired some processes
    for lane in range(n):
        rows = np.flatnonzero(lanes == lane)
        order = rows[np.argsort(table.start[rows], kind="stable")]
        assert np.all(table.start[order][1:] >= table.end[order][:-1])


def test_a_start_that_reported_an_error_is_labelled() -> None:
    ops = [nem(0, 1, "kill", "invoke"), {**nem(1, 2, "kill", value={}), "error": "no such pid"},
           nem(2, 5, "start")]
    (band,) = nemesis_bands(ops, end_time=10)
    assert (band.start, band.stop) == (2, 5)
    assert band.label == "kill (start reported an error)"


def test_history_table_of_a_cut_short_history(tmp_path: Path) -> None:
    lines = [
        {"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "send",
         "value": [["send", "x", 1]]},
        {"index": 1, "time": 5, "process": 1, "type": "invoke", "f": "poll", "value": [["poll"]]},
        {"index": 2, "time": 9, "process": 0, "type": "ok", "f": "send",
         "value": [["send", "x", [3, 1]]]},
        {"index": 3, "time": 10, "process": "nemesis", "type": "info", "f": "start-partition",
         "value": None},
        {"index": 4, "time": 12, "process": 0, "type": "invoke", "f": "send",
         "value": [["send", "x", 2]]},
        {"index": 5, "time": 20, "process": 0, "type": "fail", "f": "send", "error": {"code": 6}},
        {"index": 6, "time": 30, "process": 1, "type": "ok", "f": "poll",
         "value": [["poll", {"x": [[3, 1]], "y": [[0, 7]]}]]},
        {"index": 7, "time": 31, "process": 2, "type": "invoke", "f": "poll",
         "value": [["poll"]]},
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(op) for op in lines) + "\nnot json\n")
    table = read_table(path, keys=["x"])
    assert table.index.tolist() == [2, 5, 6, 7]
    assert table.start.tolist() == [0, 12, 5, 31]
    assert table.end.tolist() == [9, 20, 30, 31]
    assert [table.f_names[f] for f in table.f] == ["send", "send", "poll", "poll"]
    assert table.type.tolist() == [0, 1, 0, 2]  # never completed counts as info
    assert [table.errors[e] if e >= 0 else None for e in table.error] == [
        None, '{"code":6}', None, "never completed"]
    assert table.records == {"x": [(3, 1, 2, "w", 0), (None, 2, 5, "w", 1), (3, 1, 6, "r", 0)]}
    assert [op["f"] for op in table.nemesis] == ["start-partition"]
    assert table.lines == 9
