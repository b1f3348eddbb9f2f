"""``hosts.toml``: the hosts an SSH cluster runs on, read and checked before any is contacted.

One table per node, named as insync names nodes (``n1``, ``n2``, ...)::

    known_hosts = "~/.ssh/known_hosts"     # optional; this is the default

    [n1]
    address = "10.0.0.11"                  # what the control node and the other nodes use
    port = 22                              # optional, default 22
    user = "kafka"
    key_file = "~/.ssh/id_ed25519"
    base_dir = "/srv/insync"               # insync's own: Kafka, data, logs, pidfiles
    sudo = false                           # optional: run every command under `sudo -n`

``base_dir`` is the one directory insync owns on the host: the Kafka jars,
data, configs, logs and pidfiles live under it and ``down`` removes only
what is under it, so it must be an absolute path and never ``/`` or a
top-level system directory. Every mistake is a one-line ``UsageError`` (exit
64) naming the file and the key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from harness.base.errors import UsageError

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
DEFAULT_PORT = 22
#: Directories a base_dir may not be (``down`` deletes under it).
_FORBIDDEN = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
     "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var"}
)  # fmt: skip
_HOST_KEYS = frozenset({"address", "port", "user", "key_file", "base_dir", "sudo"})


@dataclass(frozen=True)
class Host:
    """One host: where to reach it, as whom, and the directory insync owns on it."""

    node: str
    address: str
    port: int
    user: str
    key_file: Path
    base_dir: str
    sudo: bool = False


@dataclass(frozen=True)
class Inventory:
    """Every host of the file, by node name, and where their keys are checked."""

    path: Path
    hosts: Mapping[str, Host]
    known_hosts: Path

    def for_nodes(self, names: list[str]) -> dict[str, Host]:
        """The hosts of ``names`` (a spec's ``node_names``); ``UsageError`` if one is missing."""
        missing = [n for n in names if n not in self.hosts]
        if missing:
            raise UsageError(
                f"{self.path}: no host for node(s) {', '.join(missing)}",
                hint=f"add a [{missing[0]}] table, or ask for fewer --nodes "
                f"(the file names {', '.join(sorted(self.hosts)) or 'none'})",
            )
        return {n: self.hosts[n] for n in names}


def load_inventory(path: Path | str) -> Inventory:
    """Read and check ``path``; every problem is one ``UsageError`` naming the file and key."""
    from harness.base.userfile import read_user_text

    path = Path(path)
    try:  # never blocking, regular files only, bounded (harness.base.userfile)
        data = tomllib.loads(read_user_text(path, f"--hosts {path}"))
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{path}: not valid TOML: {err}") from None
    return parse_inventory(data, path)


def parse_inventory(data: Mapping[str, Any], path: Path) -> Inventory:
    """The inventory in ``data`` (parsed TOML), read from ``path`` (for messages)."""
    known = data.get("known_hosts", DEFAULT_KNOWN_HOSTS)
    if not isinstance(known, str) or not known:
        raise UsageError(f"{path}: known_hosts must be a path string, got {known!r}")
    hosts: dict[str, Host] = {}
    for key, value in data.items():
        if key == "known_hosts":
            continue
        if not _is_node(key) or not isinstance(value, Mapping):
            raise UsageError(
                f"{path}: unknown key {key!r}",
                hint="the file holds known_hosts and one [nK] table per node (n1, n2, ...)",
            )
        hosts[key] = _host(key, value, path)
    if not hosts:
        raise UsageError(f"{path}: names no host", hint="add an [n1] table")
    _distinct(hosts, path)
    ordered = dict(sorted(hosts.items(), key=lambda kv: int(kv[0][1:])))
    return Inventory(path, ordered, Path(known).expanduser())


def _is_node(key: str) -> bool:
    return key.startswith("n") and key[1:].isdigit() and int(key[1:]) >= 1


def _host(node: str, table: Mapping[str, Any], path: Path) -> Host:
    unknown = sorted(set(table) - _HOST_KEYS)
    if unknown:
        raise UsageError(
            f"{path}: [{node}] unknown key {unknown[0]!r}",
            hint=f"keys are {', '.join(sorted(_HOST_KEYS))}",
        )

    def need(key: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            got = "nothing" if value is None else repr(value)
            raise UsageError(f"{path}: [{node}] {key} must be a non-empty string, got {got}")
        return value.strip()

    port = table.get("port", DEFAULT_PORT)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise UsageError(f"{path}: [{node}] port must be a whole number 1-65535, got {port!r}")
    sudo = table.get("sudo", False)
    if not isinstance(sudo, bool):
        raise UsageError(f"{path}: [{node}] sudo must be true or false, got {sudo!r}")
    return Host(
        node=node,
        address=need("address"),
        port=port,
        user=need("user"),
        key_file=Path(need("key_file")).expanduser(),
        base_dir=_base_dir(need("base_dir"), node, path),
        sudo=sudo,
    )


def _base_dir(text: str, node: str, path: Path) -> str:
    """An absolute, normalised directory deep enough that removing it harms nothing else."""
    base = PurePosixPath(text)
    if not base.is_absolute() or ".." in base.parts or any(c in text for c in "'\"$`\\\n "):
        raise UsageError(
            f"{path}: [{node}] base_dir must be an absolute path without '..', quotes or "
            f"spaces, got {text!r}",
            hint="e.g. /srv/insync",
        )
    if str(base) in _FORBIDDEN:
        raise UsageError(
            f"{path}: [{node}] base_dir {text!r} is a system directory; `insync cluster down` "
            "removes what insync put under it",
            hint="give insync a directory of its own, e.g. /srv/insync",
        )
    return str(base)


def _distinct(hosts: Mapping[str, Host], path: Path) -> None:
    """Two nodes on one address and port would share pidfiles and ports: refuse."""
    seen: dict[tuple[str, int], str] = {}
    for host in hosts.values():
        where = (host.address, host.port)
        if where in seen:
            raise UsageError(
                f"{path}: [{host.node}] has the address and port of [{seen[where]}] "
                f"({host.address}:{host.port})",
                hint="each node needs a host of its own (brokers listen on fixed ports)",
            )
        seen[where] = host.node
