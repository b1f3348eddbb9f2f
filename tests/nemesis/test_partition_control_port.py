"""A partition never cuts the control node off from a host's SSH port (``KafkaNode.control_ports``).

The rules a node was sent are evaluated in order, first match wins, as iptables
does in insync's chain: a packet from the harness (the clients' address, which
``partition_clients`` cuts) to the SSH port is accepted, the same address to
the broker port is dropped.
"""

from __future__ import annotations

import re

from fakes import FakeNode, fake_cluster

from cluster.ssh.provisioner import CHAIN_PREFIX
from nemesis.net import CHAINS, PARTITION_CHAIN
from nemesis.partition import PartitionNemesis

CONTROL = "192.0.2.10"
SPLIT = {"f": "start-partition", "value": {"components": [["n1"], ["n2", "n3"]]}}


def verdict(fake: FakeNode, source: str, port: int) -> str:
    """What insync's partition chain does with a TCP packet from ``source`` to ``port``."""
    rules = [c for c in fake.iptables() if f"-A {PARTITION_CHAIN} " in c]
    for rule in rules:
        dport = re.search(r"--dport (\d+)", rule)
        sources = re.search(r"-s (\S+)", rule)
        if dport and int(dport.group(1)) != port:
            continue
        if sources and source not in sources.group(1).split(","):
            continue
        return rule.rsplit("-j ", 1)[1]
    return "RETURN"


def _cut_with_control_port(ports: tuple[int, ...]) -> dict[str, FakeNode]:
    cluster, fakes = fake_cluster(3)
    for node in cluster.nodes.values():
        node.client_source = CONTROL
        node.control_ports = ports
    nem = PartitionNemesis(partition_clients=True)
    nem.setup(cluster)
    out = nem.invoke(cluster, SPLIT)
    assert "error" not in out and out["value"]["clients-cut"] == ["n1"]
    return fakes


def test_the_ssh_port_stays_open_to_the_control_node_on_a_cut_off_host() -> None:
    fakes = _cut_with_control_port((2222,))
    assert verdict(fakes["n1"], CONTROL, 2222) == "ACCEPT"
    assert verdict(fakes["n1"], CONTROL, 9092) == "DROP"
    assert verdict(fakes["n1"], "10.0.0.2", 9093) == "DROP"
    assert verdict(fakes["n1"], "10.0.0.2", 2222) == "ACCEPT"


def test_without_control_ports_the_cut_drops_everything_from_the_harness() -> None:
    fakes = _cut_with_control_port(())
    assert verdict(fakes["n1"], CONTROL, 2222) == "DROP"


def test_down_over_ssh_finds_every_chain_the_nemesis_adds_by_its_prefix() -> None:
    assert all(chain.startswith(CHAIN_PREFIX) for chain in CHAINS)
