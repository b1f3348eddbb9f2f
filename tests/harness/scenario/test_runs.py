"""``insync scenario run`` and ``insync catalogue`` with a fake ``harness.run.run`` (no Docker):
exit codes, what test.json records, resume, the stored table, and bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scenario_runs import LOSS, UNKNOWN, VALID, FakeRun, Verdicts
from scenario_text import MINIMAL

from harness.base.errors import UsageError
from harness.cli import main
from harness.run.options import RunOptions
from harness.scenario import load_catalogue
from harness.scenario.runs import (
    Case,
    CaseResult,
    catalogue_cases,
    failed_steps,
    make_case,
    matches,
    observed,
    run_line,
)


def cli(tmp_path: Path, *argv: str) -> int:
    return main([*argv, "--results-dir", str(tmp_path / "results")])


# -- insync scenario run -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "verdict", "code", "tail"),
    [
        (["acks1-leader-failover", "--kafka-version", "4.1"], LOSS, 0, "reproduced 3 of 3"),
        (["acks1-leader-failover", "--kafka-version", "4.1"], VALID, 1, "reproduced 0 of 3"),
        (["acks1-leader-failover", "--kafka-version", "4.1", "--variant", "acks-all-isr2"],
         VALID, 0, "reproduced 3 of 3"),
        (["controller-failover", "--kafka-version", "3.9"], VALID, 0, "reproduced 3 of 3"),
        (["controller-failover", "--kafka-version", "3.9"], UNKNOWN, 1, "reproduced 0 of 3"),
    ],
    ids=["bug-shows", "bug-missing", "control-valid", "negative-control", "unknown-never-matches"],
)
def test_scenario_run_exit_status_is_whether_every_run_ended_as_expected(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str],
    *, argv: list[str], verdict: dict[str, Any], code: int, tail: str,
) -> None:
    runner = fake(lambda opts, n: verdict)
    assert cli(tmp_path, "scenario", "run", *argv, "--runs", "3") == code
    out = capsys.readouterr().out
    assert f"{tail} (" in out and "expected: " in out and "observed: " in out
    assert len(runner.calls) == 3 and {c.teardown for c in runner.calls} == {False}
    assert runner.clusters == ["insync"]  # the cluster the runs brought up is removed


def test_each_runs_test_json_records_the_scenario(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun]
) -> None:
    runner = fake(lambda opts, n: LOSS)
    assert cli(tmp_path, "scenario", "run", "acks1-leader-failover", "--kafka-version",
               "2.8", "--cluster-name", "mine", "--keep-cluster") == 0
    (opts,) = runner.calls
    assert opts.name == "scenario-acks1-leader-failover-2.8.x" and opts.kafka_version == "2.8.x"
    assert opts.acks == "1" and opts.cluster_name == "mine" and runner.clusters == []
    (folder,) = (tmp_path / "results" / opts.name).iterdir()
    test = json.loads((folder / "test.json").read_text())
    block = test["scenario"]
    assert (block["name"], block["variant"], block["version"]) == (
        "acks1-leader-failover", None, "2.8")
    assert block["expected"]["valid"] is False and block["expected"]["anomalies"] == []
    assert block["expected"]["any"] == ["lost-write", "inconsistent-offsets", "unseen"]
    assert block["sources"] and test["matrix"]["run"] == 1


def test_a_rerun_resumes_and_runs_only_what_is_missing(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    runner = fake(lambda opts, n: LOSS)
    args = ("scenario", "run", "acks1-leader-failover", "--kafka-version", "4.1")
    assert cli(tmp_path, *args, "--runs", "2") == 0
    assert cli(tmp_path, *args, "--runs", "3") == 0
    assert len(runner.calls) == 3  # 2, then only run 3
    out = capsys.readouterr().out
    assert "2 already done, 1 to run" in out and "reproduced 3 of 3" in out


def test_a_changed_fault_script_is_not_resumed_and_the_rerun_says_why(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """The same scenario file with another script: its earlier runs ran another test."""
    runner = fake(lambda opts, n: VALID)
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(MINIMAL)
    args = ("scenario", "run", "tiny", "--kafka-version", "4.1", "--scenario-file", str(tiny),
            "--runs", "2")
    assert cli(tmp_path, *args) == 0
    first = [Path(o.nemesis_schedule or "") for o in runner.calls]
    capsys.readouterr()
    tiny.write_text(MINIMAL.replace("at = 15", "at = 20"))  # the same steps, later
    assert cli(tmp_path, *args) == 0
    assert len(runner.calls) == 4  # both runs again: none of the old ones counted
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "not reused" in x]
    second = Path(runner.calls[-1].nemesis_schedule or "")
    assert line == (f"scenario-tiny-4.1.x: 2 stored run(s) not reused, settings changed: "
                    f"another fault script ({first[0].name}, now {second.name})")
    assert "0 already done, 2 to run" in out
    assert first[0] == first[1] != second and first[0].parent == second.parent
    assert '"at": 15' in first[0].read_text()  # the old runs' script stays as they ran it
    assert '"at": 20' in second.read_text()
    capsys.readouterr()
    assert cli(tmp_path, *args) == 0  # the same script again: resumed, nothing to run
    out = capsys.readouterr().out
    assert len(runner.calls) == 4 and "2 already done, 0 to run" in out
    assert "not reused" in out  # the first script's runs still are not


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["nope", "--kafka-version", "4.1"], "no scenario 'nope'"),
        (["controller-failover"], "scenario run needs --kafka-version"),
        (["hw-truncation", "--kafka-version", "4.1", "--variant", "x"], "has no variant 'x'"),
        (["acks1-leader-failover", "--kafka-version", "0.10.2", "--variant", "acks-all-isr2"],
         "variant acks-all-isr2 does not cover Kafka 0.10.2"),
        (["controller-failover", "--kafka-version", "9.9"], "lists no Kafka 9.9 release"),
        (["controller-failover", "--kafka-version", "4.1", "--runs", "0"], "--runs"),
        (["controller-failover", "--kafka-version", "4.1", "--hosts", "/no/hosts.toml"],
         "/no/hosts.toml"),
    ],
    ids=["unknown-name", "no-version", "unknown-variant", "version-outside-range",
         "unknown-version", "zero-runs", "missing-inventory"],
)
def test_bad_input_is_one_line_exit_64_before_any_run(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str],
    argv: list[str], needle: str,
) -> None:
    runner = fake(lambda opts, n: VALID)
    assert cli(tmp_path, "scenario", "run", *argv) == 64
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and runner.calls == []


def test_a_version_outside_the_range_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    s = load_catalogue()["acks1-leader-failover"]  # its acks=all control starts at 0.11
    with pytest.raises(UsageError, match=r"does not cover Kafka 0\.10\.2"):
        make_case(s, _v("0.10.2"), "acks-all-isr2", results_dir=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def _v(line: str) -> Any:
    from cluster.versions import resolve_version

    return resolve_version(line)


# -- judging -------------------------------------------------------------------------------


def _case(tmp_path: Path, name: str, version: str, variant: str | None = None) -> Case:
    return make_case(load_catalogue()[name], _v(version), variant, results_dir=str(tmp_path))


@pytest.mark.parametrize(
    ("version", "verdict", "expected"),
    [("0.10.2", LOSS, True), ("0.10.2", VALID, False), ("1.1", VALID, True),
     ("1.1", LOSS, False), ("1.1", UNKNOWN, False)],
    ids=["affected-loss", "affected-valid", "fixed-valid", "fixed-loss", "fixed-unknown"],
)
def test_a_run_matches_the_expectation_of_its_version(
    tmp_path: Path, version: str, verdict: dict[str, Any], expected: bool
) -> None:
    case = _case(tmp_path, "hw-truncation", version)
    if verdict is LOSS:  # the anomalies the scenario names where its bug shows
        names = case.expected.anomalies or ("lost-write",)
        verdict = {"valid": False, "anomaly-counts": dict.fromkeys(names, 1)}
    assert matches(case, verdict) is expected


def _covered(acked_in_faults: int, first_acks: list[float | None]) -> dict[str, Any]:
    """A valid verdict whose run had 25 s of faults, with these coverage figures."""
    return {"valid": True, "run": {"coverage": {
        "in_faults": {"in_force_s": 25.0, "acked_sends": acked_in_faults},
        "recoveries": [{"f": "stop-partition", "healed_at_s": 20.0 + i, "first_ack_after_s": a}
                       for i, a in enumerate(first_acks)]}}}


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [(_covered(0, [None, None]), False), (_covered(0, [None, 3.5]), True),
     (_covered(12, [None]), True), (_covered(0, []), False),
     ({"valid": True, "run": {"coverage": {"in_faults": {"in_force_s": 0}}}}, True),
     (VALID, True)],
    ids=["nothing-acked", "acked-after-a-heal", "acked-in-faults", "no-heal-no-ack",
         "no-faults", "no-coverage"],
)
def test_a_valid_control_matches_only_if_its_faults_had_something_to_lose(
    tmp_path: Path, verdict: dict[str, Any], expected: bool
) -> None:
    case = _case(tmp_path, "controller-failover", "2.8")
    assert matches(case, verdict) is expected
    assert run_line(1, verdict).endswith("it tested nothing") is not expected


def test_an_untested_run_still_counts_where_the_bug_is_expected(tmp_path: Path) -> None:
    case = _case(tmp_path, "acks1-leader-failover", "2.8")
    loss = {**_covered(0, [None]), "valid": False, "anomaly-counts": {"lost-write": 2}}
    assert matches(case, loss) is True
    assert observed([_covered(0, [None]), VALID]) == "valid 2/2 (1 untested)"


def _group_run(commits_at_risk: int | None) -> dict[str, Any]:
    """A valid verdict whose sends were acknowledged after a heal (a sends run that tested
    something), with ``commits_at_risk`` commits acknowledged from the first fault's
    start to the last fault's end (None: a coverage block without commit figures)."""
    verdict = _covered(0, [3.5])
    if commits_at_risk is not None:
        verdict["run"]["coverage"]["commits"] = {"acked": 401, "at_risk": commits_at_risk}
    return verdict


