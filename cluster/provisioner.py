"""Where nodes come from: the ``Provisioner`` protocol, and the one way to get one.

A provisioner turns a ``ClusterSpec`` into running Kafka nodes and finds or
removes them again. Docker containers on this machine are one provisioner
(``cluster.docker``); hosts reached over SSH would be another. Everything a
provisioner hands back is a ``Cluster`` of ``KafkaNode``s, each carrying its
``Remote``, its address, its ``kafka_home`` and its ``client_source``, so the
runner, the nemesis and log collection never learn which provisioner made it.

The Kafka part of bringing nodes up (version, configs, storage, daemons,
readiness) is shared by every provisioner: ``cluster.deploy``.

Callers never build a provisioner class themselves: they ask
:func:`provisioner_for`, and a new provisioner is one entry in ``PROVISIONERS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from cluster.model import Say
from harness.base.errors import UsageError

if TYPE_CHECKING:
    from cluster.model import Cluster
    from cluster.spec import ClusterSpec


DEFAULT_PROVISIONER = "docker"


class Provisioner(Protocol):
    """Make, find and remove the nodes of a cluster."""

    def up(
        self,
        spec: ClusterSpec,
        *,
        fresh: bool = False,
        say: Say = print,
        ready_timeout_s: float = 180.0,
    ) -> Cluster:
        """Create (or reuse, unless ``fresh``) the cluster ``spec`` describes.

        Returns once it serves ``acks=all`` writes. A cluster that does not come
        up is left in place for ``insync cluster logs``.
        """
        ...

    def attach(self, name: str = "insync") -> Cluster:
        """The running cluster ``name``, as an earlier ``up`` left it (``ClusterError`` if none)."""
        ...

    def down(self, name: str | None) -> str:
        """Remove everything of cluster ``name`` (``None``: every insync cluster).

        Runs every step even if one fails, then raises; returns what was removed,
        in words.
        """
        ...

    def prepare(self, *, rebuild: bool = False) -> str:
        """Make ready what every node starts from (Docker: the engine and node image).

        ``up`` does this itself; this is for timing it (``insync bench cluster
        --cold``) and for saying what nodes will run on. Returns one line.
        """
        ...


def _docker() -> Provisioner:
    from cluster.docker import DockerProvisioner

    return DockerProvisioner()


#: Every provisioner by name. Imported lazily: asking for one costs nothing else.
PROVISIONERS: Mapping[str, Callable[[], Provisioner]] = {"docker": _docker}


def provisioner_for(kind: str = DEFAULT_PROVISIONER) -> Provisioner:
    """The provisioner called ``kind`` (default: Docker containers on this machine)."""
    try:
        make = PROVISIONERS[kind]
    except KeyError:
        raise UsageError(
            f"no provisioner named {kind!r}", hint=f"use one of: {', '.join(sorted(PROVISIONERS))}"
        ) from None
    return make()
