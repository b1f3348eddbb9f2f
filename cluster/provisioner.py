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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Placement:
    """Where a cluster's nodes come from: a provisioner's name and what it needs to know.

    Plain data, so a command builds it from its flags (``--hosts``,
    ``--accept-new-host-keys``) and hands it on without naming a provisioner class.
    """

    kind: str = DEFAULT_PROVISIONER
    #: ``ssh``: the inventory file (``cluster.ssh.inventory``).
    hosts: str | None = None
    #: ``ssh``: write unknown host keys to known_hosts instead of refusing them.
    accept_new_host_keys: bool = False


def _docker(placement: Placement) -> Provisioner:
    from cluster.docker import DockerProvisioner

    return DockerProvisioner()


def _ssh(placement: Placement) -> Provisioner:
    from pathlib import Path

    from cluster.ssh import SSHProvisioner

    if placement.hosts is None:
        raise UsageError("the ssh provisioner needs an inventory", hint="pass --hosts hosts.toml")
    return SSHProvisioner(Path(placement.hosts), placement.accept_new_host_keys)


#: Every provisioner by name. Imported lazily: asking for one costs nothing else.
PROVISIONERS: Mapping[str, Callable[[Placement], Provisioner]] = {"docker": _docker, "ssh": _ssh}


def provisioner_for(kind: str | Placement = DEFAULT_PROVISIONER) -> Provisioner:
    """The provisioner ``kind`` names (default: Docker containers on this machine)."""
    placement = kind if isinstance(kind, Placement) else Placement(kind)
    try:
        make = PROVISIONERS[placement.kind]
    except KeyError:
        raise UsageError(
            f"no provisioner named {placement.kind!r}",
            hint=f"use one of: {', '.join(sorted(PROVISIONERS))}",
        ) from None
    return make(placement)