def test_what_a_scenario_tests_is_its_settings_data() -> None:
    catalogue = load_catalogue()
    for name in ("offsets-topic-underreplicated", "group-coordinator-commit-loss",
                 "group-commits-safe", "offsets-expiry-clock"):
        assert catalogue[name].tests() == "commits", name
    for name in ("controller-failover", "acks1-leader-failover", "auto-commit-positions"):
        assert catalogue[name].tests() == "sends", name


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [(_group_run(0), False), (_group_run(48), True), (_group_run(None), True)],
    ids=["sends-acked-no-commit-at-risk", "commits-at-risk", "block-without-commits"],
)
def test_a_group_control_is_judged_by_its_commits_not_its_sends(
    tmp_path: Path, verdict: dict[str, Any], expected: bool
) -> None:
    """The 4.1.2 offsets-topic-underreplicated run: sends acknowledged after the heals,
    every commit after the last fault ended (none at risk): it tested nothing."""
    case = _case(tmp_path, "offsets-topic-underreplicated", "4.1")
    assert case.tests == "commits" and case.expected.valid is True
    assert matches(case, verdict) is expected
    line = run_line(1, verdict, case.tests)
    assert line.endswith("no commit acknowledged from the first fault to the last: it "
                         "tested nothing") is not expected
    assert ("untested" in observed([verdict], case.tests)) is not expected
    # the same verdict, judged by its sends, tested something
    assert not run_line(1, verdict).endswith("it tested nothing")


