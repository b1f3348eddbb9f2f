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
what ``up`` recorded creating under it (``cluster.ssh.created``), so it must
be an absolute, normalised path of at least two components, never ``/`` or a
top-level system directory. Every value is checked here, before any host is
contacted or anything downloaded: an ``address`` is an IP address or a host
name, a ``user`` a POSIX user name, a ``key_file`` a readable private key,
and no value holds whitespace or shell syntax (commands take values only as
arguments, ``cluster.remote.sh``; this is the second fence). Every mistake is
a one-line ``UsageError`` (exit 64) naming the file and the key.
"""

from __future__ import annotations

import ipaddress
import os
import posixpath
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from cluster.spec import NODE_NAME
from harness.base.errors import UsageError

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
DEFAULT_PORT = 22
#: Directories a base_dir may not be (``down`` deletes under it).
_FORBIDDEN = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
     "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var"}
)  # fmt: skip
_HOST_KEYS = frozenset({"address", "port", "user", "key_file", "base_dir", "sudo"})
#: One label of a host name (RFC 1123): letters, digits, inner hyphens.
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)
#: A POSIX user name (portable characters, not starting with a hyphen), at most 32.
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", re.ASCII)
#: What a base_dir may hold: no whitespace, globs, quotes or other shell syntax.
_PATH_CHARS = re.compile(r"[A-Za-z0-9._/+@,:=-]+", re.ASCII)


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
                hint="the file holds known_hosts and one [nK] table per node: n and a number "
                "without leading zeros (n1, n2, ...)",
            )
        hosts[key] = _host(key, value, path)
    if not hosts:
        raise UsageError(f"{path}: names no host", hint="add an [n1] table")
    _distinct(hosts, path)
    ordered = dict(sorted(hosts.items(), key=lambda kv: int(kv[0][1:])))
    return Inventory(path, ordered, Path(known).expanduser())


def _is_node(key: str) -> bool:
    return NODE_NAME.fullmatch(key) is not None


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
        return value

    port = table.get("port", DEFAULT_PORT)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise UsageError(f"{path}: [{node}] port must be a whole number 1-65535, got {port!r}")
    sudo = table.get("sudo", False)
    if not isinstance(sudo, bool):
        raise UsageError(f"{path}: [{node}] sudo must be true or false, got {sudo!r}")
    address, user = need("address"), need("user")
    if not _is_address(address):
        raise UsageError(
            f"{path}: [{node}] address must be an IP address or a host name, got {address!r}",
            hint="e.g. 10.0.0.11 or kafka1.example.org",
        )
    if _USER.fullmatch(user) is None:
        raise UsageError(
            f"{path}: [{node}] user must be a POSIX user name (letters, digits, '_', '.', "
            f"'-', not starting with '-' or a digit, at most 32), got {user!r}"
        )
    base_dir = _base_dir(need("base_dir"), node, path)
    return Host(
        node=node,
        address=address,
        port=port,
        user=user,
        key_file=_key_file(need("key_file"), node, path),
        base_dir=base_dir,
        sudo=sudo,
    )


def _is_address(text: str) -> bool:
    """An IPv4/IPv6 address, or a host name of RFC 1123 labels (so never ``-oX``)."""
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        pass
    name = text.removesuffix(".")
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(label) for label in name.split("."))


def read_key(key_file: Path) -> paramiko.PKey:
    """The private key in ``key_file``; ``ValueError`` saying why it cannot be used."""
    try:
        return paramiko.PKey.from_path(key_file)
    except (OSError, paramiko.SSHException, ValueError) as err:
        raise ValueError(str(err) or type(err).__name__) from None


def _key_file(text: str, node: str, path: Path) -> Path:
    """A readable regular file that parses as an (unencrypted) private key."""
    key = Path(text).expanduser()
    if not key.exists():
        problem = "does not exist"
    elif not key.is_file():
        problem = "is not a regular file"
    elif not os.access(key, os.R_OK):
        problem = "is not readable"
    else:
        try:
            read_key(key)
            return key
        except ValueError as err:
            problem = f"is not a private key insync can use ({err})"
    raise UsageError(f"{path}: [{node}] key_file {key} {problem}",
                     hint="key_file must be an unencrypted private key (ssh-keygen -N '')")

def _base_dir(text: str, node: str, path: Path) -> str:
    """An absolute, normalised directory deep enough that removing it harms nothing else."""
    base = text[:-1] if len(text) > 1 and text.endswith("/") else text  # /srv/insync/ is fine
    if _PATH_CHARS.fullmatch(text) is None:
        raise UsageError(
            f"{path}: [{node}] base_dir may hold only letters, digits and . _ / + @ , : = - "
            f"(no whitespace, globs, quotes or shell syntax), got {text!r}",
            hint="e.g. /srv/insync",
        )
    if not base.startswith("/") or ".." in base.split("/") or base.startswith("//") or (
            base != posixpath.normpath(base)):
        raise UsageError(
            f"{path}: [{node}] base_dir must be an absolute, normalised path without '..', "
            f"'//' or '/./', got {text!r}",
            hint="e.g. /srv/insync",
        )
    if base in _FORBIDDEN or re.fullmatch(r"/lib[^/]*", base):
        raise UsageError(
            f"{path}: [{node}] base_dir {text!r} is a system directory; `insync cluster down` "
            "removes what insync put under it",
            hint="give insync a directory of its own, e.g. /srv/insync",
        )
    if len(base.strip("/").split("/")) < 2:
        raise UsageError(
            f"{path}: [{node}] base_dir {text!r} must be at least two levels deep "
            "(a directory of insync's own)",
            hint="e.g. /srv/insync",
        )
    return base


def _distinct(hosts: Mapping[str, Host], path: Path) -> None:
    """Two nodes on one address would share pidfiles, ports and base_dir: refuse."""
    seen: dict[str, str] = {}
    for host in hosts.values():
        where = host.address.lower().removesuffix(".")
        if where in seen:
            raise UsageError(
                f"{path}: [{host.node}] has the address of [{seen[where]}] ({host.address})",
                hint="each node needs a host of its own (brokers listen on fixed ports)",
            )
        seen[where] = host.node
