"""JVM argv rendering and KRaft cluster ids: pure functions, no JVM started."""

from __future__ import annotations

import base64

import pytest

from cluster import jvm
from cluster.versions import VERSIONS, KafkaVersion, resolve_version
from harness.base.errors import UsageError

V41 = resolve_version("4.1.x")
V39 = resolve_version("3.9.x")
V010 = resolve_version("0.10.2.2")


def _main_and_args(argv: list[str]) -> tuple[list[str], str, list[str]]:
    """Split an argv at the classpath: (JVM options, main class, program args)."""
    cp = argv.index("-cp")
    return argv[1:cp], argv[cp + 2], argv[cp + 3 :]


def test_broker_argv_4_1_uses_log4j2_and_container_paths() -> None:
    argv = jvm.broker_argv(V41, properties="/etc/kafka/server.properties", log_dir="/var/log/kafka")
    opts, main, args = _main_and_args(argv)
    assert argv[0] == "java"
    assert argv[argv.index("-cp") + 1] == "/opt/kafka/libs/*"
    assert main == "kafka.Kafka"
    assert args == ["/etc/kafka/server.properties"]
    assert "-Xms384m" in opts and "-Xmx384m" in opts
    assert "-Dkafka.logs.dir=/var/log/kafka" in opts
    assert "-Dlog4j2.configurationFile=file:/opt/kafka/config/log4j2.properties" in opts
    assert not any(o.startswith("-Dlog4j.configuration=") for o in opts)


def test_broker_argv_3_9_uses_log4j1_config_and_custom_home_and_heap() -> None:
    argv = jvm.broker_argv(
        V39, properties="/p", log_dir="/logs", kafka_home="/kafka/", heap_mb=512, java="/j/java"
    )
    opts, _, _ = _main_and_args(argv)
    assert argv[0] == "/j/java"
    assert argv[argv.index("-cp") + 1] == "/kafka/libs/*"
    assert "-Dlog4j.configuration=file:/kafka/config/log4j.properties" in opts
    assert "-Xmx512m" in opts and "-Xmx384m" not in opts
    assert any(o.startswith("-Xlog:gc*:file=/logs/kafkaServer-gc.log") for o in opts)


def test_version_jvm_flags_go_before_the_main_class() -> None:
    quirky = KafkaVersion(**{**V010.__dict__, "jvm_flags": ("--add-opens=a/b=ALL-UNNAMED",)})
    for argv in (
        jvm.broker_argv(quirky, properties="/p", log_dir="/l"),
        jvm.zookeeper_argv(quirky, config="/z", log_dir="/l"),
    ):
        opts, _, _ = _main_and_args(argv)
        assert opts[-1] == "--add-opens=a/b=ALL-UNNAMED"


def test_tiny_heap_is_refused() -> None:
    with pytest.raises(UsageError, match="too small"):
        jvm.broker_argv(V41, properties="/p", log_dir="/l", heap_mb=16)


@pytest.mark.parametrize("version", [V41, V39], ids=["4.1", "3.9"])
def test_format_argv(version: KafkaVersion) -> None:
    argv = jvm.format_argv(version, cluster_id="abc", properties="/etc/kafka/server.properties")
    opts, main, args = _main_and_args(argv)
    assert main == "kafka.tools.StorageTool"
    assert args == [
        "format",
        "-t",
        "abc",
        "-c",
        "/etc/kafka/server.properties",
        "--ignore-formatted",
    ]
    cfg = version.logging.tools_config
    assert f"-D{version.logging.config_property}=file:/opt/kafka/config/{cfg}" in opts
    assert "-Xmx256m" in opts


def test_quorum_argv() -> None:
    argv = jvm.quorum_argv(V41, bootstrap="localhost:9092")
    _, main, args = _main_and_args(argv)
    assert main == "org.apache.kafka.tools.MetadataQuorumCommand"
    assert args == [
        "--bootstrap-server",
        "localhost:9092",
        "--command-config",
        "/opt/kafka/config/tools-admin.properties",
        "describe",
        "--status",
    ]


def test_zookeeper_argv_runs_quorum_peer_main_from_kafka_classpath() -> None:
    argv = jvm.zookeeper_argv(V39, config="/etc/zookeeper/zoo.cfg", log_dir="/var/log/zk")
    opts, main, args = _main_and_args(argv)
    assert argv[argv.index("-cp") + 1] == "/opt/kafka/libs/*"
    assert main == "org.apache.zookeeper.server.quorum.QuorumPeerMain"
    assert args == ["/etc/zookeeper/zoo.cfg"]
    assert "-Dkafka.logs.dir=/var/log/zk" in opts
    assert "-Dzookeeper.admin.enableServer=false" in opts


def test_kraft_tools_refused_for_zookeeper_only_versions() -> None:
    with pytest.raises(UsageError, match="no KRaft storage tool"):
        jvm.format_argv(V010, cluster_id="x", properties="/p")
    with pytest.raises(UsageError, match="no metadata quorum tool"):
        jvm.quorum_argv(V010, bootstrap="h:1")


def test_zookeeper_refused_for_kraft_only_version() -> None:
    with pytest.raises(UsageError, match="does not run with ZooKeeper"):
        jvm.zookeeper_argv(V41, config="/z", log_dir="/l")


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.version)
def test_every_version_renders_a_broker_argv(version: KafkaVersion) -> None:
    argv = jvm.broker_argv(version, properties="/p", log_dir="/l")
    assert argv[-2:] == [version.broker_main, "/p"]
    assert all(isinstance(a, str) and a for a in argv)


def test_new_cluster_id_is_kafka_uuid_form() -> None:
    ids = {jvm.new_cluster_id() for _ in range(500)}
    assert len(ids) == 500
    for cid in ids:
        assert len(cid) == 22
        assert not cid.startswith("-")
        assert "=" not in cid and "+" not in cid and "/" not in cid
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16
        assert jvm.is_cluster_id(cid)


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("MkU3OEVBNTcwNTJENDM2Qk", True),  # the example id in Kafka's quickstart docs
        ("MkU3OEVBNTcwNTJENDM2Qk==", False),
        ("MkU3OEVBNTcwNTJENDM2Q", False),
        ("MkU3OEVBNTcwNTJENDM2Q!", False),
        ("MkU3OEVBNTcwNTJENDM2Q+", False),
    ],
)
def test_is_cluster_id(text: str, ok: bool) -> None:
    assert jvm.is_cluster_id(text) is ok


def test_public_names_are_pinned() -> None:
    """Other layers import these; renaming one is an API change, not a refactor."""
    import importlib

    module = importlib.import_module("cluster.jvm")
    assert module.__all__ == [
        "DEFAULT_HEAP_MB",
        "KAFKA_HOME",
        "admin_config",
        "broker_argv",
        "classpath",
        "dump_log_argv",
        "format_argv",
        "is_cluster_id",
        "new_cluster_id",
        "quorum_argv",
        "tool_argv",
        "zookeeper_argv",
    ]
    assert all(hasattr(module, name) for name in module.__all__)


def test_the_dump_tool_prints_every_record_of_the_segments_given() -> None:
    from cluster.versions import resolve_version

    argv = jvm.dump_log_argv(resolve_version("0.10.2.x"), ["/d/a.log", "/d/b.log"])
    assert argv[argv.index(jvm.DUMP_LOG_MAIN) + 1:] == [
        "--deep-iteration", "--print-data-log", "--files", "/d/a.log,/d/b.log"]
    assert argv[0] == "java" and "-cp" in argv
