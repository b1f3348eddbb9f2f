"""``insync bench check``: its synthetic history must be valid, or it measures nothing."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from checkers import check_file
from harness.bench import check as bench_check


@pytest.mark.parametrize("ops", [500, 5000], ids=["tiny", "small"])
def test_synthetic_history_is_valid_and_about_the_asked_size(tmp_path: Path, ops: int) -> None:
    path = tmp_path / "h.jsonl"
    lines = bench_check.write_history(path, ops)
    assert abs(lines - ops) <= ops // 10
    assert path.read_bytes().count(b"\n") == lines
    verdict = check_file(path)
    assert verdict["valid"] is True
    assert verdict["anomaly-types"] == []
    assert verdict["stats"]["fail"] > 0  # it does exercise failed sends


def test_measure_reports_both_loops_and_memory(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    bench_check.write_history(path, 2000)
    result = bench_check.measure(path, repeat=1, jobs=1)
    assert result["json_wall_s"] > 0
    assert result["json_cpu_s"] > 0
    assert result["check_wall_s"] > 0
    assert result["check_cpu_s"] > 0
    assert result["peak_rss_bytes"] > 2**20
    assert result["verdict"]["valid"] is True


def test_a_size_is_measured_both_ways_in_fresh_processes(tmp_path: Path) -> None:
    result = bench_check.run_size(3000, tmp_path, repeat=1)
    assert abs(result.ops - 3000) <= 300
    assert result.valid is True
    assert result.ratio > 0
    assert result.single_ratio > 0
    assert result.single_peak_rss_bytes > 2**20
    assert not list(tmp_path.iterdir()), "the history is removed"


def test_sizes_must_be_integers() -> None:
    from harness.base.errors import UsageError

    with pytest.raises(UsageError):
        bench_check.main(argparse.Namespace(sizes="1e6", repeat=1, workdir=None))
