"""The provisioner-independent part of ``up``, driven through ``FakeProvisioner``:
every command reaches a node through its ``Remote``, at the node's ``kafka_home``,
in the order Kafka needs (configs, then KRaft format or ZooKeeper, then brokers)."""

from __future__ import annotations

import threading

import pytest
from fake_nodes import FakeProvisioner

from cluster import ClusterSpec, deploy
from cluster.broker_config import CONFIG_PATH
from cluster.zookeeper_config import ZK_CONFIG_PATH
from harness.base.errors import UsageError
from tests.support.shell_text import script_text

HOME = "/srv/kafka-under-test"


class Nodes:
    """Every node's commands, in one ordered log: ``(node, what, argv)``."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, tuple[str, ...]]] = []
        self.lock = threading.Lock()
        self.pids = iter(range(100, 1000))
        self.running: dict[tuple[str, str], int] = {}

    def handle(self, node: str, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        script = script_text(argv)
        with self.lock:
            if "write_file" in argv:
                self.log.append((node, f"write {argv[argv.index('write_file') + 1]}", argv))
            elif "format" in argv:
                self.log.append((node, "format", argv))
            elif "setsid" in script:
                daemon = "zookeeper" if "name=zookeeper" in script else "kafka"
                pid = self.running.setdefault((node, daemon), next(self.pids))
                self.log.append((node, f"start {daemon}", argv))
                return 0, f"{pid}\n", ""
            elif "srvr" in script:  # cluster.readiness.zk_mode_script: serving once started
                self.log.append((node, "zk mode", argv))
                return 0, "follower\n" if (node, "zookeeper") in self.running else "", ""
            elif "ps -o stat=" in script:
                broker = self.running.get((node, "kafka"))
                return 0, "" if broker is None else f"{broker} Sl\n", ""
        return 0, "", ""

    def events(self, node: str) -> list[str]:
        return [what for n, what, _ in self.log if n == node]


@pytest.mark.parametrize(
    ("version", "mode", "hint"),
    [
        pytest.param("4.1.x", "zookeeper", "use --mode kraft", id="4.1-has-no-zookeeper"),
        pytest.param("2.8.x", "kraft", "use --mode zookeeper", id="2.8-has-no-kraft"),
    ],
)
def test_a_version_that_cannot_run_the_mode_fails_before_any_node_is_touched(
    version: str, mode: str, hint: str
) -> None:
    nodes = Nodes()
    spec = ClusterSpec(name="bad", kafka_version=version, mode=mode)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=f"does not run in {mode} mode") as exc:
        FakeProvisioner(nodes.handle).up(spec)
    assert exc.value.hint is not None and exc.value.hint.startswith(hint)
    assert exc.value.exit_code == 64
    assert nodes.log == []


def test_kraft_nodes_are_configured_formatted_with_one_id_then_started_at_kafka_home() -> None:
    nodes = Nodes()
    cluster = FakeProvisioner(nodes.handle, kafka_home=HOME).up(ClusterSpec(name="k", nodes=3))
    for name in ("n1", "n2", "n3"):
        assert nodes.events(name) == [f"write {CONFIG_PATH}", "format", "start kafka"]
    formats = [argv for _, what, argv in nodes.log if what == "format"]
    ids = {argv[argv.index("-t") + 1] for argv in formats}
    assert len(ids) == 1, "every node must be formatted with the same cluster id"
    assert all(f"{HOME}/libs/*" in argv for argv in formats)
    starts = [script_text(argv) for _, what, argv in nodes.log if what == "start kafka"]
    assert all(f"{HOME}/libs/*" in s and "/opt/kafka" not in s for s in starts)
    assert [n.state() for n in cluster.nodes.values()] == ["running"] * 3


def test_zookeeper_ensemble_starts_before_any_broker_and_nothing_is_formatted() -> None:
    nodes = Nodes()
    spec = ClusterSpec(name="zk", nodes=4, kafka_version="3.9.x", mode="zookeeper")
    FakeProvisioner(nodes.handle, kafka_home=HOME).up(spec)
    order = [(n, what) for n, what, _ in nodes.log if what.startswith("start")]
    zk = [n for n, what in order if what == "start zookeeper"]
    assert zk == ["n1", "n2", "n3"]
    first_broker = next(i for i, (_, what) in enumerate(order) if what == "start kafka")
    assert first_broker == 3, order
    events = [what for _, what, _ in nodes.log]
    asked = [i for i, what in enumerate(events) if what == "zk mode"]
    assert asked and max(asked) < events.index("start kafka"), "brokers after a serving quorum"
    assert {n for n, what, _ in nodes.log if what == "zk mode"} <= {"n1", "n2", "n3"}
    assert all(what != "format" for _, what, _ in nodes.log)
    assert f"write {ZK_CONFIG_PATH}" in nodes.events("n1")
    assert f"write {ZK_CONFIG_PATH}" not in nodes.events("n4")


def test_reuse_takes_a_running_cluster_and_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = Nodes()
    cluster = FakeProvisioner(nodes.handle).up(ClusterSpec(name="r", nodes=3))
    waited: list[float] = []
    monkeypatch.setattr(deploy, "wait_ready", lambda _c, timeout_s: waited.append(timeout_s))
    monkeypatch.setattr(deploy, "unanswering_brokers", lambda _c: [])
    said: list[str] = []
    assert deploy.reuse(cluster, say=said.append, ready_timeout_s=12.0)
    assert waited == [12.0]
    assert said and "reusing the running cluster 'r'" in said[0]


def test_reuse_refuses_a_cluster_whose_running_broker_answers_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0.10.2 broker that halted can hang in its shutdown: its JVM runs, it serves
    nothing, and a probe write replicated to the other two still succeeds."""
    nodes = Nodes()
    cluster = FakeProvisioner(nodes.handle).up(ClusterSpec(name="r", nodes=3))
    monkeypatch.setattr(deploy, "unanswering_brokers", lambda _c: ["n1"])
    monkeypatch.setattr(deploy, "wait_ready", lambda *_a, **_k: pytest.fail("must not wait"))
    said: list[str] = []
    assert not deploy.reuse(cluster, say=said.append, ready_timeout_s=12.0)
    assert said == ["not reusing the running cluster 'r': the broker on n1 runs but answers "
                    "no request (hung, e.g. in a shutdown)"]


def test_a_broker_nobody_listens_for_is_unanswering() -> None:
    """The real check, against an address on loopback where no broker listens."""
    from cluster.readiness import unanswering_brokers

    nodes = Nodes()
    cluster = FakeProvisioner(nodes.handle).up(ClusterSpec(name="r", nodes=3))
    for node in cluster.nodes.values():
        node.address = "127.0.0.1"  # nothing listens on loopback's broker port here
    assert unanswering_brokers(cluster, timeout_s=0.5) == ["n1", "n2", "n3"]


def test_reuse_refuses_a_cluster_with_a_dead_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = Nodes()
    cluster = FakeProvisioner(nodes.handle).up(ClusterSpec(name="r", nodes=3))
    del nodes.running[("n2", "kafka")]
    monkeypatch.setattr(deploy, "wait_ready", lambda *_a, **_k: pytest.fail("must not wait"))
    said: list[str] = []
    assert not deploy.reuse(cluster, say=said.append, ready_timeout_s=12.0)
    assert said == []
