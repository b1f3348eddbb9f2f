"""Every Kafka version insync can deploy, and everything that differs between them.

A Kafka "line" (4.1, 3.9, ...) is one frozen :class:`KafkaVersion` row in
``VERSIONS``. The rest of the ``cluster`` package reads only these fields, so
supporting another version means adding a row and its quirks here, not
sprinkling ``if version < ...`` through the code.

The exact patch of each line is pinned (not "newest at run time") so that two
runs a month apart test the same bytes; bumping a patch is a one-line change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from harness.base.errors import UsageError

__all__ = [
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

Mode = Literal["kraft", "zookeeper"]
KRAFT: Mode = "kraft"
ZOOKEEPER: Mode = "zookeeper"

KAFKA_GROUP = "org.apache.kafka"

#: Client features a broker must support, and the first line whose brokers do:
#: idempotent producers (KIP-98's producer ids and sequence numbers) and
#: transactions both arrived in 0.11.0. A 0.10 broker answers an idempotent
#: producer's InitProducerId with UNSUPPORTED_FEATURE, so every send of an
#: ``--acks all`` run failed before the workload's default followed this table.
CLIENT_FEATURES: dict[str, tuple[int, ...]] = {
    "idempotence": (0, 11, 0),
    "transactions": (0, 11, 0),
}


class Logging(Enum):
    """Which logging backend the broker's slf4j calls end up in.

    Decides which binding jars are resolved, which configuration file is
    written, and which system property points the JVM at it.
    """

    LOG4J1 = "log4j1"  # log4j 1.2.17 or reload4j behind an slf4j 1.7 binding
    LOG4J2 = "log4j2"  # Kafka 4.x: log4j-core behind log4j-slf4j-impl

    @property
    def config_property(self) -> str:
        """The system property the backend reads its configuration file from."""
        return "log4j.configuration" if self is Logging.LOG4J1 else "log4j2.configurationFile"

    @property
    def broker_config(self) -> str:
        """File name (under the distribution's ``config/``) for brokers and ZooKeeper."""
        return "log4j.properties" if self is Logging.LOG4J1 else "log4j2.properties"

    @property
    def tools_config(self) -> str:
        """File name for command-line tools: warnings only, to stderr."""
        return "tools-log4j.properties" if self is Logging.LOG4J1 else "tools-log4j2.properties"


@dataclass(frozen=True)
class Artifact:
    """One Maven dependency put into the generated pom, with optional exclusions."""

    group: str
    artifact: str
    version: str
    exclusions: tuple[str, ...] = ()  # "group:artifact" pairs left out of the tree

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"


@dataclass(frozen=True)
class KafkaVersion:
    """One deployable Kafka release and its quirks on Java 17."""

    version: str  # exact release, e.g. "4.1.2"
    scala: str  # Scala binary version of the kafka_<scala> core jar
    modes: frozenset[Mode]
    logging: Logging
    extra_artifacts: tuple[Artifact, ...] = ()  # beyond kafka_<scala>: tools, bindings, ...
    jvm_flags: tuple[str, ...] = ()  # needed to run this version on Java 17
    broker_main: str = "kafka.Kafka"
    storage_tool_main: str | None = None  # KRaft "format"; None without KRaft
    storage_format_flags: tuple[str, ...] = ()  # extra flags for "format"
    quorum_tool_main: str | None = None  # "describe --status" (3.3+)
    zookeeper_main: str | None = None  # a ZooKeeper server from the same classpath
    notes: str = ""  # why the quirks above are there

    @property
    def line(self) -> str:
        """``major.minor`` (``0.11.0`` for the old four-part versions)."""
        parts = self.version.split(".")
        return ".".join(parts[:3] if parts[0] == "0" else parts[:2])

    @property
    def kafka_artifact(self) -> Artifact:
        return Artifact(KAFKA_GROUP, f"kafka_{self.scala}", self.version)

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        """Everything the generated pom depends on; Maven adds the transitive rest."""
        return (self.kafka_artifact, *self.extra_artifacts)

    def supports(self, mode: str) -> bool:
        return mode in self.modes

    @property
    def number(self) -> tuple[int, ...]:
        """The release as numbers, for ordering (``(0, 10, 2, 2)`` < ``(4, 1, 2)``)."""
        return tuple(int(p) for p in self.version.split("."))

    def can(self, feature: str) -> bool:
        """Whether this version's brokers serve the client ``feature`` (``CLIENT_FEATURES``)."""
        return self.number >= CLIENT_FEATURES[feature]


def _kafka(artifact: str, version: str, *exclusions: str) -> Artifact:
    return Artifact(KAFKA_GROUP, artifact, version, exclusions)


# kafka-tools pulls in all of Kafka Connect (Jetty, Jersey, ~20 MB) for tools
# insync never runs; the metadata-quorum tool needs none of it.
_NO_CONNECT = "org.apache.kafka:connect-runtime"
_ZK_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
_JAXB = Artifact("javax.xml.bind", "jaxb-api", "2.3.1")
# Measured on Java 17: without jaxb-api the broker dies at startup with
# NoClassDefFoundError javax/xml/bind/DatatypeConverter. No JVM flag is needed
# or helps with the other quirk: deleting an index (retention, topic deletion)
# logs "ERROR Error when freeing index buffer" (IllegalAccessError on
# sun.nio.ch.DirectBuffer; with --add-exports it becomes NoSuchMethodError for
# the Java 8 Cleaner); Kafka catches it, the file is still deleted on Linux,
# the mapping is freed at GC.
_OLD_INDEX_NOTE = (
    "POM brings slf4j-log4j12; jaxb-api for DatatypeConverter; "
    "index deletion logs a harmless 'Error when freeing index buffer' on Java 17"
)


def _log4j1(slf4j: str) -> tuple[Artifact, ...]:
    """The log4j 1.2.17 binding Kafka 1.1 to 2.8 shipped in its tarball's libs/."""
    return (
        Artifact("org.slf4j", "slf4j-log4j12", slf4j),
        Artifact("log4j", "log4j", "1.2.17"),
    )


VERSIONS: tuple[KafkaVersion, ...] = (
    KafkaVersion(
        version="4.1.2",
        scala="2.13",
        modes=frozenset({KRAFT}),
        logging=Logging.LOG4J2,
        extra_artifacts=(
            _kafka("kafka-tools", "4.1.2", _NO_CONNECT),
            # kafka-server brings log4j-api/core 2.25.3 but no slf4j 1.7 provider.
            Artifact("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.3"),
        ),
        storage_tool_main="kafka.tools.StorageTool",
        storage_format_flags=("--ignore-formatted",),
        quorum_tool_main="org.apache.kafka.tools.MetadataQuorumCommand",
        notes="KRaft only; log4j2 as in the 4.x tarball",
    ),
    KafkaVersion(
        version="3.9.2",
        scala="2.13",
        modes=frozenset({KRAFT, ZOOKEEPER}),
        logging=Logging.LOG4J1,
        extra_artifacts=(
            _kafka("kafka-tools", "3.9.2", _NO_CONNECT),
            Artifact("org.slf4j", "slf4j-reload4j", "1.7.36"),
            Artifact("ch.qos.reload4j", "reload4j", "1.2.25"),
        ),
        storage_tool_main="kafka.tools.StorageTool",
        storage_format_flags=("--ignore-formatted",),
        quorum_tool_main="org.apache.kafka.tools.MetadataQuorumCommand",
        zookeeper_main=_ZK_MAIN,
        notes="last line with ZooKeeper mode; reload4j as in the 3.x tarball",
    ),
    KafkaVersion(
        version="2.8.2",
        scala="2.13",
        modes=frozenset({ZOOKEEPER}),
        logging=Logging.LOG4J1,
        extra_artifacts=_log4j1("1.7.30"),
        zookeeper_main=_ZK_MAIN,
        notes="KRaft in 2.8 was an unsupported preview: ZooKeeper mode only",
    ),
    KafkaVersion(
        version="1.1.1",
        scala="2.12",
        modes=frozenset({ZOOKEEPER}),
        logging=Logging.LOG4J1,
        extra_artifacts=_log4j1("1.7.25"),
        zookeeper_main=_ZK_MAIN,
        notes="from 1.1 the kafka POM no longer depends on a logging binding",
    ),
    KafkaVersion(
        version="0.11.0.3",
        scala="2.12",
        modes=frozenset({ZOOKEEPER}),
        logging=Logging.LOG4J1,
        extra_artifacts=(_JAXB,),
        zookeeper_main=_ZK_MAIN,
        notes=_OLD_INDEX_NOTE,
    ),
    KafkaVersion(
        version="0.10.2.2",
        scala="2.12",
        modes=frozenset({ZOOKEEPER}),
        logging=Logging.LOG4J1,
        extra_artifacts=(_JAXB,),
        zookeeper_main=_ZK_MAIN,
        notes=_OLD_INDEX_NOTE,
    ),
)

_SPEC = re.compile(r"^(?P<line>\d+\.\d+(?:\.\d+)?)(?:\.x)?$")


def feature_since(feature: str) -> str:
    """The first release line whose brokers serve ``feature`` (``0.11.0``), for messages."""
    return ".".join(str(n) for n in CLIENT_FEATURES[feature])


def known_versions() -> list[str]:
    return [v.version for v in VERSIONS]


def resolve_version(spec: str) -> KafkaVersion:
    """Turn ``4.1.x``, ``4.1`` or an exact ``4.1.2`` into its table row.

    A line spec (``4.1``/``4.1.x``, ``0.11.0``/``0.11.0.x``) picks the line's pinned
    patch; an exact version must be the pinned one, because only that one has
    had its quirks worked out.
    """
    text = spec.strip().lower().removeprefix("v")
    for version in VERSIONS:
        if text == version.version:
            return version
    match = _SPEC.match(text)
    if match is not None:
        for version in VERSIONS:
            if match.group("line") == version.line:
                return version
    known = ", ".join(f"{v.line}.x ({v.version})" for v in VERSIONS)
    raise UsageError(
        f"unknown Kafka version {spec!r}; known: {known}",
        hint="pass a line such as 4.1.x or one of the exact versions listed",
    )


def resolve_for_mode(spec: str, mode: str) -> KafkaVersion:
    """``resolve_version``, and refuse a mode the line cannot run (ZooKeeper on 4.x, ...).

    Pure table lookups, so every command can check this before it creates a
    directory or asks Docker anything.
    """
    version = resolve_version(spec)
    if not version.supports(mode):
        modes = sorted(version.modes)
        others = [v.line + ".x" for v in VERSIONS if v.supports(mode)]
        raise UsageError(
            f"Kafka {version.version} does not run in {mode} mode",
            hint=f"use --mode {' or '.join(modes)}"
            + (f", or a version that has {mode} mode: {', '.join(others)}" if others else ""),
        )
    return version
