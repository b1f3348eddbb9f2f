"""Broker config key validation (fixed key set) and, marked integration, real extraction."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cluster.config_keys import KEYS_FILE, known_broker_keys, validate_keys
from cluster.distribution import Distribution, ensure_distribution
from cluster.versions import resolve_version
from harness.base.errors import EnvironmentProblem, UsageError

KNOWN = frozenset(
    {
        "zookeeper.session.timeout.ms",
        "zookeeper.connect",
        "log.dirs",
        "min.insync.replicas",
        "unclean.leader.election.enable",
        "ssl.keystore.location",
    }
)


def test_known_keys_pass() -> None:
    validate_keys(["log.dirs", "min.insync.replicas"], KNOWN)
    validate_keys([], KNOWN)


def test_typo_gets_a_did_you_mean() -> None:
    with pytest.raises(UsageError) as err:
        validate_keys(["zookeeper.session.tmeout.ms"], KNOWN)
    line = err.value.one_line()
    assert "'zookeeper.session.tmeout.ms' (did you mean 'zookeeper.session.timeout.ms'?)" in line
    assert "\n" not in line


def test_every_unknown_key_is_named_once_and_unrelated_ones_get_no_guess() -> None:
    with pytest.raises(UsageError) as err:
        validate_keys(["min.insync.replica", "no.such.thing", "no.such.thing", "log.dirs"], KNOWN)
    message = err.value.message
    assert "keys" in message
    assert message.count("'no.such.thing'") == 1
    assert "'no.such.thing' (did you mean" not in message
    assert "did you mean 'min.insync.replicas'" in message
    assert "'log.dirs'" not in message


def test_per_listener_override_of_a_known_key_is_accepted() -> None:
    validate_keys(["listener.name.plaintext.ssl.keystore.location"], KNOWN)


@pytest.mark.parametrize(
    "key", ["listener.name.plaintext.ssl.keystore.locaton", "listener.name.ssl.keystore"]
)
def test_per_listener_override_of_an_unknown_key_is_rejected(key: str) -> None:
    with pytest.raises(UsageError):
        validate_keys([key], KNOWN)


def test_cached_keys_file_is_used_without_running_java(tmp_path: Path) -> None:
    version = resolve_version("4.1.x")
    (tmp_path / KEYS_FILE).write_text(json.dumps({"version": "4.1.2", "keys": ["a.b", "c.d"]}))
    dist = Distribution(version, tmp_path, ("x.jar",))
    assert known_broker_keys(dist, java="/nonexistent/java") == frozenset({"a.b", "c.d"})


def test_keys_cached_for_another_version_are_not_trusted(tmp_path: Path) -> None:
    """A stale cache is re-extracted; with no java that is an EnvironmentProblem."""
    version = resolve_version("4.1.x")
    (tmp_path / KEYS_FILE).write_text(json.dumps({"version": "3.9.2", "keys": ["a.b"]}))
    dist = Distribution(version, tmp_path, ("x.jar",))
    with pytest.raises(EnvironmentProblem, match="not on PATH"):
        known_broker_keys(dist, java="/nonexistent/java")


@pytest.mark.integration
@pytest.mark.parametrize("spec", ["4.1.x", "3.9.x"])
def test_real_extraction_from_jars(spec: str, tmp_path: Path) -> None:
    """Resolves the real jars (Maven Central) and reads KafkaConfig's ConfigDef."""
    dist = ensure_distribution(resolve_version(spec))
    (dist.root / KEYS_FILE).unlink(missing_ok=True)
    keys = known_broker_keys(dist)
    assert {"log.dirs", "process.roles", "node.id", "min.insync.replicas"} <= keys
    assert ("zookeeper.connect" in keys) == spec.startswith("3.")
    assert len(keys) > 250
    assert json.loads((dist.root / KEYS_FILE).read_text())["keys"] == sorted(keys)
    with pytest.raises(UsageError, match=re.escape("did you mean 'min.insync.replicas'")):
        validate_keys(["min.insync.replica"], keys)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["2.8.x", "1.1.x", "0.11.0.3", "0.10.2.2"])
def test_real_extraction_old_versions(spec: str) -> None:
    dist = ensure_distribution(resolve_version(spec))
    (dist.root / KEYS_FILE).unlink(missing_ok=True)
    keys = known_broker_keys(dist)
    assert {"broker.id", "zookeeper.connect", "zookeeper.session.timeout.ms"} <= keys
    assert len(keys) > 100
    with pytest.raises(UsageError, match=re.escape("did you mean 'zookeeper.session.timeout.ms'")):
        validate_keys(["zookeeper.session.tmeout.ms"], keys)


def test_public_names_are_pinned() -> None:
    """Other layers import these; renaming one is an API change, not a refactor."""
    import importlib

    module = importlib.import_module("cluster.config_keys")
    assert module.__all__ == ["KEYS_FILE", "extract_keys", "known_broker_keys", "validate_keys"]
    assert all(hasattr(module, name) for name in module.__all__)
