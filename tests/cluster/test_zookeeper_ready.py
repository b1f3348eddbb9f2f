"""Brokers start only once the ZooKeeper ensemble serves (``cluster.readiness.wait_zookeeper``).

A 5-node 0.10.2 cluster on the loaded VM lost a broker that started before the ensemble
had a leader (it gave up in ``initZk``), and the catalogue stopped. The mode script is
run by a real shell against a local server answering ``srvr``; the wait against fake
nodes whose answers change.
"""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator

import pytest
from fake_remote import FakeRemote

from cluster.kafka_node import KafkaNode
from cluster.model import Cluster
from cluster.readiness import wait_zookeeper, zk_mode_script
from cluster.spec import ClusterSpec
from cluster.versions import resolve_version
from harness.base.errors import ClusterError

SRVR = b"Zookeeper version: 3.4.9\nLatency min/avg/max: 0/0/0\nMode: follower\nNode count: 4\n"


@pytest.fixture
def srvr_port() -> Iterator[int]:
    """A local server that answers ``srvr`` as a ZooKeeper follower does, then closes."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                if conn.recv(4) == b"srvr":
                    conn.sendall(SRVR)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    server.close()


def test_the_mode_script_reads_the_servers_mode(srvr_port: int) -> None:
    out = subprocess.run(["sh", "-c", zk_mode_script(srvr_port)], capture_output=True,
                         text=True, check=True, timeout=30)
    assert out.stdout.strip() == "follower"


def test_the_mode_script_prints_nothing_when_no_server_listens() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        free = probe.getsockname()[1]  # closed on exit: nobody listens there afterwards
    out = subprocess.run(["sh", "-c", zk_mode_script(free)], capture_output=True, text=True,
                         check=True, timeout=30)
    assert out.stdout.strip() == ""


def zk_cluster(answers: dict[str, list[str]]) -> tuple[Cluster, dict[str, int]]:
    """Nodes whose mode script answers, call after call, from ``answers`` (last one sticks)."""
    spec = ClusterSpec(name="zk", nodes=5, mode="zookeeper", controllers=1)
    calls = dict.fromkeys(spec.node_names, 0)

    def handler_for(name: str) -> FakeRemote:
        def handle(argv: tuple[str, ...], _stdin: str | None) -> tuple[int, str, str]:
            said = answers.get(name, [""])
            calls[name] += 1
            return 0, said[min(calls[name], len(said)) - 1] + "\n", ""
        return FakeRemote(name, handle)

    version = resolve_version("0.10.2.x")
    nodes = {n: KafkaNode(n, f"10.0.0.{i + 1}", handler_for(n), spec, version,
                          kafka_home="/opt/kafka", client_source="10.0.0.254")
             for i, n in enumerate(spec.node_names)}
    return Cluster(spec, version, nodes), calls


def test_the_wait_ends_once_a_majority_of_the_ensemble_serves() -> None:
    cluster, calls = zk_cluster({"n1": ["", "", "follower"], "n2": ["", "leader"],
                                 "n3": [""]})
    assert wait_zookeeper(cluster, timeout_s=30) < 5
    assert calls["n1"] == 3 and calls["n4"] == 0 and calls["n5"] == 0, "only ZooKeeper nodes"


def test_an_ensemble_that_never_forms_is_one_clusters_error_naming_each_server() -> None:
    cluster, _ = zk_cluster({"n1": ["leader"]})
    with pytest.raises(ClusterError, match=r"did not form within 1s \(n1: leader, "
                                           r"n2: not serving, n3: not serving\)"):
        wait_zookeeper(cluster, timeout_s=1)
