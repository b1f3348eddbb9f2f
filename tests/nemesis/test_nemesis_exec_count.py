"""A fault costs one command per node it acts on, and no metadata for a plain target.

Each command is a round trip to the node (an exec through the Docker engine, or
an SSH channel), so the number of them is what a fault's latency is made of:
counted here on fake nodes, timed on a real cluster by ``insync bench nemesis``.
A node the fault leaves alone gets no command at all (kill and pause), and a
target that names nodes by count or by name never asks the cluster who leads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fakes import fake_cluster, landed

from cluster import Cluster
from nemesis.clock import ClockNemesis
from nemesis.nodes import Resolver
from nemesis.partition import PartitionNemesis
from nemesis.process import KillNemesis, PauseNemesis
from nemesis.protocol import Nemesis
from nemesis.targets import Facts

N = 5


def no_metadata(_cluster: Cluster) -> Facts:
    def asked() -> Any:
        raise AssertionError("a plain target asked the cluster for metadata")

    return Facts(partitions=asked, controller=asked, brokers=asked)


Make = Callable[[Resolver], Nemesis]
CASES: list[Any] = [
    # (nemesis, ops run first, the op counted, how many nodes it acts on)
    pytest.param(PartitionNemesis, [], {"f": "start-partition", "value": "one"}, N,
                 id="partition-one"),
    pytest.param(PartitionNemesis, [], {"f": "start-partition", "value": "majority"}, N,
                 id="partition-majority"),
    pytest.param(PartitionNemesis, [{"f": "start-partition", "value": "one"}],
                 {"f": "stop-partition", "value": None}, N, id="partition-heal"),
    pytest.param(KillNemesis, [], {"f": "kill", "value": "one"}, 1, id="kill-one"),
    pytest.param(KillNemesis, [], {"f": "kill", "value": "all"}, N, id="kill-all"),
    pytest.param(KillNemesis, [{"f": "kill", "value": "one"}], {"f": "start", "value": "all"},
                 N, id="start-all"),
    pytest.param(PauseNemesis, [], {"f": "pause", "value": "one"}, 1, id="pause-one"),
    pytest.param(PauseNemesis, [], {"f": "pause", "value": "all"}, N, id="pause-all"),
    pytest.param(PauseNemesis, [{"f": "pause", "value": "all"}],
                 {"f": "resume", "value": "all"}, N, id="resume-all"),
    pytest.param(ClockNemesis, [], {"f": "bump-clock", "value": {"target": "all",
                                                                  "delta-ms": 500}},
                 N, id="bump-clock-all"),
    pytest.param(ClockNemesis, [], {"f": "freeze-clock", "value": {"target": "one"}}, 1,
                 id="freeze-clock-one"),
    pytest.param(ClockNemesis, [{"f": "bump-clock", "value": {"target": "all",
                                                              "delta-ms": 500}}],
                 {"f": "reset-clock", "value": "all"}, N, id="reset-clock-all"),
]


@pytest.mark.parametrize(("make", "before", "op", "acted"), CASES)
def test_a_fault_is_one_command_per_node_it_acts_on(
    make: Make, before: list[dict[str, Any]], op: dict[str, Any], acted: int
) -> None:
    cluster, fakes = fake_cluster(N, faketime=True)
    nem = make(Resolver(7, no_metadata))
    nem.setup(cluster)
    for earlier in before:
        nem.invoke(cluster, earlier)
    for fake in fakes.values():
        fake.commands = 0
    out = nem.invoke(cluster, op)
    assert "error" not in out, out
    counts = {name: fake.commands for name, fake in fakes.items()}
    assert sorted(counts.values(), reverse=True) == [1] * acted + [0] * (N - acted), counts


def test_the_spread_is_recorded_over_the_nodes_acted_on() -> None:
    cluster, fakes = fake_cluster(N)
    nem = KillNemesis(Resolver(7, no_metadata))
    out = nem.invoke(cluster, {"f": "kill", "value": ["n1", "n2"]})
    assert set(landed(out)["value"]["killed"]) == {"n1", "n2"}
    again = nem.invoke(cluster, {"f": "kill", "value": ["n1", "n2"]})  # nothing left to kill
    assert "spread-ms" not in again["value"]
    assert [f.signals for f in fakes.values()][:2] == [[("KILL", 100)]] * 2
