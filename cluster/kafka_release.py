"""What a deployable Kafka release is: its modes, logging backend, Maven artifacts and
the client features its brokers serve.

These are the types every layer passes around (``KafkaVersion`` above all); which
values a given release gets is decided by its eras (``cluster.eras``), and how a
person's ``--kafka-version`` turns into one by ``cluster.versions``. They live
apart so that a module needing only the shape of a release (a provisioner, the
distribution builder) does not read the resolution rules, and so that the
logging binding, a function of the release's own dependency tree, sits beside
the ``Logging`` backend it binds to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from cluster.version_order import order_key, parse_version

__all__ = [
    "BINDING_JARS",
    "CLIENT_FEATURES",
    "KAFKA_GROUP",
    "KRAFT",
    "ZOOKEEPER",
    "Artifact",
    "KafkaVersion",
    "Logging",
    "Mode",
    "binding_for",
    "feature_since",
    "line_of",
    "parse_number",
]

Mode = Literal["kraft", "zookeeper"]
KRAFT: Mode = "kraft"
ZOOKEEPER: Mode = "zookeeper"

KAFKA_GROUP = "org.apache.kafka"

#: Client features a broker must support, and the first line whose brokers do:
#: idempotent producers (KIP-98's producer ids and sequence numbers) and
#: transactions both arrived in 0.11.0. A 0.10 broker answers an idempotent
#: producer's InitProducerId with UNSUPPORTED_FEATURE, so the workload's default
#: idempotence follows this table (else every send of an ``--acks all`` run fails).
#: The rest: consumer groups with ``subscribe`` (the group coordinator) came in
#: 0.9.0; ApiVersions, which librdkafka asks first, in 0.10.0 (before it the
#: client is told the broker's version: ``KafkaVersion.client_config``); and
#: CreateTopics, with which insync creates every topic, in 0.10.1. KIP-848's consumer
#: group protocol (``group.protocol=consumer``) is served by default from 4.0, its
#: first generally available release.
CLIENT_FEATURES: dict[str, tuple[int, ...]] = {
    "idempotence": (0, 11, 0),
    "transactions": (0, 11, 0),
    "subscribe": (0, 9, 0),
    "api_versions": (0, 10, 0),
    "create_topics": (0, 10, 1),
    "consumer_group_protocol": (4, 0, 0),
    # Metadata v1 (0.10.0) names the controller; before it, ZooKeeper's /controller does
    "controller_in_metadata": (0, 10, 0),
    # a 0.8.2 broker's Metadata lists no broker while the cluster has no topic (measured:
    # "0 brokers, 0 topics" from a ready 3-broker cluster); 0.9.0.1's lists them
    "brokers_in_metadata": (0, 9, 0),
    # a leader's ISR change reaches the brokers' metadata through the controller
    # (/isr_change_notification: IsrChangeNotificationListener is in 0.9.0.1's jar, not
    # in 0.8.2.2's); before, the metadata keeps the ISR of the last leader election
    "isr_in_metadata": (0, 9, 0),
    # KIP-447: TxnOffsetCommit v3 carries the member's generation, so a member that lost
    # its partitions cannot commit offsets (docs/HISTORY-GROUPS.md, exactly-once)
    "group_fencing": (2, 5, 0),
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
    leader_election_main: str | None = None  # kafka-leader-election over the Admin API
    reassign_main: str | None = None  # kafka-reassign-partitions over the Admin API
    zookeeper_main: str | None = None  # a ZooKeeper server from the same classpath
    client_config: tuple[tuple[str, str], ...] = ()  # librdkafka settings these brokers need
    #: ceilings these brokers put on a consumer's settings (a group member asking for more
    #: is refused): every consumer of them is held at or below each (``kafka_clients``)
    consumer_limits: tuple[tuple[str, int], ...] = ()
    config_def: bool = True  # kafka.server.KafkaConfig is a ConfigDef (cluster.config_keys)
    notes: str = ""  # why the quirks above are there

    @property
    def line(self) -> str:
        """``major.minor`` (``0.11.0`` for the old four-part versions)."""
        return ".".join(map(str, line_of(self.number)))

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
        """The version's number (``(0, 10, 2, 2)``; ``(4, 5, 0)`` for ``4.5.0-SNAPSHOT``):
        what its eras and client features are decided by."""
        number = parse_version(self.version)
        assert number is not None  # release() builds only numbered versions
        return number

    @property
    def order(self) -> tuple[int, ...]:
        """Where the version sorts, builds included (``cluster.version_order``)."""
        key = order_key(self.version)
        assert key is not None
        return key

    def can(self, feature: str) -> bool:
        """Whether this version's brokers serve the client ``feature`` (``CLIENT_FEATURES``)."""
        return self.number >= CLIENT_FEATURES[feature]


def line_of(number: tuple[int, ...]) -> tuple[int, ...]:
    """``(0, 10, 2, 2)`` -> ``(0, 10, 2)``; ``(4, 1, 2)`` -> ``(4, 1)``: a line is three
    parts before 1.0, when the minor number was the second, and two after."""
    return number[:3] if number[0] == 0 else number[:2]


def parse_number(text: str) -> tuple[int, ...] | None:
    """``"0.10.2.2"`` -> ``(0, 10, 2, 2)``; None for anything but a plain release number."""
    parts = text.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def feature_since(feature: str) -> str:
    """The first release line whose brokers serve ``feature`` (``0.11.0``), for messages."""
    return ".".join(str(n) for n in CLIENT_FEATURES[feature])


#: The slf4j binding a release's logging flavour needs, as a function of the
#: slf4j-api and log4j-core versions in its own tree: slf4j-reload4j exists from
#: slf4j 1.7.33; log4j2 has one binding for slf4j 1.x and another for 2.x.
BINDING_JARS = ("slf4j-log4j12", "slf4j-reload4j", "log4j-slf4j-impl", "log4j-slf4j2-impl")


def binding_for(logging: Logging, slf4j: str | None, log4j: str | None) -> tuple[Artifact, ...]:
    """The artifacts that bind slf4j ``slf4j`` to ``logging`` (log4j-core ``log4j`` for 4.x)."""
    if slf4j is None:
        return ()
    numbers = tuple(int(p) for p in re.findall(r"\d+", slf4j)[:3])
    if logging is Logging.LOG4J2:
        if log4j is None:
            raise ValueError("a log4j2 release without log4j-core in its tree")
        name = "log4j-slf4j2-impl" if numbers >= (2,) else "log4j-slf4j-impl"
        return (Artifact("org.apache.logging.log4j", name, log4j),)
    if numbers >= (1, 7, 33):
        return (Artifact("org.slf4j", "slf4j-reload4j", slf4j),
                Artifact("ch.qos.reload4j", "reload4j", "1.2.25"))
    return (Artifact("org.slf4j", "slf4j-log4j12", slf4j), Artifact("log4j", "log4j", "1.2.17"))
