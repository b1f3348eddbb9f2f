"""Cutting the clients off: the partition nemesis drops each node's ``client_source``,
as its provisioner reported it, and never asks the node for its gateway."""

from __future__ import annotations

from fakes import GATEWAY, FakeNode, fake_cluster

from nemesis.partition import PartitionNemesis

CLIENTS = "192.0.2.77"  # not the fake nodes' default route (GATEWAY)
SPLIT = {"f": "start-partition", "value": {"components": [["n1"], ["n2", "n3"]]}}


def drops(fake: FakeNode) -> list[str]:
    return [c for c in fake.iptables() if "-j DROP" in c]


def test_the_minority_side_drops_the_client_source_and_no_route_is_looked_up() -> None:
    cluster, fakes = fake_cluster(3)
    for node in cluster.nodes.values():
        node.client_source = CLIENTS
    nem = PartitionNemesis(partition_clients=True)
    nem.setup(cluster)
    out = nem.invoke(cluster, SPLIT)
    assert "error" not in out
    assert out["value"]["clients-cut"] == ["n1"]
    (cut,) = drops(fakes["n1"])
    assert cut.endswith(f",{CLIENTS} -j DROP")
    assert all(CLIENTS not in c for n in ("n2", "n3") for c in drops(fakes[n]))
    scripts = [s for f in fakes.values() for s in f.scripts]
    assert all("route" not in s for s in scripts) and all(GATEWAY not in s for s in scripts)


def test_a_node_without_a_client_source_is_recorded_not_guessed() -> None:
    cluster, fakes = fake_cluster(3)
    cluster.nodes["n1"].client_source = ""
    nem = PartitionNemesis(partition_clients=True)
    nem.setup(cluster)
    out = nem.invoke(cluster, SPLIT)
    assert out["value"]["clients-cut"] == ["n1"]
    assert list(out["error"]) == ["n1"]
    assert "no address the clients come from" in out["error"]["n1"]
    assert drops(fakes["n1"]) == []
    n1 = cluster.nodes["n1"].address
    assert drops(fakes["n2"]) == [f"iptables -w 10 -A INSYNC -s {n1} -j DROP"]
