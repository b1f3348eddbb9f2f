"""The Kafka version table and spec parsing: no network, no JVM."""

from __future__ import annotations

import pytest

from cluster.versions import (
    CLIENT_FEATURES,
    FLOOR,
    KRAFT,
    VERSIONS,
    ZOOKEEPER,
    KafkaVersion,
    Logging,
    binding_for,
    feature_since,
    known_versions,
    parse_number,
    release,
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
        ("3.9.1", "3.9.1"),
        ("2.8.x", "2.8.2"),
        ("1.1", "1.1.1"),
        ("0.11.0.3", "0.11.0.3"),
        ("0.11.0.x", "0.11.0.3"),
        ("0.11.0", "0.11.0.3"),
        ("0.10.2.2", "0.10.2.2"),
        ("0.10.2.x", "0.10.2.2"),
        # Lines and releases the recorded Maven Central listing has (4.4.0 newest).
        ("latest", "4.4.0"),
        ("4.2.x", "4.2.2"),
        ("4.3.1", "4.3.1"),
        ("4.0", "4.0.2"),
        ("0.9.0.x", "0.9.0.1"),
        ("0.8.2.2", "0.8.2.2"),
        ("2.4.0", "2.4.0"),
    ],
)
def test_spec_resolves_to_the_release_maven_central_lists(spec: str, exact: str) -> None:
    assert resolve_version(spec).version == exact


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("4.1.9", "Maven Central has no Kafka 4.1.9 (its line has 4.1.0, 4.1.1, 4.1.2)"),
        ("4.5.x", "Maven Central lists no Kafka 4.5 release"),
        ("5", "unknown Kafka version '5'"),
        ("", "unknown Kafka version ''"),
        ("0.11", "Maven Central has no Kafka 0.11"),
        ("4.1.x.x", "unknown Kafka version"),
        ("0.8.1.1", "not a release insync deploys"),
        ("nightly", "unknown Kafka version 'nightly'"),
    ],
)
def test_a_release_maven_central_lacks_is_a_one_line_usage_error(spec: str, says: str) -> None:
    with pytest.raises(UsageError) as err:
        resolve_version(spec)
    line = err.value.one_line()
    assert says in line
    assert "\n" not in line
    assert err.value.exit_code == 64


def test_same_spec_same_object() -> None:
    """Callers compare resolved versions by identity (``is``)."""
    assert resolve_version("4.2.x") is resolve_version("4.2.2") is release("4.2.2")


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
        "ERAS",
        "FLOOR",
        "KRAFT",
        "VERSIONS",
        "ZOOKEEPER",
        "Artifact",
        "Era",
        "KafkaVersion",
        "Logging",
        "Mode",
        "binding_for",
        "check_runnable",
        "feature_since",
        "known_versions",
        "line_of",
        "mode_span",
        "names_a_line",
        "parse_number",
        "release",
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
    # says which releases would do
    assert {KRAFT: "(3.3 and newer)", ZOOKEEPER: "(0.8.2 to before 4.0)"}[mode] in line


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.version)
@pytest.mark.parametrize("feature", ["idempotence", "transactions"])
def test_producer_features_start_at_0_11(version: KafkaVersion, feature: str) -> None:
    """Idempotent producers and transactions arrived with KIP-98 in 0.11.0."""
    assert version.can(feature) == (version.number >= (0, 11))
    assert feature_since(feature) == "0.11.0"


@pytest.mark.parametrize(
    ("version", "features"),
    [
        ("0.8.2.2", set()),
        ("0.9.0.1", {"subscribe", "brokers_in_metadata", "isr_in_metadata"}),
        ("0.10.0.1", {"subscribe", "api_versions", "brokers_in_metadata",
                      "controller_in_metadata", "isr_in_metadata"}),
        ("0.10.1.1", {"subscribe", "api_versions", "create_topics", "brokers_in_metadata",
                      "controller_in_metadata", "isr_in_metadata"}),
        ("0.11.0.0", set(CLIENT_FEATURES) - {"consumer_group_protocol", "group_fencing"}),
        ("3.9.1", set(CLIENT_FEATURES) - {"consumer_group_protocol"}),
        ("4.0.0", set(CLIENT_FEATURES)),
    ],
)
def test_old_client_features(version: str, features: set[str]) -> None:
    assert {f for f in CLIENT_FEATURES if release(version).can(f)} == features


