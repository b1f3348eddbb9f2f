"""``insync analyze`` on bad input, without Spark: bad runs are skipped by name, bad paths refused.

Every run's test.json and results.json is read and shape-checked before Spark
starts, so these tests replace ``spark_session`` with one that fails the test:
a skip or a usage error must never need a JVM.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.bench._synth import plans, write_plan
from harness.cli import main
from results.analysis.ingest import read_runs

STAMP = "20261121T031501.123Z"


@pytest.fixture(scope="module")
def good_run_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished synthetic run: history.jsonl, test.json and results.json."""
    return write_plan(tmp_path_factory.mktemp("runs"), plans(1, 200, seed=4, nights=1)[0])


@pytest.fixture(autouse=True)
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark was started")
    monkeypatch.setattr("checkers.spark.session.spark_session", refuse)


def add_run(root: Path, template: Path, name: str, file: str = "", data: str | bytes = "") -> Path:
    run = Path(shutil.copytree(template, root / name / STAMP))
    if file:
        (run / file).unlink()
        if isinstance(data, bytes):
            (run / file).write_bytes(data)
        else:
            (run / file).write_text(data)
    return run


BAD_RUNS = [
    ("test.json", "[]", "must hold a JSON object, got a list"),
    ("test.json", '{"workload": {"min_insync": "two"}}', "workload.min_insync must be an integer"),
    ("test.json", b"\x00\x01binary", "binary"),
    ("test.json", '{"name": "caf\xe9"}'.encode("latin-1"), "not UTF-8"),
    ("results.json", '"valid"', "got a string"),
    ("results.json", "{}", 'no "valid" field'),
    ("results.json", '{"valid": false, "anomalies": []}', "anomalies must be an object"),
    ("results.json", '{"valid": false, "anomaly-counts": {"lost-write": "1"}}',
     "anomaly-counts.lost-write must be an integer"),
    ("results.json", '{"valid": true, "run": {"duration_s": "long"}}',
     "run.duration_s must be a number"),
    ("results.json", '{"valid": true, "run": {"coverage": {"seconds": "sixty"}}}',
     "run.coverage.seconds must be an integer"),
]
BAD_IDS = ["test-list", "test-field", "test-binary", "test-latin-1", "results-string",
           "results-no-valid", "results-anomalies-list", "results-count-string",
           "results-duration-string", "results-coverage-seconds-string"]


@pytest.mark.parametrize(("file", "data", "what"), BAD_RUNS, ids=BAD_IDS)
def test_a_bad_run_is_skipped_and_the_rest_kept(tmp_path: Path, good_run_template: Path,
                                                file: str, data: str | bytes, what: str) -> None:
    root = tmp_path / "results"
    add_run(root, good_run_template, "good")
    bad = add_run(root, good_run_template, "bad", file, data)
    runs, skipped = read_runs(root)
    assert [r.run_id for r in runs] == [f"good/{STAMP}"]
    assert [s.run_id for s in skipped] == [f"bad/{STAMP}"]
    assert str(bad / file) in skipped[0].why and what in skipped[0].why


def test_analyze_prints_one_skip_line_per_bad_run_before_spark(
    tmp_path: Path, good_run_template: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "results"
    bad = [add_run(root, good_run_template, f"bad{i}", file, data)
           for i, (file, data, _) in enumerate(BAD_RUNS)]
    assert main(["analyze", str(root)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert len(lines) == len(BAD_RUNS) + 1 and lines[-1] == "no finished runs to compare"
    for line, run, (file, _, what) in zip(lines[:-1], bad, BAD_RUNS, strict=True):
        assert line.startswith(f"insync: skipping {run.parent.name}/{STAMP}: ")
        assert str(run / file) in line and what in line and line.endswith(")")
    assert f"skipped {len(BAD_RUNS)} unreadable" in captured.out


def assert_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *names: str) -> None:
    assert main(argv) == 64
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("insync: "), err
    for name in names:
        assert name in err, err


Setup = Callable[[Path], list[str]]


def _out_is_a_file(tmp: Path) -> list[str]:
    (tmp / "out.txt").write_text("keep")
    return ["--out", str(tmp / "out.txt")]


def _out_under_a_file(tmp: Path) -> list[str]:
    (tmp / "out.txt").write_text("keep")
    return ["--out", str(tmp / "out.txt" / "tables")]


def _report_html_is_a_dir(tmp: Path) -> list[str]:
    (tmp / "out" / "report.html").mkdir(parents=True)
    return ["--out", str(tmp / "out")]


def _table_is_a_file(tmp: Path) -> list[str]:
    (tmp / "out").mkdir()
    (tmp / "out" / "runs").write_text("not parquet")
    return ["--out", str(tmp / "out")]


def _out_name_too_long(tmp: Path) -> list[str]:
    return ["--out", str(tmp / ("o" * 300))]


@pytest.mark.parametrize(("setup", "names"), [
    (_out_is_a_file, ["--out", "out.txt", "is a file, not a directory"]),
    (_out_under_a_file, ["--out", "out.txt/tables", "Not a directory"]),
    (_report_html_is_a_dir, ["report.html", "is a directory"]),
    (_table_is_a_file, ["out/runs", "Parquet table"]),
    (_out_name_too_long, ["--out", "too long"]),
], ids=["out-is-a-file", "out-under-a-file", "report-html-is-a-dir", "table-is-a-file",
        "out-name-too-long"])
def test_bad_out_is_refused_before_spark(tmp_path: Path, good_run_template: Path,
                                         capsys: pytest.CaptureFixture[str], setup: Setup,
                                         names: list[str]) -> None:
    root = tmp_path / "results"
    add_run(root, good_run_template, "good")
    assert_usage_error(capsys, ["analyze", str(root), *setup(tmp_path)], *names)
    assert not (tmp_path / "out.txt").exists() or (tmp_path / "out.txt").read_text() == "keep"


@pytest.mark.parametrize(("make", "what"), [
    (lambda tmp: tmp / "missing", "does not exist"),
    (lambda tmp: tmp / "results.txt", "is a file, not a directory"),
    (lambda tmp: tmp / ("r" * 300), "too long"),
    (lambda tmp: tmp / "loop", "symlink loop"),
], ids=["missing", "a-file", "name-too-long", "symlink-loop"])
def test_bad_results_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    make: Callable[[Path], Path], what: str) -> None:
    (tmp_path / "results.txt").write_text("")
    (tmp_path / "loop").symlink_to("loop")
    path = make(tmp_path)
    assert_usage_error(capsys, ["analyze", str(path)], what)
