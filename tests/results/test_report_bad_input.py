"""``insync report`` on bad input: one line naming the file, the right exit code, nothing lost.

Each class of bad input a user met (non-integer times and indices, a
results.json or test.json of the wrong shape, an output path that is a
directory, a bad RUN_DIR argument) goes through the real command line.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from checkers import check_file
from harness.bench._synth import write_run
from harness.cli import main

Mutate = Callable[[Path], None]


@pytest.fixture(scope="module")
def small_run_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short run with history.jsonl, test.json and results.json."""
    run = write_run(tmp_path_factory.mktemp("runs") / "queue" / "20261121T031501.123Z",
                    ops=300, seed=2, interval_s=0.2)
    (run / "results.json").write_text(json.dumps(check_file(run)))
    return run


@pytest.fixture
def run(small_run_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(small_run_template, tmp_path / "run"))


def report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["report", *argv])
    err = capsys.readouterr().err
    return code, err


def assert_one_line(err: str, *names: str) -> None:
    """stderr is exactly one ``insync: what (what to do)`` line naming ``names``."""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("insync: ") and err.rstrip().endswith(")"), err  # a hint follows
    for name in names:
        assert name in err, err


def set_field(line: int, field: str, value: Any) -> Mutate:
    def mutate(run: Path) -> None:
        ops = [json.loads(x) for x in (run / "history.jsonl").read_text().splitlines()]
        ops[line][field] = value
        (run / "history.jsonl").write_text("".join(json.dumps(op) + "\n" for op in ops))
    return mutate


BAD_NUMBERS = {"string": "12", "float": 1.5, "null": None, "bool": True, "negative": -5,
               "beyond-int64": 2**64, "list": [1]}


@pytest.mark.parametrize("with_results", [True, False], ids=["with-results", "bare-history"])
@pytest.mark.parametrize("line", [0, 7], ids=["first-line", "later-line"])
@pytest.mark.parametrize("field", ["time", "index"])
@pytest.mark.parametrize("value", list(BAD_NUMBERS.values()), ids=list(BAD_NUMBERS))
def test_history_times_and_indices_must_be_integers(
    run: Path, capsys: pytest.CaptureFixture[str], *, field: str, value: Any, line: int,
    with_results: bool,
) -> None:
    if not with_results:
        (run / "results.json").unlink()
    set_field(line, field, value)(run)
    code, err = report(capsys, str(run))
    assert code == 3
    assert_one_line(err, str(run / "history.jsonl"), f"line {line + 1}:", field)
    assert not (run / "report.html").exists()


@pytest.mark.parametrize(("mutate", "what"), [
    (set_field(3, "process", [1]), "process"),
    (set_field(3, "f", {"x": 1}), "f must be a string"),
    (set_field(3, "type", 5), "type"),
    (lambda run: (run / "history.jsonl").write_bytes(b"\x00\xff\xfe\n" * 40), "line 1: not JSON"),
    (lambda run: (run / "history.jsonl").write_bytes(b"\x00\xff\xfe" * 40), "line 1: not JSON"),
    (lambda run: (run / "history.jsonl").write_bytes(b""), "empty"),
], ids=["process-list", "f-object", "type-int", "binary-history", "binary-one-line", "empty"])
def test_other_malformed_history_lines(run: Path, capsys: pytest.CaptureFixture[str],
                                       mutate: Mutate, what: str) -> None:
    mutate(run)
    code, err = report(capsys, str(run))
    assert code == 3
    assert_one_line(err, str(run / "history.jsonl"), what)


def write(name: str, data: str | bytes) -> Mutate:
    def mutate(run: Path) -> None:
        path = run / name
        path.unlink()
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
    return mutate


def make_dir(name: str) -> Mutate:
    def mutate(run: Path) -> None:
        (run / name).unlink()
        (run / name).mkdir()
    return mutate


def make_fifo(name: str) -> Mutate:
    """A named pipe in a file's place: reading it naively would hang forever."""
    def mutate(run: Path) -> None:
        (run / name).unlink()
        os.mkfifo(run / name)
    return mutate


LOST = '{"valid": false, "anomaly-types": ["lost-write"], '


