"""Every Kafka release insync can deploy, and everything that differs between them.

A release is named by its version string; whether Maven Central has it is
asked of Maven Central (``cluster.releases``), and what it needs is derived
from its number by :data:`ERAS`: each era is the first release where
something changed (Scala of the core jar, modes, tools, logging, client
settings) and why. Nothing here is a row per release: a release gets its
quirks from the eras it falls in, so a new release needs no change at all
unless it changes something, and then the change is one era.

The logging binding's version is not here either: it follows the slf4j and
log4j versions in the release's own resolved dependency tree
(:func:`binding_for`), so it is always the one the release was built with.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from cluster.version_order import order_key, parse_version
from harness.base.errors import UsageError

__all__ = [
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

Mode = Literal["kraft", "zookeeper"]
KRAFT: Mode = "kraft"
ZOOKEEPER: Mode = "zookeeper"

KAFKA_GROUP = "org.apache.kafka"

#: Client features a broker must support, and the first line whose brokers do:
#: idempotent producers (KIP-98's producer ids and sequence numbers) and
#: transactions both arrived in 0.11.0. A 0.10 broker answers an idempotent
#: producer's InitProducerId with UNSUPPORTED_FEATURE, so every send of an
#: ``--acks all`` run failed before the workload's default followed this table.
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
    notes: str = ""  # why the quirks above are there

    @property
    def line(self) -> str:
        """``major.minor`` (``0.11.0`` for the old four-part versions)."""
        return ".".join(map(str, _line_of(self.number)))

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



def parse_number(text: str) -> tuple[int, ...] | None:
    """``"0.10.2.2"`` -> ``(0, 10, 2, 2)``; None for anything but a plain release number."""
    parts = text.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


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
        }),
    Era((0, 10, 0), "ApiVersions: librdkafka asks the broker", {"client_config": ()}),
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
    release(v) for v in ("4.1.2", "3.9.2", "2.8.2", "1.1.1", "0.11.0.3", "0.10.2.2")
)

_LINE = re.compile(r"^(?P<line>\d+\.\d+(?:\.\d+)?)(?:\.x)?$")


def feature_since(feature: str) -> str:
    """The first release line whose brokers serve ``feature`` (``0.11.0``), for messages."""
    return ".".join(str(n) for n in CLIENT_FEATURES[feature])


def known_versions() -> list[str]:
    return [v.version for v in VERSIONS]


def _line_of(number: tuple[int, ...]) -> tuple[int, ...]:
    return number[:3] if number[0] == 0 else number[:2]


def _releases(listed: set[str]) -> list[tuple[int, ...]]:
    numbers = (parse_number(v) for v in listed)
    return sorted(n for n in numbers if n is not None and n >= FLOOR)


def _text(number: tuple[int, ...]) -> str:
    return ".".join(map(str, number))


def _normal(spec: str) -> str:
    return spec.strip().lower().removeprefix("v")


def names_a_line(spec: str) -> bool:
    """Whether ``spec`` names a line (``4.2``, ``4.2.x``, ``0.10.2``, ``latest``), not a
    release (``4.2.2``, ``0.10.2.2``)."""
    text = _normal(spec)
    match = _LINE.match(text)
    exact = parse_number(text)
    return text == "latest" or (match is not None and (
        exact is None or text.endswith(".x") or len(exact) == (3 if exact[0] == 0 else 2)))


def line_of(number: tuple[int, ...]) -> tuple[int, ...]:
    """``(0, 10, 2, 2)`` -> ``(0, 10, 2)``; ``(4, 1, 2)`` -> ``(4, 1)``."""
    return _line_of(number)


def resolve_version(spec: str, cache_root: Path | None = None) -> KafkaVersion:
    """Turn ``latest``, a line (``4.2.x``, ``4.2``, ``0.10.2.x``) or an exact release
    into the release it names, as Maven Central lists them.

    An exact catalogue release needs no listing; an exact release in a cached
    listing needs no network; a line or ``latest`` refreshes a day-old listing.
    A release Maven Central does not have is a ``UsageError`` (one line).
    """
    from cluster.releases import default_cache_root, listing

    text = _normal(spec)
    for pinned in VERSIONS:
        if text == pinned.version:
            return pinned
    exact = parse_number(text)
    match = _LINE.match(text)
    is_line = names_a_line(text)
    if not is_line and exact is None:
        raise UsageError(
            f"unknown Kafka version {spec!r}",
            hint="pass a release such as 4.1.2, a line such as 4.2.x, or latest "
            "(`insync versions` lists them)",
        )
    if not is_line:
        release(text)  # refuses numbers below the floor before any network
    root = cache_root or default_cache_root()
    listed = listing(root, fresh=is_line, wanted=() if is_line else (text,))
    numbers = _releases(listed.versions)
    if text == "latest":
        return release(_text(numbers[-1]))
    if is_line:
        assert match is not None
        want = parse_number(match.group("line"))
        on_line = [n for n in numbers if want is not None and _line_of(n) == want]
        if on_line:
            return release(_text(on_line[-1]))
        raise UsageError(
            f"Maven Central lists no Kafka {match.group('line')} release",
            hint=f"lines from {_text(_line_of(numbers[0]))} to {_text(_line_of(numbers[-1]))}"
            " exist; `insync versions` lists them",
        )
    if text in listed.versions:
        return release(text)
    assert exact is not None
    same_line = [_text(n) for n in numbers if _line_of(n) == _line_of(exact)]
    raise UsageError(
        f"Maven Central has no Kafka {text}"
        + (f" (its line has {', '.join(same_line)})" if same_line else ""),
        hint="pass a listed release, a line such as 4.2.x, or latest "
        "(`insync versions` lists them)",
    )


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
    start = _text(_line_of(first))
    if last_era_end is None:
        return f"{start} and newer"
    return f"{start} to before {_text(last_era_end)}"


def resolve_for_mode(spec: str, mode: str, cache_root: Path | None = None) -> KafkaVersion:
    """``resolve_version``, and refuse a mode the release cannot run (ZooKeeper on 4.x, ...).

    Every command checks this before it creates a directory or asks Docker
    anything; the most it touches is the Maven listing (see ``resolve_version``).
    """
    return check_runnable(resolve_version(spec, cache_root), mode)


def check_runnable(version: KafkaVersion, mode: str) -> KafkaVersion:
    """``version`` if insync can run it in ``mode``; else one ``UsageError`` line."""
    if not version.supports(mode):
        modes = sorted(version.modes)
        raise UsageError(
            f"Kafka {version.version} does not run in {mode} mode",
            hint=f"use --mode {' or '.join(modes)}, or a release that has {mode} mode "
            f"({mode_span(mode)})",
        )
    if not version.can("create_topics"):
        raise UsageError(
            f"insync runs Kafka {feature_since('create_topics')} and newer, got "
            f"{version.version}: it creates topics with the CreateTopics API",
            hint=f"pass --kafka-version {feature_since('create_topics')}.x or newer",
        )
    return version


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
