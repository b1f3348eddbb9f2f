"""Which quirks each Kafka release has, derived from its number by eras.

Each era is the first release where something changed (Scala of the core jar,
modes, tools, logging, client settings) and why. Nothing here is a row per
release: a release gets its quirks from the eras it falls in, so a new release
needs no change at all unless it changes something, and then the change is one
era. The pinned catalogue releases (``VERSIONS``) are built from the eras too.
Turning a person's ``--kafka-version`` into a release is ``cluster.versions``'s job;
this module never asks Maven Central anything.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from cluster.kafka_release import (
    KAFKA_GROUP,
    KRAFT,
    ZOOKEEPER,
    Artifact,
    KafkaVersion,
    Logging,
    line_of,
)
from cluster.version_order import parse_version
from harness.base.errors import UsageError

__all__ = ["ERAS", "FLOOR", "SAME", "VERSIONS", "Era", "mode_span", "release", "version_text"]


def _kafka(artifact: str, version: str, *exclusions: str) -> Artifact:
    return Artifact(KAFKA_GROUP, artifact, version, exclusions)


# kafka-tools pulls in all of Kafka Connect (Jetty, Jersey, ~20 MB) for tools
# insync never runs; the metadata-quorum tool needs none of it.
_NO_CONNECT = "org.apache.kafka:connect-runtime"
_ZK_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
_JAXB = Artifact("javax.xml.bind", "jaxb-api", "2.3.1")
#: Stands for "this release's own version" in an era's artifacts and client settings.
SAME = "{version}"


@dataclass(frozen=True)
class Era:
    """From release ``since`` on (until a later era says otherwise), these fields hold.

    ``changes`` are :class:`KafkaVersion` fields; ``"{version}"`` in an
    artifact's version or a client setting stands for the release's own.
    """

    since: tuple[int, ...]
    why: str
    changes: dict[str, Any] = field(default_factory=dict)


#: Oldest first. Each is measured or read from the release's jars and POM.
ERAS: tuple[Era, ...] = (
    Era((0, 8, 2), "first release insync deploys: ZooKeeper mode, Scala 2.11; its POM brings "
        "slf4j-log4j12; jaxb-api for DatatypeConverter on Java 17; no ApiVersions, so "
        "librdkafka is told the broker's version", {
            "scala": "2.11",
            "modes": frozenset({ZOOKEEPER}),
            "logging": Logging.LOG4J1,
            "extra_artifacts": (_JAXB,),
            "zookeeper_main": _ZK_MAIN,
            "client_config": (("api.version.request", "false"),
                              ("broker.version.fallback", SAME)),
            "config_def": False,
        }),
    Era((0, 9, 0), "kafka.server.KafkaConfig is a ConfigDef (before, its keys are the "
        "string constants of KafkaConfig and ZKConfig)", {"config_def": True}),
    Era((0, 9, 0), "the group coordinator refuses a member whose session.timeout.ms is above "
        "its group.max.session.timeout.ms, 30000 (0.9.0.1's jar; librdkafka's default "
        "is 45000)", {"consumer_limits": (("session.timeout.ms", 30_000),)}),
    Era((0, 10, 0), "ApiVersions: librdkafka asks the broker", {"client_config": ()}),
    Era((0, 10, 1), "KIP-62 raised group.max.session.timeout.ms to 300000 (0.10.1.1's jar), "
        "above librdkafka's default", {"consumer_limits": ()}),
    Era((0, 10, 1, 1), "kafka_2.12 published from here", {"scala": "2.12"}),
    Era((1, 1), "the kafka POM no longer depends on a logging binding (binding_for adds "
        "one); its core no longer needs jaxb-api", {"extra_artifacts": ()}),
    Era((2, 4), "kafka_2.13 published from here", {"scala": "2.13"}),
    Era((2, 4), "kafka-leader-election (KIP-460): kafka.admin.LeaderElectionCommand", {
        "leader_election_main": "kafka.admin.LeaderElectionCommand",
    }),
    Era((2, 6), "kafka-reassign-partitions over the Admin API alone (KIP-455; 2.5.1's "
        "still requires --zookeeper, 2.6.3's deprecates it)", {
        "reassign_main": "kafka.admin.ReassignPartitionsCommand",
    }),
    Era((3, 3), "KRaft production-ready (2.8 to 3.2: an unsupported preview)", {
        "modes": frozenset({KRAFT, ZOOKEEPER}),
        "storage_tool_main": "kafka.tools.StorageTool",
        "storage_format_flags": ("--ignore-formatted",),
        "quorum_tool_main": "kafka.admin.MetadataQuorumCommand",
    }),
    Era((3, 4), "the metadata-quorum tool moved to kafka-tools", {
        "extra_artifacts": (_kafka("kafka-tools", SAME, _NO_CONNECT),),
        "quorum_tool_main": "org.apache.kafka.tools.MetadataQuorumCommand",
    }),
    Era((3, 7), "the leader-election and reassignment tools moved to kafka-tools (absent "
        "from 3.6.2's kafka-tools jar, present in 3.7.2's)", {
        "leader_election_main": "org.apache.kafka.tools.LeaderElectionCommand",
        "reassign_main": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    }),
    Era((4, 0), "ZooKeeper mode removed; log4j2 as in the 4.x tarball", {
        "modes": frozenset({KRAFT}),
        "logging": Logging.LOG4J2,
        "zookeeper_main": None,
    }),
)
FLOOR = ERAS[0].since


def _fill(value: Any, version: str) -> Any:
    if isinstance(value, str):
        return value.replace(SAME, version)
    if isinstance(value, Artifact):
        return replace(value, version=value.version.replace(SAME, version))
    if isinstance(value, tuple):
        return tuple(_fill(v, version) for v in value)
    return value


@functools.cache
def release(version: str) -> KafkaVersion:
    """The :class:`KafkaVersion` of an exact release number, from the eras it falls in.

    A build's version (``4.5.0-SNAPSHOT``, ``4.4.0-rc1``) gets the eras of its
    number. Pure and memoised (the same string gives the same object). It does
    not ask whether Maven Central has the release: :func:`resolve_version` does.
    """
    number = parse_version(version)
    if number is None or number < FLOOR:
        raise UsageError(
            f"Kafka {version!r} is not a release insync deploys "
            f"(releases {'.'.join(map(str, FLOOR))} and newer, e.g. 4.1.2)",
            hint="pass a release number, a line such as 4.2.x, or latest",
        )
    fields: dict[str, Any] = {}
    notes: list[str] = []
    for era in ERAS:
        if number >= era.since:
            fields.update({k: _fill(v, version) for k, v in era.changes.items()})
            notes.append(era.why)
    return KafkaVersion(version=version, notes="; ".join(notes), **fields)


#: The releases the scenario catalogue's version columns stand for, newest first.
#: Pinned so that two catalogue runs a month apart test the same bytes.
VERSIONS: tuple[KafkaVersion, ...] = tuple(
    release(v)
    for v in ("4.4.0", "4.3.1", "4.2.2", "4.1.2", "3.9.2", "2.8.2", "1.1.1", "0.11.0.3", "0.10.2.2",
                "0.9.0.1", "0.8.2.2")
)


def version_text(number: tuple[int, ...]) -> str:
    """``(4, 1)`` -> ``"4.1"``."""
    return ".".join(map(str, number))


def mode_span(mode: str) -> str:
    """Which releases run ``mode``, from the eras: ``3.3 and newer``, ``0.8.2 to 3.x``."""
    first: tuple[int, ...] | None = None
    last_era_end: tuple[int, ...] | None = None
    for era in ERAS:
        modes = era.changes.get("modes")
        if modes is None:
            continue
        if mode in modes and first is None:
            first = era.since
        if mode not in modes and first is not None:
            last_era_end = era.since
    if first is None:
        return "no release"
    start = version_text(line_of(first))
    if last_era_end is None:
        return f"{start} and newer"
    return f"{start} to before {version_text(last_era_end)}"