@pytest.mark.parametrize(("mutate", "what"), [
    (write("results.json", "[]"), "must hold a JSON object, got a list"),
    (write("results.json", '"valid"'), "got a string"),
    (write("results.json", "null"), "got null"),
    (write("results.json", ""), "is empty"),
    (write("results.json", '{"valid": tru'), "is not JSON"),
    (write("results.json", b"\x89PNG\r\n\x1a\n\x00\x00"), "binary"),
    (write("results.json", '{"valid": "\xe9"}'.encode("latin-1")), "not UTF-8"),
    (write("results.json", "{}"), 'no "valid" field'),
    (write("results.json", '{"valid": "maybe"}'), "valid must be"),
    (write("results.json", '{"valid": false, "anomalies": []}'), "anomalies must be an object"),
    (write("results.json", LOST + '"anomalies": {"lost-write": 5}}'),
     "anomalies.lost-write must be a list"),
    (write("results.json", LOST + '"anomalies": {"lost-write": ["x"]}}'),
     "anomalies.lost-write[0] must be an object"),
    (write("results.json", LOST + '"anomaly-counts": {"lost-write": "1"}}'),
     "anomaly-counts.lost-write must be an integer"),
    (write("results.json", '{"valid": false, "anomaly-types": "lost-write"}'),
     "anomaly-types must be a list"),
    (write("results.json", '{"valid": true, "stats": [1]}'), "stats must be an object"),
    (write("results.json", '{"valid": true, "ops": {"3": 7}}'), "ops.3 must be an object"),
    (make_dir("results.json"), "is a directory"),
    (make_fifo("results.json"), "not a regular file"),
], ids=["list", "string", "null", "empty", "truncated", "binary", "latin-1", "no-valid",
        "valid-string", "anomalies-list", "examples-int", "example-string", "count-string",
        "types-string", "stats-list", "op-meta-int", "directory", "fifo"])
def test_results_json_of_the_wrong_shape(run: Path, capsys: pytest.CaptureFixture[str],
                                         mutate: Mutate, what: str) -> None:
    mutate(run)
    code, err = report(capsys, str(run))
    assert code == 3
    assert_one_line(err, str(run / "results.json"), what)


@pytest.mark.parametrize(("mutate", "what"), [
    (write("test.json", "[1, 2]"), "must hold a JSON object, got a list"),
    (write("test.json", '"queue"'), "got a string"),
    (write("test.json", b"\x00\x01\x02"), "binary"),
    (write("test.json", '{"name": "caf\xe9"}'.encode("latin-1")), "not UTF-8"),
    (write("test.json", '{"name": 5}'), "name must be a string"),
    (write("test.json", '{"argv": "insync run"}'), "argv must be a list"),
    (write("test.json", '{"argv": ["insync", 3]}'), "argv[1] must be a string"),
    (write("test.json", '{"nemesis": ["kill"]}'), "nemesis must be an object"),
    (write("test.json", '{"nemesis": {"fault_spans": [1]}}'), "nemesis.fault_spans must be"),
    (write("test.json", '{"nemesis": {"fault_spans": {"kill": ["a", "b", "c"]}}}'),
     "nemesis.fault_spans.kill must be"),
    (write("test.json", '{"workload": {"txn": "yes"}}'), "workload.txn must be true or false"),
    (make_dir("test.json"), "is a directory"),
    (make_fifo("test.json"), "not a regular file"),
], ids=["list", "string", "binary", "latin-1", "name-int", "argv-string", "argv-item-int",
        "nemesis-list", "spans-list", "spans-triple", "txn-string", "directory", "fifo"])
def test_test_json_of_the_wrong_shape(run: Path, capsys: pytest.CaptureFixture[str],
                                      mutate: Mutate, what: str) -> None:
    mutate(run)
    code, err = report(capsys, str(run))
    assert code == 3
    assert_one_line(err, str(run / "test.json"), what)


@pytest.mark.parametrize("name", ["report.html", "timeline.png", "throughput.png"])
def test_an_output_path_that_is_a_directory_is_left_alone(
    run: Path, capsys: pytest.CaptureFixture[str], name: str,
) -> None:
    (run / name).mkdir()
    (run / name / "keep.txt").write_text("mine")
    code, err = report(capsys, str(run))
    assert code == 64
    assert_one_line(err, str(run / name), "is a directory")
    assert (run / name / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("name", ["report.html", "timeline.png"])
def test_an_output_symlink_is_replaced_not_followed(run: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    name: str) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("do not overwrite")
    (run / name).symlink_to(precious)
    code, _ = report(capsys, str(run))
    assert code == 0
    assert precious.read_text() == "do not overwrite"
    assert not (run / name).is_symlink() and (run / name).stat().st_size > 1000


def test_an_example_missing_a_field_is_shown_raw(run: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A hand-edited example the checker's sentence cannot be built from still gets a panel."""
    (run / "results.json").write_text(
        LOST + '"anomalies": {"lost-write": [{"key": "t0-1", "value": 3}]}}')
    code, err = report(capsys, str(run))
    assert (code, err) == (0, "")
    assert "key=t0-1, value=3" in (run / "report.html").read_text()


@pytest.mark.parametrize(("arg", "what"), [
    (lambda tmp: tmp / "missing", "does not exist"),
    (lambda tmp: tmp / "run" / "test.json", "is a file, not a directory"),
    (lambda tmp: tmp / "run" / "test.json" / "x", "parent of it is not a directory"),
    (lambda tmp: tmp / ("a" * 300), "too long"),
    (lambda tmp: tmp / "loop", "symlink loop"),
    (lambda tmp: tmp / "empty", "has no history.jsonl"),
], ids=["missing", "a-file", "under-a-file", "name-too-long", "symlink-loop", "no-history"])
def test_bad_run_dir_argument(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              arg: Callable[[Path], Path], what: str) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "empty").mkdir()
    code, err = report(capsys, str(arg(tmp_path)))
    assert code == 64
    assert_one_line(err, what)