@pytest.mark.parametrize("spec", ["0.9.0.1", "0.8.2.x", "0.10.0.x"])
def test_releases_without_create_topics_run_in_zookeeper_mode_only(spec: str) -> None:
    """Their topics go through ZooKeeper (``cluster.zk_topics``); KRaft is one line."""
    assert resolve_for_mode(spec, ZOOKEEPER).version.startswith("0.")
    with pytest.raises(UsageError, match=r"does not run in kraft mode") as refused:
        resolve_for_mode(spec, KRAFT)
    assert "\n" not in str(refused.value)
    assert "use --mode zookeeper" in (refused.value.hint or "")


@pytest.mark.parametrize(("version", "config_def"),
                         [("0.8.2.2", False), ("0.9.0.1", True), ("4.1.2", True)])
def test_where_a_release_s_broker_keys_come_from_is_era_data(version: str,
                                                             config_def: bool) -> None:
    assert release(version).config_def is config_def


def test_the_catalogue_pins_the_two_releases_before_0_10() -> None:
    assert {"0.9.0.1", "0.8.2.2"} <= set(known_versions())


@pytest.mark.parametrize(
    ("version", "scala"),
    [("0.8.2.2", "2.11"), ("0.10.1.0", "2.11"), ("0.10.1.1", "2.12"), ("2.3.1", "2.12"),
     ("2.4.0", "2.13"), ("4.4.0", "2.13")],
)
def test_scala_is_the_newest_maven_central_lists(version: str, scala: str) -> None:
    """The eras' Scala agrees with the recorded listings: the newest Scala listing it."""
    from cluster.distribution import default_cache_root
    from cluster.releases import listing

    assert release(version).scala == scala
    assert listing(default_cache_root()).scala_of(version) == scala


def test_every_listed_release_gets_an_artifact_that_maven_central_lists() -> None:
    from cluster.distribution import default_cache_root
    from cluster.releases import listing

    listed = listing(default_cache_root())
    for text in listed.versions:
        number = parse_number(text)
        if number is None or number < FLOOR:
            continue
        assert text in listed.scalas[release(text).scala], text


@pytest.mark.parametrize(
    ("version", "modes", "quorum_tool", "tools"),
    [
        ("3.2.3", {ZOOKEEPER}, None, False),
        ("3.3.2", {KRAFT, ZOOKEEPER}, "kafka.admin.MetadataQuorumCommand", False),
        ("3.4.0", {KRAFT, ZOOKEEPER}, "org.apache.kafka.tools.MetadataQuorumCommand", True),
        ("4.0.0", {KRAFT}, "org.apache.kafka.tools.MetadataQuorumCommand", True),
        ("4.4.0", {KRAFT}, "org.apache.kafka.tools.MetadataQuorumCommand", True),
    ],
)
def test_eras_give_modes_and_tools(
    version: str, modes: set[str], quorum_tool: str | None, tools: bool
) -> None:
    kafka = release(version)
    assert kafka.modes == modes
    assert kafka.quorum_tool_main == quorum_tool
    names = {a.coordinate for a in kafka.extra_artifacts}
    assert (f"org.apache.kafka:kafka-tools:{version}" in names) == tools


def test_brokers_without_api_versions_tell_the_client_their_version() -> None:
    assert dict(release("0.9.0.1").client_config) == {
        "api.version.request": "false", "broker.version.fallback": "0.9.0.1"}
    assert dict(release("0.8.2.2").client_config)["broker.version.fallback"] == "0.8.2.2"
    assert release("0.10.0.0").client_config == ()


@pytest.mark.parametrize(
    ("logging", "slf4j", "log4j", "coords"),
    [
        (Logging.LOG4J2, "1.7.36", "2.25.3", ["org.apache.logging.log4j:log4j-slf4j-impl:2.25.3"]),
        (Logging.LOG4J2, "2.0.17", "2.25.3",
         ["org.apache.logging.log4j:log4j-slf4j2-impl:2.25.3"]),
        (Logging.LOG4J1, "1.7.36", None,
         ["org.slf4j:slf4j-reload4j:1.7.36", "ch.qos.reload4j:reload4j:1.2.25"]),
        (Logging.LOG4J1, "1.7.30", None,
         ["org.slf4j:slf4j-log4j12:1.7.30", "log4j:log4j:1.2.17"]),
        (Logging.LOG4J1, None, None, []),
    ],
)
def test_binding_follows_the_trees_own_slf4j_and_log4j(
    logging: Logging, slf4j: str | None, log4j: str | None, coords: list[str]
) -> None:
    assert [a.coordinate for a in binding_for(logging, slf4j, log4j)] == coords


def test_versions_order_by_number() -> None:
    numbers = [v.number for v in VERSIONS]
    assert numbers == sorted(numbers, reverse=True)
    assert resolve_version("0.10.2").number == (0, 10, 2, 2)
