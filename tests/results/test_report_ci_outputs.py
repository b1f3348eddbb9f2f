"""JUnit XML, the end-of-check summary, and how ``insync check`` prints and writes them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checkers import ANOMALY_TYPES, check_file
from harness.cli import main
from results.report.junit import junit_xml, write_junit
from results.report.summary import render_summary


def cases(xml: str) -> dict[str, ET.Element]:
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None
    return {c.get("name", ""): c for c in suite.iter("testcase")}


def test_valid_run_passes_every_case(valid_run: Path) -> None:
    xml = junit_xml(check_file(valid_run), "queue/1")
    root = ET.fromstring(xml)
    assert (root.get("failures"), root.get("errors")) == ("0", "0")
    got = cases(xml)
    assert list(got) == ["verdict", *ANOMALY_TYPES]
    assert all(len(c) == 0 for c in got.values())


def test_each_bad_anomaly_type_is_a_failed_case(invalid_run: Path) -> None:
    verdict = check_file(invalid_run)
    got = cases(junit_xml(verdict, "queue/1"))
    failed = {name for name, c in got.items() if c.find("failure") is not None}
    assert failed == set(verdict["bad-anomaly-types"])
    lost = got["lost-write"].find("failure")
    assert lost is not None and lost.text
    assert lost.get("message") == f"{verdict['anomaly-counts']['lost-write']} lost-write anomaly"
    assert str(verdict["anomalies"]["lost-write"][0]["value"]) in lost.text
    info = got["int-send-skip"]
    assert info.find("failure") is None
    out = info.find("system-out")
    assert out is not None and "informational" in (out.text or "")


def test_unknown_verdict_is_an_error_case_with_the_reason(tmp_path: Path) -> None:
    verdict = {"valid": "unknown", "anomaly-types": [], "bad-anomaly-types": [],
               "anomalies": {}, "error": "nothing to judge"}
    path = write_junit(verdict, tmp_path / "sub" / "junit.xml", "empty")
    root = ET.parse(path).getroot()
    assert root.get("errors") == "1"
    err = cases(path.read_text())["verdict"].find("error")
    assert err is not None and err.get("message") == "unknown: nothing to judge"


def test_summary_counts_worst_examples_and_report_path(invalid_run: Path) -> None:
    verdict = check_file(invalid_run)
    text = render_summary(verdict, invalid_run)
    assert text.splitlines()[0] == "== insync summary: INVALID =="
    for kind, count in verdict["anomaly-counts"].items():
        assert any(line.split()[:2] == [kind, str(count)] for line in text.splitlines())
    worst = [line for line in text.splitlines() if line.startswith("   - ")]
    assert worst[0].startswith("   - lost-write: value ")
    assert len(worst) == 3
    assert f"report: none yet (insync report {invalid_run})" in text
    (invalid_run / "report.html").write_text("x")
    assert f"report: {invalid_run / 'report.html'}" in render_summary(verdict, invalid_run)


def test_summary_of_a_valid_run() -> None:
    text = render_summary({"valid": True, "anomaly-types": []}, None)
    assert text == "== insync summary: VALID ==\n  no anomalies"


def run_check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def test_check_prints_the_summary_and_writes_junit(
    invalid_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "junit.xml"
    code, out = run_check([str(invalid_run), "--junit", str(junit)], capsys)
    assert code == 1
    assert "\n== insync summary: INVALID ==\n" in out
    assert out.index("INVALID:") < out.index("== insync summary")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == f"queue/{invalid_run.name}"


def test_check_json_stays_pure_json_and_exit_codes_hold(
    invalid_run: Path, valid_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_check([str(invalid_run), "--json", "--junit", str(tmp_path / "j.xml")],
                          capsys)
    assert code == 1 and json.loads(out)["valid"] is False
    code, out = run_check([str(valid_run / "history.jsonl")], capsys)
    assert code == 0 and "== insync summary: VALID ==" in out
    assert f"report: none yet (insync report {valid_run})" in out


def test_check_junit_to_an_unwritable_path_is_a_usage_error(
    valid_run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["check", str(valid_run), "--junit", str(blocker / "x.xml")]) == 64
    assert "cannot write --junit" in capsys.readouterr().err


