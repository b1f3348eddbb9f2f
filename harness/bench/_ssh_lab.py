"""A lab of SSH hosts made of insync's own node containers, for measuring (and testing)
the SSH path on a machine that has no other hosts.

Docker plays only the hosts' administrator here: it makes the containers (on a
network insync creates, labelled ``insync``, nothing mounted), installs the
control node's public key in ``authorized_keys``, starts sshd (each container
makes its own host key) and reads that host key back into a known_hosts file, as
an administrator would hand it over. Everything after that goes over SSH
through the inventory this writes: a provisioner given it cannot tell the lab
from real hosts. Removing the lab removes its containers and network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import paramiko

from cluster.docker import containers
from cluster.docker.docker_remote import DockerRemote
from cluster.docker.engine import ensure_engine
from cluster.docker.image import ensure_image
from cluster.spec import ClusterSpec

#: Where the lab's hosts keep what insync deploys (the inventory's ``base_dir``).
BASE_DIR = "/srv/insync"
HOST_KEY = "/etc/ssh/ssh_host_ed25519_key.pub"
#: Installs the control node's key and starts sshd; prints the host's public key.
ADMIN = ("mkdir -p /root/.ssh && cat > /root/.ssh/authorized_keys && "
         f"chmod 600 /root/.ssh/authorized_keys && insync-sshd && cat {HOST_KEY}")


@dataclass(frozen=True)
class Lab:
    """The files a lab hands to insync: the inventory, and what it names."""

    inventory: Path
    known_hosts: Path
    key_file: Path
    containers: str  # the Docker cluster name of the containers playing hosts


def client_key(path: Path) -> str:
    """Write a new private key to ``path``; its ``authorized_keys`` line."""
    key = paramiko.Ed25519Key.generate() if hasattr(paramiko.Ed25519Key, "generate") else None
    made: paramiko.PKey = key or paramiko.RSAKey.generate(2048)
    made.write_private_key_file(str(path))
    return f"{made.get_name()} {made.get_base64()} insync-lab\n"


def inventory_text(known_hosts: Path, hosts: list[tuple[str, str]], key_file: Path,
                   base_dir: str = BASE_DIR) -> str:
    """The inventory TOML for (node, address) pairs reached as root with ``key_file``."""
    lines = ["known_hosts = " + json.dumps(str(known_hosts))]
    for node, address in hosts:
        lines += [f"[{node}]", f'address = "{address}"', 'user = "root"',
                  f"key_file = {json.dumps(str(key_file))}", f'base_dir = "{base_dir}"']
    return "\n".join(lines) + "\n"


def make_lab(name: str, nodes: int, directory: Path, *, known: bool = True,
             fuse: bool = False) -> Lab:
    """``nodes`` containers running sshd, and the inventory that reaches them.

    ``known``: write their host keys to known_hosts (as their administrator would
    hand them over); without it known_hosts stays empty, and connecting needs
    ``--accept-new-host-keys``. ``fuse``: the containers get ``/dev/fuse`` and what
    mounting needs, as a host that can run the power-loss filesystem; without it
    they cannot, as a container host without those rights.
    """
    directory.mkdir(parents=True, exist_ok=True)
    key_file, known_hosts = directory / "id", directory / "known_hosts"
    public = client_key(key_file)
    ensure_engine()
    image = ensure_image(None)
    spec = ClusterSpec(name=name, nodes=nodes, power_loss_fs=fuse)
    containers.remove(name)
    empty = directory / "no-kafka"  # the SSH path copies Kafka itself: nothing is mounted
    empty.mkdir(exist_ok=True)
    containers.create_network(spec)
    for node in spec.node_names:
        containers.create_node(spec, node, image, empty)
    hosts, keys = [], []
    for c in containers.cluster_nodes(name):
        host_key = DockerRemote(c.node, c.container).exec(
            ["sh", "-c", ADMIN], input=public, timeout=120).stdout.split()
        hosts.append((c.node, c.address))
        keys.append(f"{c.address} {host_key[0]} {host_key[1]}\n")
    known_hosts.write_text("".join(keys) if known else "")
    inventory = directory / "hosts.toml"
    inventory.write_text(inventory_text(known_hosts, hosts, key_file))
    return Lab(inventory, known_hosts, key_file, name)


def remove_lab(lab: Lab | str) -> None:
    containers.remove(lab.containers if isinstance(lab, Lab) else lab)


@contextmanager
def ssh_lab(name: str, nodes: int, directory: Path, *, known: bool = True,
            fuse: bool = False) -> Iterator[Lab]:
    """A lab for the duration of a ``with``; removed afterwards whatever happened."""
    try:
        yield make_lab(name, nodes, directory, known=known, fuse=fuse)
    finally:
        remove_lab(name)
