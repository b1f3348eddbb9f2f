"""The Kafka version table and spec parsing: no network, no JVM."""

from __future__ import annotations

import pytest

from cluster.versions import (
    CLIENT_FEATURES,
    KRAFT,
    VERSIONS,
    ZOOKEEPER,
    KafkaVersion,
    Logging,
    feature_since,
    known_versions,
    resolve_for_mode,
    resolve_version,
)
from harness.base.errors import UsageError


@pytest.mark.parametrize(
    ("spec", "exact"),
    [
        ("4.1.x", "4.1.2"),
        ("4.1", "4.1.2"),
        ("4.1.2", "4.1.2"),
        (" v4.1.X ", "4.1.2"),
        ("3.9.x", "3.9.2"),
        ("3.9", "3.9.2"),
        ("3.9.2", "3.9.2"),
        ("2.8.x", "2.8.2"),
        ("1.1", "1.1.1"),
        ("0.11.0.3", "0.11.0.3"),
        ("0.11.0.x", "0.11.0.3"),
        ("0.11.0", "0.11.0.3"),
        ("0.10.2.2", "0.10.2.2"),
        ("0.10.2.x", "0.10.2.2"),
    ],
)
def test_spec_resolves_to_pinned_release(spec: str, exact: str) -> None:
    assert resolve_version(spec).version == exact


@pytest.mark.parametrize(
    "spec", ["4.0.x", "3.9.1", "4", "latest", "", "4.1.2.1", "0.11", "0.10.x", "4.1.x.x"]
)
def test_unknown_spec_is_a_usage_error_listing_known_versions(spec: str) -> None:
    with pytest.raises(UsageError) as err:
        resolve_version(spec)
    line = err.value.one_line()
    for known in known_versions():
        assert known in line
    assert "\n" not in line


def test_versions_are_unique_and_lines_are_unique() -> None:
    assert len({v.version for v in VERSIONS}) == len(VERSIONS)
    assert len({v.line for v in VERSIONS}) == len(VERSIONS)


def test_required_lines_and_their_modes() -> None:
    assert resolve_version("4.1.x").modes == frozenset({KRAFT})
    assert resolve_version("3.9.x").modes == frozenset({KRAFT, ZOOKEEPER})
    for old in ("2.8", "1.1", "0.11.0", "0.10.2"):
        assert resolve_version(old).modes == frozenset({ZOOKEEPER})


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.version)
def test_each_mode_has_the_tools_it_needs(version: KafkaVersion) -> None:
    assert version.supports(KRAFT) == (version.storage_tool_main is not None)
    assert version.supports(KRAFT) == (version.quorum_tool_main is not None)
    assert version.supports(ZOOKEEPER) == (version.zookeeper_main is not None)
    assert version.kafka_artifact.artifact == f"kafka_{version.scala}"
    assert version.artifacts[0] == version.kafka_artifact


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.version)
def test_every_version_ships_a_logging_binding(version: KafkaVersion) -> None:
    """Without a binding slf4j drops every broker log line: the pom must bring one."""
    names = {a.artifact for a in version.extra_artifacts}
    if version.logging is Logging.LOG4J2:
        assert "log4j-slf4j-impl" in names
    elif version.version.startswith("0."):
        # 0.10/0.11 POMs depend on slf4j-log4j12 themselves.
        assert not names & {"slf4j-log4j12", "slf4j-reload4j"}
    else:
        assert names & {"slf4j-log4j12", "slf4j-reload4j"}


def test_old_versions_get_jaxb_for_java_17() -> None:
    for spec in ("0.11.0", "0.10.2"):
        coords = {a.coordinate for a in resolve_version(spec).extra_artifacts}
        assert "javax.xml.bind:jaxb-api:2.3.1" in coords


def test_tools_artifact_matches_broker_version() -> None:
    for version in VERSIONS:
        for artifact in version.extra_artifacts:
            if artifact.group == "org.apache.kafka":
                assert artifact.version == version.version


def test_logging_flavour_files_and_property() -> None:
    assert Logging.LOG4J1.config_property == "log4j.configuration"
    assert Logging.LOG4J2.config_property == "log4j2.configurationFile"
    assert resolve_version("4.1").logging is Logging.LOG4J2
    assert resolve_version("3.9").logging is Logging.LOG4J1


def test_line_of_old_four_part_versions() -> None:
    assert resolve_version("0.10.2.2").line == "0.10.2"
    assert resolve_version("4.1.2").line == "4.1"


def test_public_names_are_pinned() -> None:
    """Other layers import these; renaming one is an API change, not a refactor."""
    import importlib

    module = importlib.import_module("cluster.versions")
    assert module.__all__ == [
        "CLIENT_FEATURES",
        "KRAFT",
        "VERSIONS",
        "ZOOKEEPER",
        "Artifact",
        "KafkaVersion",
        "Logging",
        "Mode",
        "feature_since",
        "known_versions",
        "resolve_for_mode",
        "resolve_version",
    ]
    assert all(hasattr(module, name) for name in module.__all__)


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.line)
@pytest.mark.parametrize("mode", [KRAFT, ZOOKEEPER])
def test_resolve_for_mode_follows_the_table(version: KafkaVersion, mode: str) -> None:
    if version.supports(mode):
        assert resolve_for_mode(version.line + ".x", mode) is version
        return
    with pytest.raises(UsageError) as err:
        resolve_for_mode(version.line + ".x", mode)
    line = err.value.one_line()
    assert f"does not run in {mode} mode" in line and "use --mode" in line
    others = [v.line + ".x" for v in VERSIONS if v.supports(mode)]
    assert all(o in line for o in others)  # says which versions would do


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.version)
@pytest.mark.parametrize("feature", sorted(CLIENT_FEATURES))
def test_client_features_start_at_0_11(version: KafkaVersion, feature: str) -> None:
    """Idempotent producers and transactions arrived with KIP-98 in 0.11.0."""
    assert version.can(feature) == (version.line != "0.10.2")
    assert feature_since(feature) == "0.11.0"


def test_versions_order_by_number() -> None:
    numbers = [v.number for v in VERSIONS]
    assert numbers == sorted(numbers, reverse=True)
    assert resolve_version("0.10.2").number == (0, 10, 2, 2)
