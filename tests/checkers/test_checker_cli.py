"""``insync check`` end to end, in-process: exit codes, --json, and malformed input (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


SEND = '{"index": %d, "time": 1, "process": 0, "type": "%s", "f": "send", "value": %s}'
INVOKE = SEND % (0, "invoke", '[["send", "x", 1]]')
OK = SEND % (1, "ok", '[["send", "x", [0, 1]]]')


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        pytest.param([INVOKE, "{not json"], 2, "not JSON", id="not-json"),
        pytest.param([INVOKE, ""], 2, "empty line", id="blank-line"),
        pytest.param(["[1, 2]"], 1, "expected a JSON object", id="not-an-object"),
        pytest.param([INVOKE.replace('"type": "invoke", ', "")], 1, "missing field 'type'",
                     id="missing-field"),
        pytest.param([OK], 1, "no pending invoke", id="completion-without-invoke"),
        pytest.param([INVOKE, INVOKE], 2, "second invoke", id="second-invoke-while-pending"),
        pytest.param([INVOKE, OK.replace('"send", "value"', '"poll", "value"')], 2,
                     "differs from its invoke", id="completion-f-differs"),
        pytest.param([SEND % (0, "invoke", '[["send", "x"]]')], 1, "malformed micro-op",
                     id="short-send-in-invoke"),
        pytest.param([INVOKE, SEND % (1, "ok", '[["send", "x", "one"]]')], 2,
                     "malformed micro-op", id="send-value-not-an-integer"),
        pytest.param([INVOKE, SEND % (1, "ok", '[["poll", [[0, 1]]]]')], 2,
                     "malformed micro-op", id="poll-result-not-a-map"),
        pytest.param([INVOKE, SEND % (1, "done", '[]')], 2, "type must be", id="unknown-type"),
        pytest.param([INVOKE.replace('"process": 0', '"process": "p0"')], 1, "process must be",
                     id="process-not-an-integer"),
        pytest.param([INVOKE, SEND % (1, "ok", "null")], 2, "malformed micro-op",
                     id="ok-completion-without-value"),
    ],
)
def test_malformed_history_exits_3_naming_the_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    lines: list[str],
    line: int,
    message: str,
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["check", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"insync: line {line}: ")
    assert message in err
    assert "Traceback" not in err


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
