"""The ``Provisioner`` seam: how callers get one, and the up/attach/down contract
the runner and ``insync cluster`` rely on, shown with ``FakeProvisioner``."""

from __future__ import annotations

import pytest
from fake_nodes import FakeProvisioner

from cluster import Cluster, ClusterSpec, Provisioner, provisioner_for
from cluster import provisioner as provisioner_module
from harness.base.errors import ClusterError, UsageError
from tests.support.shell_text import script_text


def quiet_nodes(_node: str, argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
    """Nodes whose daemons start (pid 42) and then run; every other command succeeds."""
    script = script_text(argv)
    if "setsid" in script:
        return 0, "42\n", ""
    if "ps -o stat=" in script:
        return 0, "42 Sl\n", ""
    return 0, "", ""


def test_the_default_provisioner_is_docker_and_costs_no_docker_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # any docker call would now fail
    from cluster.docker import DockerProvisioner

    assert isinstance(provisioner_for(), DockerProvisioner)
    assert isinstance(provisioner_for("docker"), DockerProvisioner)


def test_an_unknown_provisioner_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(UsageError, match="no provisioner named 'vagrant'") as exc:
        provisioner_for("vagrant")
    assert exc.value.exit_code == 64
    assert exc.value.hint == "use one of: docker, ssh"


def test_a_registered_provisioner_is_what_callers_get(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeProvisioner(quiet_nodes)
    monkeypatch.setitem(provisioner_module.PROVISIONERS, "fake", lambda _placement: fake)
    assert provisioner_for("fake") is fake
    spec = ClusterSpec(name="reg", nodes=1, controllers=1)
    cluster = provisioner_for("fake").up(spec, say=lambda _m: None)
    assert provisioner_for("fake").attach("reg") is cluster


def _up(p: Provisioner, spec: ClusterSpec, *, fresh: bool = False) -> Cluster:
    return p.up(spec, fresh=fresh, say=lambda _m: None)


def test_up_hands_back_nodes_with_what_the_rest_of_insync_needs() -> None:
    fake = FakeProvisioner(quiet_nodes, kafka_home="/srv/kafka", client_source="192.0.2.9")
    cluster = _up(fake, ClusterSpec(name="c", nodes=3))
    assert list(cluster.nodes) == ["n1", "n2", "n3"]
    assert cluster.bootstrap == "10.0.0.1:9092,10.0.0.2:9092,10.0.0.3:9092"
    for name, node in cluster.nodes.items():
        assert node.remote.name == name
        assert (node.kafka_home, node.client_source) == ("/srv/kafka", "192.0.2.9")
        assert node.state() == "running"


def test_attach_finds_what_up_made_and_down_removes_it() -> None:
    fake = FakeProvisioner(quiet_nodes)
    cluster = _up(fake, ClusterSpec(name="c", nodes=3))
    assert fake.attach("c") is cluster
    assert fake.down("c") == "3 node(s)"
    with pytest.raises(ClusterError, match="no cluster named 'c'") as exc:
        fake.attach("c")
    assert exc.value.exit_code == 70
    assert fake.down("c") == "0 node(s)"


def test_up_reuses_the_same_spec_and_rebuilds_when_fresh_or_changed() -> None:
    fake = FakeProvisioner(quiet_nodes)
    spec = ClusterSpec(name="c", nodes=3)
    first = _up(fake, spec)
    assert _up(fake, spec) is first
    assert _up(fake, spec, fresh=True) is not first
    bigger = _up(fake, ClusterSpec(name="c", nodes=5))
    assert len(fake.attach("c").nodes) == 5 and fake.attach("c") is bigger


def test_down_all_removes_every_cluster() -> None:
    fake = FakeProvisioner(quiet_nodes)
    _up(fake, ClusterSpec(name="a", nodes=1, controllers=1))
    _up(fake, ClusterSpec(name="b", nodes=3))
    assert fake.down(None) == "4 node(s)"
    assert fake.clusters == {}
