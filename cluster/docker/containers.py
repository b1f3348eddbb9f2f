"""The Docker objects of a cluster: one network, one container per node.

Everything insync creates carries the label ``insync`` plus
``insync.cluster=<name>``, so ``down`` can find and remove all of it (and a
leftover from a crashed run) without any state file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.types import NetworkingConfig

from cluster.docker.client import docker_client, docker_errors, inspect_one
from cluster.spec import ClusterSpec, check_name, check_node
from harness.base.errors import ClusterError

LABEL = "insync"
#: Where the host's Kafka distribution is bind-mounted (read-only) in every node.
KAFKA_MOUNT = "/opt/kafka"
#: What a node needs to mount the power-loss filesystem (``cluster.power_loss_fs``): the
#: FUSE device, the mount capability, and no AppArmor profile (Docker's default one
#: denies mount). Given only to clusters that ask for it, so default nodes stay as they were.
FUSE: dict[str, tuple[str, ...]] = {
    "devices": ("/dev/fuse:/dev/fuse:rwm",),
    "cap_add": ("SYS_ADMIN",),
    "security_opt": ("apparmor=unconfined",),
}


def _prefix(cluster: str) -> str:
    return "insync" if cluster == "insync" else f"insync-{cluster}"


def network_name(cluster: str) -> str:
    """The cluster's network: only ever from a checked name (``check_name``)."""
    return _prefix(check_name(cluster))


def container_name(cluster: str, node: str) -> str:
    """A node's container: only ever from a checked cluster and node name."""
    return f"{_prefix(check_name(cluster))}-{check_node(node)}"


def _labels(spec: ClusterSpec, node: str | None = None) -> dict[str, str]:
    labels = {LABEL: "", "insync.cluster": spec.name}
    if node is not None:
        labels |= {"insync.node": node, "insync.spec": spec.to_json()}
    return labels


def create_network(spec: ClusterSpec) -> None:
    name = network_name(spec.name)
    with docker_errors(f"create network {name}"):
        docker_client().api.create_network(name, labels=_labels(spec))


def create_node(spec: ClusterSpec, node: str, image: str, kafka_root: Path) -> None:
    """Start ``node``'s container, idle under Docker's init, ready for daemons."""
    api = docker_client().api
    name = container_name(spec.name, node)
    network = network_name(spec.name)
    with docker_errors(f"create container {name}"):
        host_config = api.create_host_config(
            init=True,
            network_mode=network,
            # iptables and tc netem inside the node's own network namespace.
            cap_add=["NET_ADMIN", *(FUSE["cap_add"] if spec.power_loss_fs else ())],
            devices=list(FUSE["devices"]) if spec.power_loss_fs else None,
            security_opt=list(FUSE["security_opt"]) if spec.power_loss_fs else None,
            binds={str(kafka_root): {"bind": KAFKA_MOUNT, "mode": "ro"}},
        )
        # types-docker types the argument as one EndpointConfig; the SDK takes network → config.
        endpoints: Any = {network: api.create_endpoint_config(aliases=[node])}
        networking = NetworkingConfig(endpoints)
        created = api.create_container(
            image,
            ["sleep", "infinity"],
            name=name,
            hostname=node,
            labels=_labels(spec, node),
            host_config=host_config,
            networking_config=networking,
        )
        api.start(created["Id"])


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


def labelled_ids(kind: str, cluster: str | None) -> list[str]:
    """The ids of ``kind`` (container, network, volume) labelled for ``cluster`` (or insync)."""
    selector = f"insync.cluster={cluster}" if cluster else LABEL
    filters = {"label": [selector]}
    api = docker_client().api
    with docker_errors(f"list {kind}s labelled {selector}"):
        if kind == "container":
            return [c["Id"] for c in api.containers(all=True, filters=filters)]
        if kind == "network":
            return [n["Id"] for n in api.networks(filters=filters)]
        return [v["Name"] for v in api.volumes(filters=filters).get("Volumes") or []]


def cluster_nodes(cluster: str) -> list[NodeContainer]:
    """The node containers of ``cluster`` that exist, ordered n1, n2, ..."""
    nodes = []
    for cid in labelled_ids("container", cluster):
        data = inspect_one("container", cid)
        if data is not None and "insync.spec" in data["Config"]["Labels"]:
            nodes.append(_node_container(data))
    return sorted(nodes, key=lambda n: ClusterSpec.node_id(n.node))


def cluster_names() -> list[str]:
    """Every cluster that has at least one container or network labelled ``insync``."""
    names: set[str] = set()
    for cid in labelled_ids("container", None):
        data = inspect_one("container", cid)
        if data is not None:
            names.add(data["Config"]["Labels"].get("insync.cluster", "?"))
    for nid in labelled_ids("network", None):
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
    api = docker_client().api
    removers: dict[str, Callable[[str], object]] = {
        "container": lambda i: api.remove_container(i, v=True, force=True),
        "network": api.remove_network,
        "volume": lambda i: api.remove_volume(i, force=True),
    }
    errors: list[str] = []
    counts = []
    for kind, rm in removers.items():
        try:
            ids = labelled_ids(kind, cluster)
            for each in ids:
                with docker_errors(f"remove {kind} {each[:12]}"):
                    rm(each)
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
