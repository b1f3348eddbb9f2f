"""The run directory of results/LAYOUT.md: names, JSON files, the ``latest`` link."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.base.rundir import RunDir, iso, read_json, timestamp

WHEN = datetime(2026, 11, 21, 3, 15, 1, 123456, tzinfo=UTC)


def test_timestamps_follow_the_layout() -> None:
    assert timestamp(WHEN) == "20261121T031501.123Z"
    assert iso(WHEN) == "2026-11-21T03:15:01.123Z"


def test_create_makes_the_directory_with_nodes(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "results", "queue-acks-all", WHEN)
    assert run.path == tmp_path / "results" / "queue-acks-all" / "20261121T031501.123Z"
    assert run.nodes.is_dir()
    assert run.history.name == "history.jsonl" and run.log.name == "insync.log"


def test_two_runs_in_one_millisecond_both_kept(tmp_path: Path) -> None:
    a = RunDir.create(tmp_path, "t", WHEN)
    b = RunDir.create(tmp_path, "t", WHEN)
    assert a.path != b.path and a.path.is_dir() and b.path.is_dir()


@pytest.mark.parametrize(
    "name", ["", "a/b", "latest", ".."], ids=["empty", "slash", "latest", "dotdot"]
)
def test_unusable_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError):
        RunDir.create(tmp_path, name, WHEN)


def test_json_files_are_written_whole(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "t", WHEN)
    run.write_test({"name": "t", "seed": 1})
    run.write_results({"valid": True, "run": {"exit_code": 0}})
    assert json.loads(run.test.read_text()) == {"name": "t", "seed": 1}
    assert read_json(run.results)["run"]["exit_code"] == 0
    assert not list(run.path.glob(".*.tmp"))


def test_latest_points_at_the_newest_run_relatively(tmp_path: Path) -> None:
    first = RunDir.create(tmp_path, "a", WHEN)
    link = first.point_latest()
    assert link.resolve() == first.path.resolve()
    second = RunDir.create(tmp_path, "b", WHEN)
    second.point_latest()
    assert link.resolve() == second.path.resolve()
    assert not os.readlink(link).startswith("/")
    moved = tmp_path.parent / (tmp_path.name + "-moved")
    tmp_path.rename(moved)
    assert (moved / "latest").resolve() == (moved / "b" / second.path.name).resolve()
