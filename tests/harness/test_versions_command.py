"""``insync versions``: the recorded Maven listing and a cache built in the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster.distribution import MARKER, MARKER_FORMAT, distribution_dir
from cluster.versions import release
from harness.cli import main


def _cache_one(root: Path, version: str) -> None:
    kafka = release(version)
    folder = distribution_dir(kafka, root)
    (folder / "libs").mkdir(parents=True)
    (folder / "libs" / f"kafka_{kafka.scala}-{version}.jar").write_bytes(b"x" * 2_000_000)
    marker = {"format": MARKER_FORMAT, "version": version,
              "artifacts": [a.coordinate for a in kafka.artifacts],
              "jars": [f"kafka_{kafka.scala}-{version}.jar"]}
    (folder / MARKER).write_text(json.dumps(marker))


def test_lists_cached_releases_and_each_lines_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path))
    _cache_one(tmp_path, "4.3.1")
    assert main(["versions"]) == 0
    out = capsys.readouterr().out
    assert "Kafka 4.3.1 (kafka_2.13, kraft; cached, 1 jars, 2.0 MB)" in out
    assert "  4.2.x -> 4.2.2\n" in out
    assert "  0.8.2.x -> 0.8.2.2\n" in out
    assert "latest -> 4.4.0" in out


def test_resolves_specs_and_says_what_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path))
    assert main(["versions", "4.2.x", "latest", "0.9.0.1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "4.2.x -> Kafka 4.2.2 (kafka_2.13, kraft; not cached)",
        "latest -> Kafka 4.4.0 (kafka_2.13, kraft; not cached)",
        "0.9.0.1 -> Kafka 0.9.0.1 (kafka_2.11, zookeeper; not cached, "
        "topics through ZooKeeper)",
    ]


def test_a_release_maven_central_lacks_is_one_line_exit_64(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path))
    assert main(["versions", "4.2.x", "4.1.9"]) == 64
    captured = capsys.readouterr()
    assert captured.out == ""  # every spec is checked before anything is printed
    assert captured.err.count("\n") == 1 and "no Kafka 4.1.9" in captured.err


def test_lists_the_builds_laid_out_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fake_dists import dist_files, make_tarball

    from cluster.kafka_dist import inspect_dist, stage_dist

    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path / "cache"))
    tgz = make_tarball(tmp_path / "kafka_2.13-4.5.0-SNAPSHOT.tgz",
                       dist_files("4.5.0-SNAPSHOT", "feedbeef"))
    dist = inspect_dist(tgz)
    (tmp_path / "cache" / "kafka" / "dist-0000000000000000").mkdir(parents=True)  # no marker
    assert main(["versions"]) == 0
    builds = capsys.readouterr().out.split("builds (--kafka-dist) cached under")[1]
    assert builds.splitlines()[1] == "  (none)"  # nothing staged yet
    stage_dist(dist, tmp_path / "cache")
    assert main(["versions"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "4.5.0-SNAPSHOT" in x]
    assert line.startswith(f"  dist-{dist.sha256[:16]}: Kafka 4.5.0-SNAPSHOT (commit feedbeef, "
                           f"sha256 {dist.sha256[:16]}..., 3 jars, ")
    assert line.endswith(f" MB) from {tgz}")
    assert "dist-0000000000000000" not in out  # an incomplete copy is not a build
