"""``insync check`` end to end, in-process: exit codes, --json, and malformed input (exit 3)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from bad_histories import CASES, POLL, VALID, Bad, line
from history_builder import Hist

from harness.cli import main


def _valid() -> Hist:
    h = Hist()
    h.send(0, "x", 0, 1)
    h.poll(1, {"x": [[0, 1]]})
    return h


def _invalid() -> Hist:
    h = Hist()
    for offset in range(3):
        h.send(0, "x", offset, offset)
    h.poll(1, {"x": [[2, 2]]})
    return h


def test_valid_history_exits_0_with_a_readable_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _valid().write(tmp_path / "h.jsonl")
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.startswith("VALID")


def test_run_directory_means_its_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _invalid().write(tmp_path / "history.jsonl")
    assert main(["check", str(tmp_path), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["valid"] is False


def test_json_is_exactly_one_object_and_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _invalid().write(tmp_path / "h.jsonl")
    assert main(["check", str(path), "--json", "--max-anomalies", "1"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    verdict = json.loads(out)
    assert verdict["bad-anomaly-types"] == ["lost-write", "unseen"]
    assert len(verdict["anomalies"]["lost-write"]) == 1
    assert verdict["anomaly-counts"]["lost-write"] == 2


def test_human_output_explains_each_anomaly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _invalid().write(tmp_path / "h.jsonl")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID: lost-write, unseen.")
    assert (
        "value 0 of x was acknowledged at offset 0 by op 1 (process 0) but no read saw it, "
        "although op 7 (process 1) read offset 2"
    ) in out


def test_nothing_to_judge_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    h = Hist()
    h.nemesis("kill", {"node": "n2"})
    assert main(["check", str(h.write(tmp_path / "h.jsonl"))]) == 2
    assert "UNKNOWN" in capsys.readouterr().out


def test_ww_deps_flag_reaches_the_checker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = Hist()
    h.op(0, "send", [["send", "x", 1], ["send", "y", 2]],
         [["send", "x", [0, 1]], ["send", "y", [1, 2]]])
    h.op(1, "send", [["send", "x", 3], ["send", "y", 4]],
         [["send", "x", [1, 3]], ["send", "y", [0, 4]]])
    h.poll(2, {"x": [[0, 1], [1, 3]], "y": [[0, 4], [1, 2]]})
    path = h.write(tmp_path / "h.jsonl")
    assert main(["check", str(path), "--json", "--ww-deps"]) == 0
    assert json.loads(capsys.readouterr().out)["anomaly-types"] == ["G0"]
    assert main(["check", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["anomaly-types"] == []


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_malformed_history_exits_3_with_one_line_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Bad
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(case.content)
    assert main(["check", str(path)]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1
    assert err.startswith("insync: " if case.line is None else f"insync: line {case.line}: ")
    assert case.message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_last_line_cut_short_is_dropped_with_a_one_line_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    """The harness died writing line 6: lines 1-5 are judged, the pending poll counts as info."""
    path = tmp_path / "h.jsonl"
    path.write_bytes(VALID + line(4, 2, f="poll", value=POLL) + b'{"index": 5, "time": 50')
    assert main(["check", str(path), "--json", "--jobs", jobs]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("insync: warning: line 6 has no final newline")
    verdict = json.loads(captured.out)
    assert verdict["stats"]["ops"] == 5
    assert verdict["stats"]["never-completed"] == 1
    assert verdict["warnings"] == [captured.err.removeprefix("insync: warning: ").strip()]


def test_a_last_line_without_newline_that_is_json_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(VALID.rstrip(b"\n"))
    assert main(["check", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out)["stats"]["ops"] == 4


def test_an_unknown_client_f_is_malformed_not_a_garbage_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's report: a value sent by an op of f "f" and then read was a garbage-read."""
    path = tmp_path / "h.jsonl"
    path.write_bytes(
        line(0, f="f") + line(1, 0, "ok", "f", [["send", "x", [0, 1]]])
        + line(2, 1, f="poll", value=POLL) + line(3, 1, "ok", "poll", [["poll", {"x": [[0, 1]]}]])
    )
    assert main(["check", str(path)]) == 3
    assert capsys.readouterr().err.startswith('insync: line 1: unknown client f "f"')


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda d: d / "missing.jsonl", "cannot read", id="missing-file"),
        pytest.param(lambda d: d, "without history.jsonl", id="directory-without-history"),
        pytest.param(lambda d: (d / "e.jsonl", (d / "e.jsonl").write_text(""))[0], "empty",
                     id="empty-file"),
    ],
)
def test_unreadable_input_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    assert main(["check", str(path)]) == 3
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda d: d / "missing.jsonl", id="missing-file"),
        pytest.param(lambda d: d, id="directory-without-history"),
        pytest.param(lambda d: _bytes(d, gzip.compress(VALID)), id="gzip-file"),
        pytest.param(lambda d: _bytes(d, b'{"index": 0, "ti'), id="only-line-cut-short"),
    ],
)
def test_the_spark_engine_refuses_an_unreadable_file_as_the_memory_engine_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any
) -> None:
    """Before any JVM starts: one line, exit 3, the same words."""
    path = str(make(tmp_path))
    assert main(["check", path]) == 3
    memory = capsys.readouterr().err
    assert main(["check", "--engine", "spark", path]) == 3
    assert capsys.readouterr().err == memory
    assert memory.count("\n") == 1


def _bytes(d: Path, content: bytes) -> Path:
    path = d / "h.jsonl"
    path.write_bytes(content)
    return path


def test_nemesis_lines_are_only_required_to_be_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.jsonl"
    h = _valid()
    h.ops.append({"process": "nemesis", "whatever": [1, 2, 3]})
    h.write(path)
    assert main(["check", str(path)]) == 0


def test_jobs_flag_is_checked_and_does_not_change_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _valid().write(tmp_path / "h.jsonl")
    assert main(["check", str(path), "--json", "--jobs", "1"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["check", str(path), "--json", "--jobs", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == one
    assert main(["check", str(path), "--jobs", "0"]) == 64
    err = capsys.readouterr().err
    assert "--jobs must be 1 or more" in err
    assert err.count("\n") == 1


def test_jobs_above_the_core_count_are_capped_with_a_one_line_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import checkers._check

    asked: list[int | None] = []
    real = checkers._check.chunk_count

    def counting(size: int, *, jobs: int | None = None) -> int:
        asked.append(jobs)
        return real(size, jobs=jobs)

    monkeypatch.setattr(checkers._check, "chunk_count", counting)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    path = _valid().write(tmp_path / "h.jsonl")
    assert main(["check", str(path), "--json", "--jobs", "8"]) == 0
    err = capsys.readouterr().err
    assert err == "insync: note: --jobs 8 is more than the 2 cores here; using 2\n"
    assert asked == [2]
    assert main(["check", str(path), "--json", "--jobs", "2"]) == 0
    assert capsys.readouterr().err == ""