def test_coverage_counts_commits_from_the_first_fault_to_the_last() -> None:
    from results.coverage import coverage, slim

    s = 10**9
    spans = {"kill": ("kill", "start")}

    def nemesis(t: float, f: str, kind: str) -> dict[str, Any]:
        return {"process": "nemesis", "type": kind, "f": f, "time": int(t * s), "value": {}}

    def poll(t: float, offsets: dict[str, int], kind: str = "ok") -> dict[str, Any]:
        return {"process": 1, "type": kind, "f": "poll", "time": int(t * s),
                "value": [["poll", {}], ["commit", offsets]]}

    ops = [poll(1, {"t0-0": 5}),  # before the first fault: not at risk
           nemesis(2, "kill", "invoke"), nemesis(2.1, "kill", "ok"),
           poll(3, {"t0-0": 6, "t0-1": 2}),  # in the fault: two keys
           nemesis(4, "start", "invoke"), nemesis(4.1, "start", "ok"),
           poll(5, {"t0-0": 7}),  # after a heal, before the last fault
           poll(5.5, {"t0-0": 8}, kind="info"),  # not acknowledged
           nemesis(6, "kill", "invoke"), nemesis(6.1, "kill", "ok"),
           nemesis(8, "start", "invoke"), nemesis(8.1, "start", "ok"),
           poll(9, {"t0-0": 9})]  # after every fault: not at risk
    assert coverage(ops, spans, (0, 10 * s))["commits"] == {"acked": 5, "at_risk": 3}
    assert coverage(map(slim, ops), spans, (0, 10 * s))["commits"] == {"acked": 5, "at_risk": 3}


