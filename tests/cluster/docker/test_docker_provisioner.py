"""``DockerProvisioner.attach`` and ``down`` through the Docker SDK against a fake Engine
API (``fake_docker_api``): the requests are those the CLI's commands were, and the
nodes it hands back carry the container's address, its network's gateway as
``client_source``, and Kafka at the bind mount."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import StartApi
from fake_docker_api import Call, FakeDockerApi, version_only

from cluster import ClusterSpec
from cluster.docker import DockerProvisioner, containers
from cluster.docker.docker_remote import DockerRemote
from harness.base.errors import ClusterError

SPEC = ClusterSpec(name="it", nodes=3)


class FakeDocker:
    """Three node containers of cluster ``it`` on network ``insync-it``, plus that network."""

    def __init__(self) -> None:
        self.containers = {f"c{i}": f"n{i}" for i in (3, 1, 2)}  # Docker lists in any order
        self.removed: list[str] = []
        self.created: list[dict[str, Any]] = []

    def __call__(self, call: Call) -> tuple[int, Any]:
        if call.path == "/containers/create":
            self.created.append({"query": call.query, "body": call.json()})
            return 201, {"Id": "new1", "Warnings": []}
        if call.path == "/containers/new1/start":
            return 204, b""
        if call.path == "/containers/json":
            return 200, [{"Id": cid} for cid in self.containers]
        if call.path == "/networks":
            return 200, [{"Id": "net1"}]
        if call.path == "/volumes":
            return 200, {"Volumes": None}
        if call.method == "DELETE":
            self.removed.append(f"{call.path} {sorted(call.query.items())}")
            return 204, b""
        if call.method == "GET" and call.path.endswith("/json"):
            return 200, self.inspect(call.path.split("/")[2])
        return version_only(call)

    def inspect(self, cid: str) -> dict[str, Any]:
        node = self.containers[cid]
        return {
            "Name": f"/insync-it-{node}",
            "Config": {
                "Labels": {
                    "insync": "",
                    "insync.cluster": "it",
                    "insync.node": node,
                    "insync.spec": SPEC.to_json(),
                }
            },
            "NetworkSettings": {
                "Networks": {
                    "insync-it": {
                        "IPAddress": f"172.30.0.{int(node[1:]) + 1}",
                        "Gateway": "172.30.0.1",
                    }
                }
            },
            "State": {"Running": True},
        }


@pytest.fixture
def docker(fake_api: StartApi) -> tuple[FakeDocker, FakeDockerApi]:
    fake = FakeDocker()
    return fake, fake_api(fake)


def test_attach_hands_back_every_node_in_order_with_its_remote_and_addresses(
    docker: tuple[FakeDocker, FakeDockerApi],
) -> None:
    cluster = DockerProvisioner().attach("it")
    assert cluster.spec == SPEC
    assert list(cluster.nodes) == ["n1", "n2", "n3"]
    for name, node in cluster.nodes.items():
        assert node.remote == DockerRemote(name, f"insync-it-{name}")
        assert node.address == f"172.30.0.{int(name[1:]) + 1}"
        assert node.client_source == "172.30.0.1"
        assert node.kafka_home == containers.KAFKA_MOUNT
    assert docker[1].calls[1:3] == ["GET /containers/json", "GET /containers/c3/json"]


def test_attach_to_a_missing_cluster_says_how_to_start_one(
    docker: tuple[FakeDocker, FakeDockerApi],
) -> None:
    docker[0].containers.clear()
    with pytest.raises(ClusterError, match="no cluster named 'it' is running") as exc:
        DockerProvisioner().attach("it")
    assert exc.value.hint == "start one with `insync cluster up`"


def test_down_removes_containers_then_network_then_volumes_and_says_so(
    docker: tuple[FakeDocker, FakeDockerApi],
) -> None:
    fake, _ = docker
    filters: list[str] = []
    listing = fake.__call__

    def recording(call: Call) -> tuple[int, Any]:
        filters.extend(call.query.get("filters", []))
        return listing(call)

    docker[1].handler = recording
    assert DockerProvisioner().down("it") == "3 container(s), 1 network(s), 0 volume(s)"
    forced = "[('force', ['True']), ('link', ['False']), ('v', ['True'])]"
    assert fake.removed == [f"/containers/{c} {forced}" for c in ("c3", "c1", "c2")] + [
        "/networks/net1 []"]
    assert set(filters) == {'{"label": ["insync.cluster=it"]}'}


@pytest.mark.parametrize("power_loss_fs", [False, True], ids=["default", "power-loss-fs"])
def test_a_node_is_created_as_docker_run_did_and_only_power_loss_gets_fuse(
    docker: tuple[FakeDocker, FakeDockerApi], power_loss_fs: bool, tmp_path: Any
) -> None:
    fake, api = docker
    spec = ClusterSpec(name="it", nodes=1, controllers=1, power_loss_fs=power_loss_fs)
    containers.create_node(spec, "n1", "insync-node:x", tmp_path)
    (created,) = fake.created
    assert created["query"] == {"name": ["insync-it-n1"]}
    body = created["body"]
    host = body["HostConfig"]
    assert (body["Image"], body["Cmd"], body["Hostname"]) == (
        "insync-node:x", ["sleep", "infinity"], "n1")
    assert body["Labels"]["insync.node"] == "n1" and "insync" in body["Labels"]
    assert host["Init"] is True and host["NetworkMode"] == "insync-it"
    assert host["Binds"] == [f"{tmp_path}:{containers.KAFKA_MOUNT}:ro"]
    assert body["NetworkingConfig"]["EndpointsConfig"]["insync-it"]["Aliases"] == ["n1"]
    fuse = [d["PathOnHost"] for d in host.get("Devices") or []] == ["/dev/fuse"]
    assert (fuse, "SYS_ADMIN" in host["CapAdd"]) == (power_loss_fs, power_loss_fs)
    assert ("apparmor=unconfined" in (host.get("SecurityOpt") or [])) == power_loss_fs
    assert "NET_ADMIN" in host["CapAdd"]
    assert "POST /containers/new1/start" in api.calls
