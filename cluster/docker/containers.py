"""The Docker objects of a cluster: one network, one container per node.

Everything insync creates carries the label ``insync`` plus
``insync.cluster=<name>``, so ``down`` can find and remove all of it (and a
leftover from a crashed run) without any state file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster.docker.docker_cli import inspect_one, run_docker
from cluster.spec import ClusterSpec
from harness.base.errors import ClusterError

LABEL = "insync"
#: Where the host's Kafka distribution is bind-mounted (read-only) in every node.
KAFKA_MOUNT = "/opt/kafka"
#: What a node needs to mount the power-loss filesystem (``cluster.power_loss_fs``): the
#: FUSE device, the mount capability, and no AppArmor profile (Docker's default one
#: denies mount). Given only to clusters that ask for it, so default nodes stay as they were.
FUSE_ARGS = ("--device", "/dev/fuse", "--cap-add", "SYS_ADMIN",
             "--security-opt", "apparmor=unconfined")


def _prefix(cluster: str) -> str:
    return "insync" if cluster == "insync" else f"insync-{cluster}"


def network_name(cluster: str) -> str:
    return _prefix(cluster)


def container_name(cluster: str, node: str) -> str:
    return f"{_prefix(cluster)}-{node}"


def _labels(spec: ClusterSpec, node: str | None = None) -> list[str]:
    labels = [LABEL, f"insync.cluster={spec.name}"]
    if node is not None:
        labels += [f"insync.node={node}", f"insync.spec={spec.to_json()}"]
    return [arg for label in labels for arg in ("--label", label)]


def create_network(spec: ClusterSpec) -> None:
    run_docker(["network", "create", *_labels(spec), network_name(spec.name)])


def create_node(spec: ClusterSpec, node: str, image: str, kafka_root: Path) -> None:
    """Start ``node``'s container, idle under Docker's init, ready for daemons."""
    run_docker(
        [
            "run",
            "-d",
            "--init",
            "--name",
            container_name(spec.name, node),
            "--hostname",
            node,
            "--network",
            network_name(spec.name),
            "--network-alias",
            node,
            *_labels(spec, node),
            # iptables and tc netem inside the node's own network namespace.
            "--cap-add",
            "NET_ADMIN",
            *(FUSE_ARGS if spec.power_loss_fs else ()),
            "--volume",
            f"{kafka_root}:{KAFKA_MOUNT}:ro",
            image,
            "sleep",
            "infinity",
        ],
        timeout=120,
    )


@dataclass(frozen=True)
class NodeContainer:
    """What Docker says about one node's container."""

    node: str
    container: str
    address: str
    #: The network's gateway: the host, and so the harness's clients, reach the node from it.
    gateway: str
    running: bool
    spec: ClusterSpec


def _node_container(data: dict[str, Any]) -> NodeContainer:
    labels = data["Config"]["Labels"]
    nets = data["NetworkSettings"]["Networks"]
    spec = ClusterSpec.from_json(labels["insync.spec"])
    net = nets.get(network_name(spec.name)) or {}
    return NodeContainer(
        node=labels["insync.node"],
        container=data["Name"].lstrip("/"),
        address=net.get("IPAddress", ""),
        gateway=net.get("Gateway", ""),
        running=bool(data["State"]["Running"]),
        spec=spec,
    )


def _ids(kind: str, cluster: str | None) -> list[str]:
    selector = f"insync.cluster={cluster}" if cluster else LABEL
    args = {
        "container": ["ps", "-aq"],
        "network": ["network", "ls", "-q"],
        "volume": ["volume", "ls", "-q"],
    }[kind]
    out: str = run_docker([*args, "--filter", f"label={selector}"]).stdout
    return out.split()


def cluster_nodes(cluster: str) -> list[NodeContainer]:
    """The node containers of ``cluster`` that exist, ordered n1, n2, ..."""
    nodes = []
    for cid in _ids("container", cluster):
        data = inspect_one("container", cid)
        if data is not None and "insync.spec" in data["Config"]["Labels"]:
            nodes.append(_node_container(data))
    return sorted(nodes, key=lambda n: ClusterSpec.node_id(n.node))


def cluster_names() -> list[str]:
    """Every cluster that has at least one container or network labelled ``insync``."""
    names: set[str] = set()
    for cid in _ids("container", None):
        data = inspect_one("container", cid)
        if data is not None:
            names.add(data["Config"]["Labels"].get("insync.cluster", "?"))
    for nid in _ids("network", None):
        data = inspect_one("network", nid)
        if data is not None:
            names.add(data["Labels"].get("insync.cluster", "?"))
    return sorted(names)


@dataclass(frozen=True)
class Removed:
    containers: int
    networks: int
    volumes: int

    def __str__(self) -> str:
        return (
            f"{self.containers} container(s), {self.networks} network(s), {self.volumes} volume(s)"
        )


def remove(cluster: str | None) -> Removed:
    """Remove the containers, network and volumes of ``cluster`` (``None``: all of insync's).

    Every step runs even if an earlier one fails; the first failure is raised
    at the end, so nothing is left behind silently.
    """
    errors: list[str] = []
    counts = []
    for kind, rm in (
        ("container", ["rm", "-f", "-v"]),
        ("network", ["network", "rm"]),
        ("volume", ["volume", "rm", "-f"]),
    ):
        try:
            ids = _ids(kind, cluster)
            if ids:
                run_docker([*rm, *ids], timeout=180)
            counts.append(len(ids))
        except Exception as err:  # keep going: teardown must run every step
            errors.append(f"{kind}s: {err}")
            counts.append(0)
    if errors:
        raise ClusterError(
            "teardown incomplete: " + "; ".join(errors),
            hint="run `insync cluster down --all` again",
        )
    return Removed(*counts)
