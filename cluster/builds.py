"""Another Kafka build on a running cluster's nodes: what an upgrade or a downgrade ships.

An operator upgrades a broker by putting the new release's files on its
host, then restarting it on them. insync does the same with the builds it
can run (a release from Maven Central, a ``--kafka-dist`` build): the build
is resolved on this machine as ``cluster.kafka_dist.spec_distribution``
resolves a run's own, then synced to every node with the SSH provisioner's
copy-by-hash (``cluster.ssh.host_setup.sync_jars``, through the node's
``Remote``: a Docker container and an SSH host alike) under
``<root>/kafka/<build>``: on an SSH host the directory ``up`` puts a
release in, so a build already there is not copied again. The node's handle
is then switched to it (``KafkaNode.version``, ``KafkaNode.kafka_home``), so
every later start of that broker, whoever asks (a restart, a kill's heal),
runs the new build.

The build's config is the run's, rendered with the keys that build knows
(``cluster.broker_config.render``), plus what the upgrade pins
(``inter.broker.protocol.version`` in ZooKeeper mode). A handle made by a
fresh process (``insync cluster attach``) knows the run's own build only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cluster.broker_config import CONFIG_PATH, DATA_DIR, properties_for, render
from cluster.config_keys import known_broker_keys, validate_keys
from cluster.distribution import Distribution
from cluster.kafka_dist import home_name, inspect_dist, spec_distribution
from cluster.remote import read_if_there, write_file
from cluster.spec import ClusterSpec
from cluster.ssh.host_setup import local_manifest, sync_jars
from cluster.versions import KafkaVersion, check_runnable, line_of, release, resolve_for_mode
from harness.base.errors import UsageError

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode

#: Where builds other than the one a node was made with go (under ``KafkaNode.root``).
BUILDS_DIR = "/kafka"
#: The ZooKeeper-mode setting a rolling upgrade pins, then bumps.
IBP = "inter.broker.protocol.version"
_IBP_LINE = re.compile(rf"^\s*{re.escape(IBP)}\s*=\s*(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Build:
    """A build resolved on this machine, ready to ship: the spec that runs it, its files."""

    spec: ClusterSpec
    dist: Distribution
    known_keys: frozenset[str]
    #: Relative path -> sha256 of every file of ``dist.root`` (what ``sync_jars`` compares).
    manifest: dict[str, str]

    @property
    def version(self) -> KafkaVersion:
        return self.dist.version

    @property
    def name(self) -> str:
        """``4.1.2``, ``dist-<digest>``: the directory it has on a node, and how ops name it."""
        return home_name(self.spec)


def target_spec(spec: ClusterSpec, kafka_version: str | None = None,
                kafka_dist: str | None = None) -> ClusterSpec:
    """``spec`` with its build replaced by a release (``kafka_version``: an exact release,
    a line, ``latest``) or a person's build (``kafka_dist``: a tarball or its tree);
    neither: ``spec`` itself. One ``UsageError`` line if the build cannot run in the
    spec's mode."""
    if kafka_dist is not None:
        dist = inspect_dist(kafka_dist)
        check_runnable(release(dist.version), spec.mode)
        return replace(spec, kafka_version=dist.version, kafka_dist=dist.path,
                       kafka_dist_sha256=dist.sha256)
    if kafka_version is not None:
        version = resolve_for_mode(kafka_version, spec.mode)
        return replace(spec, kafka_version=version.version, kafka_dist=None,
                       kafka_dist_sha256=None)
    return spec


def prepare(spec: ClusterSpec) -> Build:
    """Resolve ``spec``'s build here (Maven Central at most once: it is cached) and check
    that it knows every ``--broker-config`` key of the run."""
    dist = spec_distribution(spec)
    known = known_broker_keys(dist)
    validate_keys(spec.broker_config.keys(), known)
    return Build(spec, dist, known, local_manifest(dist.root))


def home_on(node: KafkaNode, build: Build) -> str:
    """Where ``build`` lies on ``node``."""
    return node.at(f"{BUILDS_DIR}/{build.name}")


def build_on(node: KafkaNode) -> str:
    """The build (``Build.name``) the node's broker starts from: the one ``switch`` put it
    on, or the run's own (a Docker node mounts it elsewhere; an SSH host has it here)."""
    builds = node.at(BUILDS_DIR) + "/"
    if node.kafka_home.startswith(builds):
        return node.kafka_home.removeprefix(builds)
    return home_name(node.spec)


def ship(node: KafkaNode, build: Build) -> dict[str, Any]:
    """Copy ``build`` to ``node`` (only the files that differ): what was copied."""
    synced = sync_jars(node.remote, build.dist.root, home_on(node, build), build.manifest)
    return {"copied": synced.copied, "bytes": synced.bytes}


def configure(node: KafkaNode, build: Build, pinned: dict[str, str]) -> None:
    """Write the node's ``server.properties`` for ``build`` with ``pinned`` settings added."""
    props = properties_for(node.spec, node.name, node.address, peers=node.peers,
                           data_dir=node.at(DATA_DIR))
    props = replace(props, overrides={**props.overrides, **pinned})
    write_file(node.remote, node.at(CONFIG_PATH), render(props, build.known_keys))


def switch(node: KafkaNode, build: Build) -> None:
    """From now on the node's broker starts from ``build``."""
    node.version = build.version
    node.kafka_home = home_on(node, build)


def protocol_of(node: KafkaNode) -> str:
    """The ``inter.broker.protocol.version`` the node's broker runs with (ZooKeeper mode):
    its config's, else its build's own line (Kafka's default)."""
    found = _IBP_LINE.findall(read_if_there(node.remote, node.at(CONFIG_PATH)))
    return found[-1] if found else line_text(node.version)


def line_text(version: KafkaVersion) -> str:
    """``3.9`` for 3.9.2: how ``inter.broker.protocol.version`` and ``kafka-features
    --metadata`` name a release's level."""
    return ".".join(map(str, line_of(version.number)))


def level_number(level: str) -> tuple[int, ...]:
    """``(3, 9)`` for ``3.9-IV0`` or ``3.9``: the release line a protocol or metadata level
    belongs to; ``UsageError`` for text that names none."""
    head = level.strip().split("-", 1)[0]
    parts = head.split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise UsageError(f"{level!r} is not a Kafka protocol or metadata level",
                         hint="e.g. 3.9 or 3.9-IV0")
    return line_of(tuple(int(p) for p in parts) + (0,) * (3 - len(parts)))
