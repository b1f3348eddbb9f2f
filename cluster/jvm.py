"""The exact ``java`` command lines that run a Kafka distribution.

Pure functions of a :class:`KafkaVersion` and paths on the node: no I/O, so the
argv a node will run can be rendered, logged and unit-tested without a node.
They replace ``kafka-run-class.sh``: insync resolves jars from Maven, not a
tarball, so there are no scripts, and writing the flags out here means every
JVM's options are visible in one place.

Paths are paths *on the node*: the provisioner puts the distribution's cache
directory (``~/.cache/insync/kafka/<version>``) at the node's ``kafka_home``
(``/opt/kafka`` by default), giving ``/opt/kafka/libs/*`` and
``/opt/kafka/config/*.properties``.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Sequence
from pathlib import PurePath, PurePosixPath

from cluster.versions import KafkaVersion
from harness.base.errors import UsageError

__all__ = [
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

KAFKA_HOME = PurePosixPath("/opt/kafka")
DEFAULT_HEAP_MB = 384  # five brokers must fit next to each other on a 2-core box
TOOL_HEAP_MB = 256  # kafka-run-class.sh's default for command-line tools
ZOOKEEPER_HEAP_MB = 256
MIN_HEAP_MB = 64
ADMIN_CONFIG = "tools-admin.properties"  # under config/, see dist_files/
OPS_ADMIN_CONFIG = "tools-ops-admin.properties"  # the operation tools' (admin_tools)
_CLUSTER_ID = re.compile(r"[A-Za-z0-9_-]{22}")

# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS, minus what Java 17 ignores.
_BROKER_GC = (
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)

# ZooKeeper 3.5+ starts an HTTP admin server on :8080 by default: nobody uses
# it and co-located ZooKeepers would fight over the port. 4lw commands (ruok,
# stat) are allow-listed so a readiness check can use them. 3.4 ignores both.
_ZOOKEEPER_PROPS = (
    "-Dzookeeper.admin.enableServer=false",
    "-Dzookeeper.4lw.commands.whitelist=*",
)


def _home(kafka_home: str | PurePath) -> PurePosixPath:
    return PurePosixPath(str(kafka_home))


def classpath(kafka_home: str | PurePath = KAFKA_HOME) -> str:
    """All jars in ``libs/``; the JVM expands the wildcard itself, no shell needed."""
    return f"{_home(kafka_home) / 'libs'}/*"


def _heap(heap_mb: int, *, fixed: bool) -> list[str]:
    if heap_mb < MIN_HEAP_MB:
        raise UsageError(
            f"a heap of {heap_mb} MiB is too small for a Kafka JVM",
            hint=f"use at least {MIN_HEAP_MB} MiB (default {DEFAULT_HEAP_MB})",
        )
    return [f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m"] if fixed else [f"-Xmx{heap_mb}m"]


def _logging(version: KafkaVersion, kafka_home: str | PurePath, *, tool: bool) -> str:
    flavour = version.logging
    name = flavour.tools_config if tool else flavour.broker_config
    return f"-D{flavour.config_property}=file:{_home(kafka_home) / 'config' / name}"


def broker_argv(
    version: KafkaVersion,
    *,
    properties: str | PurePath,
    log_dir: str | PurePath,
    kafka_home: str | PurePath = KAFKA_HOME,
    heap_mb: int = DEFAULT_HEAP_MB,
    java: str = "java",
) -> list[str]:
    """``java ... kafka.Kafka <properties>``: the broker (and KRaft controller).

    ``log_dir`` must exist before the JVM starts (``kafka-run-class.sh`` creates
    it too): the GC log goes there, and the JVM refuses to start when it cannot
    open that file.
    """
    return [
        java,
        *_heap(heap_mb, fixed=True),
        *_BROKER_GC,
        f"-Xlog:gc*:file={PurePosixPath(str(log_dir)) / 'kafkaServer-gc.log'}"
        ":time,tags:filecount=10,filesize=100M",
        f"-Dkafka.logs.dir={log_dir}",
        _logging(version, kafka_home, tool=False),
        *version.jvm_flags,
        "-cp",
        classpath(kafka_home),
        version.broker_main,
        str(properties),
    ]


def format_argv(
    version: KafkaVersion,
    *,
    cluster_id: str,
    properties: str | PurePath,
    kafka_home: str | PurePath = KAFKA_HOME,
    java: str = "java",
    quorum: Sequence[str] = (),
) -> list[str]:
    """KRaft ``StorageTool format``: binds the log dirs to ``cluster_id``; idempotent.
    ``quorum``: a dynamic quorum's flags (``--initial-controllers ...`` on a controller,
    ``--no-initial-controllers`` on a broker), none for a static one."""
    if version.storage_tool_main is None:
        raise UsageError(
            f"Kafka {version.version} has no KRaft storage tool",
            hint="KRaft needs Kafka 3.x or later; use --mode zookeeper for this version",
        )
    return [
        *_tool_prefix(version, kafka_home, java),
        version.storage_tool_main,
        "format",
        "-t",
        cluster_id,
        "-c",
        str(properties),
        *version.storage_format_flags,
        *quorum,
    ]


def quorum_argv(
    version: KafkaVersion,
    *,
    bootstrap: str,
    kafka_home: str | PurePath = KAFKA_HOME,
    java: str = "java",
) -> list[str]:
    """``kafka-metadata-quorum describe --status``: prints the LeaderId (active controller).

    The admin client gets ``config/tools-admin.properties``: it gives up after
    about 8 s when ``bootstrap`` is unreachable, instead of the 60 s default.
    """
    if version.quorum_tool_main is None:
        raise UsageError(
            f"Kafka {version.version} has no metadata quorum tool",
            hint="the tool exists from Kafka 3.3 on, in KRaft mode",
        )
    return [
        *_tool_prefix(version, kafka_home, java),
        version.quorum_tool_main,
        "--bootstrap-server",
        bootstrap,
        "--command-config",
        admin_config(kafka_home),
        "describe",
        "--status",
    ]


#: The log-segment dump tool: the same class from 0.10.2 to 4.1.
DUMP_LOG_MAIN = "kafka.tools.DumpLogSegments"


def dump_log_argv(
    version: KafkaVersion,
    files: Sequence[str],
    *,
    kafka_home: str | PurePath = KAFKA_HOME,
    java: str = "java",
) -> list[str]:
    """``DumpLogSegments`` printing every record of ``files`` (``*.log`` segments) with its
    offset and value; ``--deep-iteration`` reaches into the compressed message sets of
    0.10 (later versions iterate records deeply anyway)."""
    return [
        *_tool_prefix(version, kafka_home, java),
        DUMP_LOG_MAIN,
        "--deep-iteration",
        "--print-data-log",
        "--files",
        ",".join(files),
    ]


def zookeeper_argv(
    version: KafkaVersion,
    *,
    config: str | PurePath,
    log_dir: str | PurePath,
    kafka_home: str | PurePath = KAFKA_HOME,
    heap_mb: int = ZOOKEEPER_HEAP_MB,
    java: str = "java",
) -> list[str]:
    """A ZooKeeper server from the jars Kafka already depends on (no second download)."""
    if version.zookeeper_main is None:
        raise UsageError(
            f"Kafka {version.version} does not run with ZooKeeper",
            hint="use --mode kraft for this version",
        )
    return [
        java,
        *_heap(heap_mb, fixed=True),
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={log_dir}",
        _logging(version, kafka_home, tool=False),
        *_ZOOKEEPER_PROPS,
        *version.jvm_flags,
        "-cp",
        classpath(kafka_home),
        version.zookeeper_main,
        str(config),
    ]


def tool_argv(
    version: KafkaVersion,
    main: str,
    args: Sequence[str],
    *,
    kafka_home: str | PurePath = KAFKA_HOME,
    java: str = "java",
) -> list[str]:
    """One of the distribution's command-line tools (``main``, its class) with ``args``,
    as ``kafka-run-class.sh`` would run it."""
    return [*_tool_prefix(version, kafka_home, java), main, *args]


def admin_config(kafka_home: str | PurePath = KAFKA_HOME, name: str = ADMIN_CONFIG) -> str:
    """The admin client settings a tool gets (``config/tools-admin.properties``: a quick
    answer; ``OPS_ADMIN_CONFIG``: Kafka's own patience, for operations)."""
    return str(_home(kafka_home) / "config" / name)


def _tool_prefix(version: KafkaVersion, kafka_home: str | PurePath, java: str) -> list[str]:
    return [
        java,
        *_heap(TOOL_HEAP_MB, fixed=False),
        "-Djava.awt.headless=true",
        _logging(version, kafka_home, tool=True),
        *version.jvm_flags,
        "-cp",
        classpath(kafka_home),
    ]


def new_cluster_id() -> str:
    """A fresh KRaft cluster id, as ``kafka-storage random-uuid`` prints it.

    Kafka's ``Uuid.toString`` is the 16 bytes base64url-encoded without padding
    (22 characters); ``Uuid.randomUuid`` rejects ids starting with ``-`` (they
    look like a command-line flag) and the reserved all-zero id, and so do we.
    """
    while True:
        raw = uuid.uuid4().bytes
        text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
        if not text.startswith("-") and any(raw):
            return text


def is_cluster_id(text: str) -> bool:
    """Whether ``text`` is a cluster id in the form Kafka prints: 22 base64url characters.

    Like Kafka's ``Uuid.fromString`` (Java's lenient decoder) this does not insist
    that the unused low bits of the last character are zero: the id in Kafka's
    own quickstart, ``MkU3OEVBNTcwNTJENDM2Qk``, has them set.
    """
    return _CLUSTER_ID.fullmatch(text) is not None
