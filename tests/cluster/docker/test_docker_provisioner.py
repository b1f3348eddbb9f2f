"""``DockerProvisioner.attach`` and ``down`` against a fake ``docker`` CLI (a handler
in place of ``run_docker`` / ``inspect_one``): the commands stay those of the
Docker code before the provisioner seam, and the nodes it hands back carry the
container's address, its network's gateway as ``client_source``, and Kafka at
the bind mount."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

from cluster import ClusterSpec
from cluster.docker import DockerProvisioner, containers
from cluster.docker.docker_remote import DockerRemote
from harness.base.errors import ClusterError

SPEC = ClusterSpec(name="it", nodes=3)


class FakeDocker:
    """Three node containers of cluster ``it`` on network ``insync-it``, plus that network."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.containers = {f"c{i}": f"n{i}" for i in (3, 1, 2)}  # Docker lists in any order

    def run(self, args: Sequence[str], **_kw: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(tuple(args))
        ids = ""
        if list(args[:2]) == ["ps", "-aq"]:
            ids = "\n".join(self.containers)
        elif list(args[:3]) == ["network", "ls", "-q"]:
            ids = "net1"
        return subprocess.CompletedProcess(list(args), 0, ids, "")

    def inspect(self, kind: str, name: str, **_kw: Any) -> dict[str, Any] | None:
        self.calls.append((kind, "inspect", name))
        node = self.containers[name]
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
def docker(monkeypatch: pytest.MonkeyPatch) -> FakeDocker:
    fake = FakeDocker()
    monkeypatch.setattr(containers, "run_docker", fake.run)
    monkeypatch.setattr(containers, "inspect_one", fake.inspect)
    return fake


def test_attach_hands_back_every_node_in_order_with_its_remote_and_addresses(
    docker: FakeDocker,
) -> None:
    cluster = DockerProvisioner().attach("it")
    assert cluster.spec == SPEC
    assert list(cluster.nodes) == ["n1", "n2", "n3"]
    for name, node in cluster.nodes.items():
        assert node.remote == DockerRemote(name, f"insync-it-{name}")
        assert node.address == f"172.30.0.{int(name[1:]) + 1}"
        assert node.client_source == "172.30.0.1"
        assert node.kafka_home == containers.KAFKA_MOUNT
    assert docker.calls[0] == ("ps", "-aq", "--filter", "label=insync.cluster=it")


def test_attach_to_a_missing_cluster_says_how_to_start_one(docker: FakeDocker) -> None:
    docker.containers.clear()
    with pytest.raises(ClusterError, match="no cluster named 'it' is running") as exc:
        DockerProvisioner().attach("it")
    assert exc.value.hint == "start one with `insync cluster up`"


def test_down_removes_containers_then_network_then_volumes_and_says_so(
    docker: FakeDocker,
) -> None:
    assert DockerProvisioner().down("it") == "3 container(s), 1 network(s), 0 volume(s)"
    removals = [c for c in docker.calls if "rm" in c]
    assert removals == [("rm", "-f", "-v", "c3", "c1", "c2"), ("network", "rm", "net1")]
    selectors = {c[-1] for c in docker.calls if c[-2:-1] == ("--filter",)}
    assert selectors == {"label=insync.cluster=it"}


@pytest.mark.parametrize("power_loss_fs", [False, True], ids=["default", "power-loss-fs"])
def test_only_a_power_loss_cluster_gets_fuse_and_sys_admin(
    docker: FakeDocker, power_loss_fs: bool, tmp_path: Any
) -> None:
    spec = ClusterSpec(name="it", nodes=1, controllers=1, power_loss_fs=power_loss_fs)
    containers.create_node(spec, "n1", "insync-node:x", tmp_path)
    (run,) = [c for c in docker.calls if c[0] == "run"]
    assert ("/dev/fuse" in run, "SYS_ADMIN" in run) == (power_loss_fs, power_loss_fs)
    assert ("apparmor=unconfined" in run) == power_loss_fs
    assert "NET_ADMIN" in run
