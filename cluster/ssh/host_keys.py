"""Host keys: checked against a known_hosts file, written to it only when the user says so.

A control node that talks to whatever answers at an address is the textbook
man-in-the-middle, and paramiko's ``AutoAddPolicy`` does exactly that, silently.
Here an unknown key refuses the connection with one line that names the host,
the key's SHA256 fingerprint (as ``ssh-keygen -lf`` prints it) and the flag
that accepts it (``--accept-new-host-keys``); with that flag the key is
appended to the known_hosts file. A *changed* key is always refused: paramiko
raises ``BadHostKeyException`` before any policy is asked, and no flag here
overrides it (remove the old line with ``ssh-keygen -R`` if the change is real).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from pathlib import Path

import paramiko

from harness.base.errors import ClusterError

#: The flag that lets ``up`` write a new host key (declared in ``harness.run.cluster_options``).
ACCEPT_FLAG = "--accept-new-host-keys"
#: Hosts connect in parallel; their appends to one known_hosts file must not interleave.
_WRITE_LOCK = threading.Lock()


def fingerprint(key: paramiko.PKey) -> str:
    """``SHA256:...``, the form OpenSSH prints and users compare."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


class HostKeyRefused(ClusterError):
    """The host's key is unknown (and not accepted) or differs from the known one."""


class KnownHostsPolicy(paramiko.MissingHostKeyPolicy):
    """Refuse an unknown key, or (``accept_new``) append it to ``known_hosts``."""

    def __init__(self, node: str, known_hosts: Path, *, accept_new: bool) -> None:
        self.node = node
        self.known_hosts = known_hosts
        self.accept_new = accept_new

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey
                         ) -> None:
        if not self.accept_new:
            raise HostKeyRefused(
                f"{self.node} ({hostname}): unknown host key {key.get_name()} "
                f"{fingerprint(key)}, not in {self.known_hosts}",
                hint=f"check the fingerprint on the host (`ssh-keygen -lf` its key), then "
                f"pass {ACCEPT_FLAG} to add it",
            )
        add_known(self.known_hosts, hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)


def add_known(known_hosts: Path, hostname: str, key: paramiko.PKey) -> None:
    """Append ``hostname``'s ``key`` to ``known_hosts`` (made, with its directory, if need be)."""
    line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
    with _WRITE_LOCK:
        known_hosts.parent.mkdir(parents=True, exist_ok=True)
        with known_hosts.open("a", encoding="ascii") as out:
            out.write(line)


def load_known(client: paramiko.SSHClient, known_hosts: Path) -> None:
    """Load ``known_hosts`` into ``client`` (a missing file is an empty one)."""
    if known_hosts.exists():
        try:
            client.load_host_keys(str(known_hosts))
        except (OSError, paramiko.SSHException) as err:
            raise ClusterError(
                f"cannot read known_hosts {known_hosts}: {err}",
                hint="fix the file or name another with known_hosts in the inventory",
            ) from err


def changed(node: str, hostname: str, err: paramiko.BadHostKeyException,
            known_hosts: Path) -> HostKeyRefused:
    """The refusal of a key that differs from the one ``known_hosts`` holds."""
    return HostKeyRefused(
        f"{node} ({hostname}): host key CHANGED: offered {err.key.get_name()} "
        f"{fingerprint(err.key)}, {known_hosts} holds {fingerprint(err.expected_key)}",
        hint=f"if the host really was re-keyed, remove the old key with "
        f"`ssh-keygen -f {known_hosts} -R {hostname!r}` and connect with {ACCEPT_FLAG}",
    )
