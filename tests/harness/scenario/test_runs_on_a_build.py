"""``insync scenario run`` and ``insync catalogue`` on a user's build (``--kafka-dist``), with a
fake ``harness.run.run`` and tarballs made in the test: the build's version picks the
expectation, every run deploys the build, and the verdict names it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_dists import dist_files, make_tarball
from scenario_runs import LOSS, VALID, FakeRun, Verdicts

from harness.cli import main


def _tgz(tmp_path: Path, version: str = "4.1.3-SNAPSHOT", commit: str = "abc123") -> Path:
    return make_tarball(tmp_path / f"kafka_2.13-{version}.tgz", dist_files(version, commit))


def cli(tmp_path: Path, *argv: str) -> int:
    return main([*argv, "--results-dir", str(tmp_path / "results")])


def test_scenario_run_on_a_build_deploys_it_and_names_it_in_the_verdict(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    tgz = _tgz(tmp_path)
    runner = fake(lambda opts, n: LOSS)
    assert cli(tmp_path, "scenario", "run", "acks1-leader-failover", "--kafka-dist", str(tgz),
               "--runs", "2") == 0
    assert [o.kafka_dist for o in runner.calls] == [str(tgz.absolute())] * 2
    assert {o.name for o in runner.calls} == {"scenario-acks1-leader-failover-4.1.3-SNAPSHOT"}
    assert all("--kafka-version" not in o.argv() for o in runner.calls)
    out = capsys.readouterr().out
    sha = json.loads((next((tmp_path / "results" / runner.calls[0].name).iterdir())
                      / "test.json").read_text())["scenario"]["build"]["sha256"]
    build = f"build {tgz.name} (Kafka 4.1.3-SNAPSHOT, commit abc123, sha256 {sha[:12]})"
    assert f"scenario acks1-leader-failover on {build} (kraft)" in out
    assert f"reproduced 2 of 2 on {build} (as expected)" in out
    assert "acks1-leader-failover on 4.1.3-SNAPSHOT build run 1: INVALID" in out


def test_scenario_run_judges_a_build_by_its_versions_expectation(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """offsets-expiry-clock expects loss up to 1.1 and none from 2.8: a 2.8 build must be valid."""
    runner = fake(lambda opts, n: LOSS)
    tgz = _tgz(tmp_path, "2.8.3-SNAPSHOT")
    assert cli(tmp_path, "scenario", "run", "offsets-expiry-clock", "--kafka-dist",
               str(tgz)) == 1
    assert "reproduced 0 of 1 on build" in capsys.readouterr().out and len(runner.calls) == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [(["acks1-leader-failover", "--kafka-version", "3.9"],
      "is Kafka 4.1.3-SNAPSHOT, but --kafka-version says 3.9"),
     (["planned-leader-move-acks1"], "does not cover Kafka 3.8.1-SNAPSHOT")],
    ids=["other-version", "outside-range"],
)
def test_a_build_the_scenario_cannot_run_is_one_line_before_anything(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str],
    argv: list[str], needle: str,
) -> None:
    runner = fake(lambda opts, n: VALID)
    version = "3.8.1-SNAPSHOT" if "planned" in argv[0] else "4.1.3-SNAPSHOT"
    tgz = _tgz(tmp_path, version)
    assert cli(tmp_path, "scenario", "run", *argv, "--kafka-dist", str(tgz)) == 64
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and runner.calls == []
    assert not (tmp_path / "results").exists()


def test_catalogue_on_a_build_is_one_column_of_every_scenario_covering_its_version(
    tmp_path: Path, fake: Callable[[Verdicts], FakeRun], capsys: pytest.CaptureFixture[str]
) -> None:
    tgz = _tgz(tmp_path)
    runner = fake(lambda opts, n: VALID if opts.acks == "all" or "controller" in (
        opts.name or "") else LOSS)
    assert cli(tmp_path, "catalogue", "--scenarios",
               "acks1-leader-failover,controller-failover,hw-truncation",
               "--kafka-dist", str(tgz)) == 0
    assert {o.kafka_dist for o in runner.calls} == {str(tgz.absolute())}
    assert len(runner.calls) == 3  # hw-truncation covers only up to 1.1
    md = (tmp_path / "results" / "catalogue.md").read_text()
    assert "| scenario | 4.1.3-SNAPSHOT build |" in md
    assert "| acks1-leader-failover | 1/1 bug |" in md
    cells = json.loads((tmp_path / "results" / "catalogue.json").read_text())["cells"]
    assert {c["build"]["sha256"][:12] for c in cells} == {
        json.loads(next((tmp_path / "results" / runner.calls[0].name).iterdir()).joinpath(
            "test.json").read_text())["scenario"]["build"]["sha256"][:12]}
    capsys.readouterr()
    assert cli(tmp_path, "catalogue", "--kafka-dist", str(tgz), "--versions", "4.1") == 64
    assert "is one build: it takes no --versions" in capsys.readouterr().err