def test_observed_counts_each_outcome() -> None:
    assert observed([LOSS, LOSS, VALID, UNKNOWN]) == "lost-write 2/4, valid 1/4, unknown 1/4"
    assert observed([]) == "not run"


# -- insync catalogue ----------------------------------------------------------------------


def test_catalogue_runs_every_scenario_and_variant_on_its_versions(tmp_path: Path) -> None:
    cat = load_catalogue()
    cases = catalogue_cases(cat, ["isr-shrink-unclean"], None, results_dir=str(tmp_path))
    s = cat["isr-shrink-unclean"]
    want = {(None, v.line) for v in s.covered()} | {
        (var.name, v.line) for var in s.variants for v in s.covered(var.name)}
    assert {(c.variant, c.version.line) for c in cases} == want
    only = catalogue_cases(cat, None, [_v("4.1")], results_dir=str(tmp_path))
    assert {c.version.line for c in only} == {"4.1"}
    assert {c.scenario.name for c in only} == {n for n, s in cat.items() if s.covered()
                                               and _v("4.1") in s.covered()}


def test_catalogue_stores_the_table_and_resumes(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    def verdicts(opts: RunOptions, n: int) -> dict[str, Any]:
        return VALID if opts.acks == "all" or "controller" in (opts.name or "") else LOSS

    runner = fake(verdicts)
    argv = ("catalogue", "--scenarios", "acks1-leader-failover,controller-failover",
            "--versions", "3.9,4.1", "--runs", "2")
    assert cli(tmp_path, *argv) == 0
    first = len(runner.calls)
    assert first == 3 * 2 * 2  # (scenario, variant, control) x 2 versions x 2 runs
    data = json.loads((tmp_path / "results" / "catalogue.json").read_text())
    cells = {(c["scenario"], c["variant"], c["version"]): c for c in data["cells"]}
    assert cells[("acks1-leader-failover", None, "4.1")]["observed"] == "lost-write 2/2"
    assert cells[("acks1-leader-failover", None, "4.1")]["as_expected"] == 2
    md = (tmp_path / "results" / "catalogue.md").read_text()
    assert "| acks1-leader-failover | 2/2 bug | 2/2 bug |" in md
    assert "| controller-failover | 2/2 ok | 2/2 ok |" in md
    capsys.readouterr()
    assert cli(tmp_path, *argv) == 0 and len(runner.calls) == first  # all resumed
    assert "12 already done, 0 to run" in capsys.readouterr().out


def test_catalogue_versions_take_open_ranges(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--versions 3.9..`` stands for the table's columns from 3.9 on: 3.9 to 4.4."""
    runner = fake(lambda opts, n: VALID)
    assert cli(tmp_path, "catalogue", "--scenarios", "controller-failover",
               "--versions", "3.9..", "--runs", "1") == 0
    lines = ["3.9.x", "4.1.x", "4.2.x", "4.3.x", "4.4.x"]
    assert sorted({o.kafka_version for o in runner.calls}) == lines


def test_catalogue_exit_1_and_a_bang_when_a_cell_differs(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    fake(lambda opts, n: LOSS if n == 1 else VALID)
    assert cli(tmp_path, "catalogue", "--scenarios", "controller-failover",
               "--versions", "4.1", "--runs", "2") == 1
    out = capsys.readouterr().out
    assert "1/2 ok !" in out and "lost-write 1/2, valid 1/2" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [(["--scenarios", "nope"], "no scenario 'nope'"),
     (["--versions", "7.7"], "no Kafka 7.7 release"),
     (["--scenarios", "tiny", "--versions", "4.1"], "no chosen scenario covers Kafka 4.1")],
    ids=["unknown-scenario", "unknown-version", "nothing-covered"],
)
def test_catalogue_bad_input(tmp_path: Path, fake: Callable[[Verdicts], FakeRun],
                             capsys: pytest.CaptureFixture[str], write: Callable[..., Path],
                             *, argv: list[str], needle: str) -> None:
    runner = fake(lambda opts, n: VALID)
    old = MINIMAL.split('[[expect]]\nversions = "2.8..4.1"')[0]  # a user's file: 0.10.2..1.1
    tiny = write(old.replace('max = "4.1"', 'max = "1.1"'))
    assert cli(tmp_path, "catalogue", *argv, "--scenario-file", str(tiny)) == 64
    assert needle in capsys.readouterr().err and runner.calls == []


def test_case_result_ok_needs_every_run(tmp_path: Path) -> None:
    case = _case(tmp_path, "controller-failover", "4.1")
    assert CaseResult(case, (VALID, VALID)).ok and not CaseResult(case, (VALID, UNKNOWN)).ok
    assert not CaseResult(case, ()).ok


def test_analyze_ingests_the_scenario_columns(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun]
) -> None:
    from results.analysis.ingest import run_row

    runner = fake(lambda opts, n: LOSS)
    assert cli(tmp_path, "scenario", "run", "acks1-leader-failover", "--kafka-version",
               "4.1") == 0
    (folder,) = (tmp_path / "results" / (runner.calls[0].name or "")).iterdir()
    test = json.loads((folder / "test.json").read_text())
    row = run_row("r", folder, test, LOSS)
    assert (row["scenario"], row["scenario_variant"], row["scenario_as_expected"]) == (
        "acks1-leader-failover", None, True)
    assert row["scenario_expected"] == \
        "invalid: one of lost-write | inconsistent-offsets | unseen"
    assert run_row("r", folder, {"name": "plain"}, LOSS)["scenario"] is None


def test_a_valid_control_whose_scripted_heal_failed_did_not_run_its_test(
        tmp_path: Path) -> None:
    """The 4.2.2 quorum-reconfiguration run whose add-controller was refused three times:
    valid, but the removed controller rejoined only at the final heal."""
    case = _case(tmp_path, "quorum-reconfiguration", "4.2")
    verdict = _covered(12, [0.1])
    verdict["run"]["coverage"]["failed_heals"] = [
        {"f": "add-controller", "at_s": 74.2, "error": "{'n1': 'add-controller exited 1'}"}]
    assert failed_steps(verdict) == [
        "add-controller at 74.2 s ({'n1': 'add-controller exited 1'})"]
    assert matches(case, verdict) is False


def test_a_valid_control_whose_scripted_fault_failed_did_not_run_its_test(
        tmp_path: Path) -> None:
    """The 3.9.2 quorum-reconfiguration run whose remove-controller tool exited 1: valid,
    with writes acknowledged, but the active controller was never removed."""
    case = _case(tmp_path, "quorum-reconfiguration", "3.9")
    verdict = _covered(12, [0.1])
    assert matches(case, verdict) is True
    verdict["run"]["coverage"]["failed_starts"] = [
        {"f": "remove-controller", "at_s": 31.5, "error": "remove-controller exited 1"}]
    assert failed_steps(verdict) == ["remove-controller at 31.5 s (remove-controller exited 1)"]
    assert matches(case, verdict) is False
    assert run_line(1, verdict).endswith(
        "a scripted fault did not apply: remove-controller at 31.5 s (remove-controller "
        "exited 1)")
    assert observed([verdict, VALID]) == "valid 2/2 (1 with a step that failed)"
    loss = {**verdict, "valid": False, "anomaly-counts": {"lost-write": 1}}
    assert matches(_case(tmp_path, "acks1-leader-failover", "2.8"), loss) is True


def test_a_run_line_names_the_known_bugs_its_broker_logs_show(tmp_path: Path) -> None:
    """Informational: the line says it, and whether the run ended as expected does not
    change (a control expecting valid still matches)."""
    case = _case(tmp_path, "offsets-topic-underreplicated", "4.1")
    assert case.expected.valid is True
    plain: dict[str, Any] = {"valid": True, "run": {}}
    logged: dict[str, Any] = {"valid": True, "run": {"log_signatures": {
        "KAFKA-17507": {"count": 2, "nodes": {"n1": 1, "n3": 1}}}}}
    assert run_line(1, logged) == ("run 1: valid; broker logs: KAFKA-17507 (transactional "
                                   "offsets completed early) 2 times, on n1, n3")
    assert run_line(1, {"valid": True, "run": {"log_signatures": {}}}) == "run 1: valid"
    assert matches(case, logged) is matches(case, plain) is True
