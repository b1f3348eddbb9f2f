"""The run directory of results/LAYOUT.md: names, JSON files, the ``latest`` link, reading back."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.base.errors import HistoryError, UsageError
from harness.base.rundir import RunDir, iso, read_json, timestamp

WHEN = datetime(2026, 11, 21, 3, 15, 1, 123456, tzinfo=UTC)


def test_timestamps_follow_the_layout() -> None:
    assert timestamp(WHEN) == "20261121T031501.123Z"
    assert iso(WHEN) == "2026-11-21T03:15:01.123Z"


def test_create_makes_the_directory_with_nodes(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "results", "queue-acks-all", WHEN)
    assert run.path == tmp_path / "results" / "queue-acks-all" / "20261121T031501.123Z"
    assert run.nodes_path.is_dir() and run.root == tmp_path / "results"
    assert run.history_path.name == "history.jsonl" and run.log_path.name == "insync.log"
    assert (run.test_path.name, run.results_path.name, run.report_path.name) == (
        "test.json", "results.json", "report.html")


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
    assert json.loads(run.test_path.read_text()) == {"name": "t", "seed": 1}
    assert read_json(run.results_path)["run"]["exit_code"] == 0
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


# -- the reading side ----------------------------------------------------------------------


@pytest.fixture
def stored(tmp_path: Path) -> RunDir:
    """A run as ``insync run`` leaves it: a history, test.json and results.json."""
    run = RunDir.create(tmp_path / "results", "t", WHEN)
    run.history_path.write_text(
        '{"index": 0, "time": 0, "process": 0, "type": "invoke", "f": "poll", '
        '"value": [["poll"]]}\n'
        '{"index": 1, "time": 5, "process": 0, "type": "ok", "f": "poll", '
        '"value": [["poll", {}]]}\n'
        '{"index": 2, "time": 9, "proc')  # the harness died writing this line
    run.write_test({"name": "t", "seed": 1, "nemesis": {"faults": ["kill"]}})
    run.write_results({"valid": True, "stats": {"ops": 1}})
    return run


@pytest.mark.parametrize("named", ["directory", "history"])
def test_open_takes_a_run_directory_or_its_history(stored: RunDir, named: str) -> None:
    path = stored.path if named == "directory" else stored.history_path
    assert RunDir.open(path) == stored and RunDir.open(str(path)) == stored


def test_a_stored_run_reads_back(stored: RunDir) -> None:
    run = RunDir.open(stored.path)
    assert [op["index"] for op in run.history()] == [0, 1]  # the cut line is dropped
    assert run.test() == {"name": "t", "seed": 1, "nemesis": {"faults": ["kill"]}}
    assert run.verdict() == {"valid": True, "stats": {"ops": 1}}


def test_a_bare_history_has_no_test_and_no_verdict(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text("{}\n")
    run = RunDir.open(tmp_path)
    assert (run.test(), run.verdict()) == (None, None)


@pytest.mark.parametrize(("make", "what"), [
    (lambda tmp: tmp / "missing", "it does not exist"),
    (lambda tmp: tmp / "file.txt", "it is a file, not a directory"),
    (lambda tmp: tmp / "empty", "has no history.jsonl"),
], ids=["missing", "a-file", "no-history"])
def test_open_says_in_one_line_what_is_not_a_run(
    tmp_path: Path, make: Callable[[Path], Path], what: str
) -> None:
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError) as err:
        RunDir.open(make(tmp_path))
    assert what in err.value.one_line() and "\n" not in err.value.one_line()


@pytest.mark.parametrize("which", ["test", "verdict"])
def test_a_malformed_file_is_a_history_error_naming_it(stored: RunDir, which: str) -> None:
    path = stored.test_path if which == "test" else stored.results_path
    path.write_text("[1, 2]")
    with pytest.raises(HistoryError, match=re.escape(f"{path} must hold a JSON object")):
        getattr(stored, which)()


def test_within_refuses_a_file_linked_out_of_the_results(stored: RunDir, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"name": "secret"}')
    stored.test_path.unlink()
    stored.test_path.symlink_to(outside)
    assert stored.test() == {"name": "secret"}  # a person's own link: followed
    with pytest.raises(HistoryError, match="outside the results directory"):
        stored.test(within=stored.root)
