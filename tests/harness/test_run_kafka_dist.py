"""``insync run --kafka-dist``: the build's version drives the run, test.json and the
replay name it, and bad builds are one line, exit 64, before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_dists import dist_files, make_dir, make_tarball
from fake_engine import Engine

from harness.base.errors import UsageError
from harness.cli import main
from harness.run.options import parse
from harness.run.setup import dist_record


def _tgz(tmp_path: Path, version: str = "4.1.2-SNAPSHOT", commit: str = "abc123") -> Path:
    return make_tarball(tmp_path / f"kafka_2.13-{version}.tgz", dist_files(version, commit))


def test_the_build_names_the_version_the_spec_and_the_record(tmp_path: Path) -> None:
    tgz = _tgz(tmp_path)
    opts = parse(["--kafka-dist", str(tgz), "--results-dir", str(tmp_path / "r")])
    assert opts.kafka().version == "4.1.2-SNAPSHOT"
    spec = opts.cluster_spec()
    assert (spec.kafka_version, spec.kafka_dist) == ("4.1.2-SNAPSHOT", str(tgz.absolute()))
    record = dist_record(opts)
    assert record is not None and record["commit_id"] == "abc123"
    assert record["sha256"] == spec.kafka_dist_sha256
    argv = opts.resolved().argv()
    assert "--kafka-version" not in argv  # the build names its version
    assert argv[argv.index("--kafka-dist") + 1] == str(tgz.absolute())


@pytest.mark.parametrize("version", ["4.1.x", "4.1", "4.1.2-SNAPSHOT", "4.1.2-snapshot"])
def test_a_kafka_version_that_names_the_build_agrees(tmp_path: Path, version: str) -> None:
    opts = parse(["--kafka-dist", str(_tgz(tmp_path)), "--kafka-version", version,
                  "--results-dir", str(tmp_path / "r")])
    assert opts.kafka().version == "4.1.2-SNAPSHOT"


@pytest.mark.parametrize("version", ["3.9.x", "4.1.2", "latest"])
def test_a_kafka_version_that_does_not_is_refused(tmp_path: Path, version: str) -> None:
    with pytest.raises(UsageError, match=r"is Kafka 4\.1\.2-SNAPSHOT, but --kafka-version says"):
        parse(["--kafka-dist", str(_tgz(tmp_path)), "--kafka-version", version])


def test_a_replay_runs_the_same_build_and_refuses_a_changed_one(tmp_path: Path) -> None:
    tgz = _tgz(tmp_path)
    opts = parse(["--kafka-dist", str(tgz), "--results-dir", str(tmp_path / "r")]).resolved()
    test_json = tmp_path / "test.json"
    test_json.write_text(json.dumps({"argv": opts.argv(),
                                     "cluster": {"kafka_dist": dist_record(opts)}}))
    again = parse(["--replay", str(test_json)])
    assert again.kafka_dist == str(tgz.absolute()) and again.kafka().version == "4.1.2-SNAPSHOT"
    _tgz(tmp_path, commit="rebuilt")  # same path, other bytes
    with pytest.raises(UsageError, match="is not the build the run ran"):
        parse(["--replay", str(test_json)])
    other = make_dir(tmp_path / "other", dist_files("4.1.3-SNAPSHOT"))
    assert parse(["--replay", str(test_json), "--kafka-dist", str(other)]).kafka().version == \
        "4.1.3-SNAPSHOT"  # a build named now is that build


def test_a_build_insync_cannot_run_in_the_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not run in zookeeper mode"):
        parse(["--kafka-dist", str(_tgz(tmp_path)), "--mode", "zookeeper"])
    old = make_tarball(tmp_path / "old.tgz", dist_files("0.9.0.1"))
    with pytest.raises(UsageError, match=r"Kafka 0\.9\.0\.1 does not run in kraft mode"):
        parse(["--kafka-dist", str(old), "--mode", "kraft"])


@pytest.mark.parametrize("command", [["run", "--teardown"], ["cluster", "up"]])
def test_bad_builds_are_one_line_exit_64_and_touch_nothing(
    engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    results = [] if command[0] == "cluster" else ["--results-dir", str(engine.results)]
    cases = [
        (tmp_path / "missing.tgz", "no such file"),
        (make_dir(tmp_path / "empty", {"bin/x": b""}), "not a Kafka distribution"),
        (make_tarball(tmp_path / "v.tgz", {"libs/kafka-clients-x.jar": b"zz"}), "not a jar"),
    ]
    for path, needle in cases:
        code = main([*command, "--kafka-dist", str(path), *results])
        _, err = capsys.readouterr()
        assert code == 64, err
        assert err.startswith("insync: ") and err.count("\n") == 1 and needle in err, err
        assert engine.calls() == [] and not engine.results.exists()
    code = main([*command, "--kafka-dist", str(_tgz(tmp_path)), "--kafka-version", "3.9.x",
                 *results])
    assert code == 64 and "--kafka-version says 3.9.x" in capsys.readouterr().err
