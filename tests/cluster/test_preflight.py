"""``cluster.preflight.check``: version, mode and broker keys, with no Docker and no Maven."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster import preflight
from cluster.config_keys import KEYS_FILE
from cluster.distribution import _write_marker as write_marker
from cluster.distribution import distribution_dir
from cluster.spec import ClusterSpec
from cluster.versions import resolve_version
from harness.base.errors import UsageError

KNOWN = ["log.flush.interval.messages", "num.io.threads", "unclean.leader.election.enable"]


def cache_jars(cache: Path, version: str, keys: list[str] | None) -> Path:
    """A cached distribution as ``ensure_distribution`` leaves it (empty jars), keys too."""
    kafka = resolve_version(version)
    root = distribution_dir(kafka, cache)
    (root / "libs").mkdir(parents=True)
    (root / "libs" / "kafka.jar").write_bytes(b"")
    write_marker(root, kafka, ["kafka.jar"])
    if keys is not None:
        (root / KEYS_FILE).write_text(json.dumps({"version": kafka.version, "keys": keys}))
    return root


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSYNC_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))  # no java, no mvn, no docker
    return tmp_path


def test_a_typo_is_refused_when_the_jars_are_cached(cache: Path) -> None:
    cache_jars(cache, "4.1.x", KNOWN)
    spec = ClusterSpec(broker_config={"log.flush.interval.mesages": "1"})
    with pytest.raises(UsageError) as err:
        preflight.check(spec)
    assert "did you mean 'log.flush.interval.messages'?" in err.value.one_line()
    assert preflight.check(ClusterSpec(broker_config={"num.io.threads": "2"})).version == "4.1.2"


def test_without_cached_jars_keys_are_left_to_up(cache: Path) -> None:
    """Checking them would mean downloading Kafka first; the provisioner's ``up`` does that."""
    spec = ClusterSpec(broker_config={"no.such.key": "1"})
    assert preflight.check(spec).version == "4.1.2"
    # nothing downloaded: the cache holds at most Maven's listing of releases
    assert [p.name for p in cache.rglob("*") if p.is_dir()] in ([], ["kafka", "maven-metadata",
        next((p.name for p in (cache / "kafka" / "maven-metadata").iterdir()), "")])


def test_without_a_jdk_keys_are_left_to_up(cache: Path) -> None:
    cache_jars(cache, "4.1.x", keys=None)  # no key list yet, and no java on PATH
    assert preflight.check(ClusterSpec(broker_config={"no.such.key": "1"})).line == "4.1"


@pytest.mark.parametrize(
    ("version", "mode", "needle"),
    [
        ("9.9.x", "kraft", "Maven Central lists no Kafka 9.9 release"),
        ("4.1.x", "zookeeper", "4.1.2 does not run in zookeeper mode"),
        ("2.8.x", "kraft", "2.8.2 does not run in kraft mode"),
    ],
)
def test_versions_and_modes(cache: Path, version: str, mode: str, needle: str) -> None:
    spec = ClusterSpec(kafka_version=version, mode=mode)
    with pytest.raises(UsageError, match=needle):
        preflight.check(spec)
