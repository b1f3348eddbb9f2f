"""The nemesis speaks the history's keys: a run's topics are ``<prefix>t0`` on the
cluster, its history's keys ``t0-1``. Found for real: every ``leader:t0-0`` of a
scenario failed with "no partition 't0-0' in the cluster's metadata" because the
facts were keyed by the prefixed names."""

from __future__ import annotations

import random

import pytest
from fakes import fake_cluster

from cluster.metadata import PartitionState
from nemesis import nodes
from nemesis.targets import resolve

PREFIX = "i20261122t160703599z-"


def _metadata(_bootstrap: str, topics: object = None) -> dict[str, PartitionState]:
    states = [
        PartitionState(PREFIX + "t0", 0, "n2", ("n2", "n1"), ("n2", "n1")),
        PartitionState(PREFIX + "t0", 1, "n3", ("n3", "n2"), ("n3",)),
        PartitionState("iolderrun-t0", 0, "n1", ("n1", "n3"), ("n1", "n3")),  # a reused cluster's
        PartitionState("__consumer_offsets", 0, "n1", ("n1",), ("n1",)),
    ]
    wanted = None if topics is None else set(topics)  # type: ignore[call-overload]
    return {s.key: s for s in states if wanted is None or s.topic in wanted}


@pytest.fixture(autouse=True)
def _fake_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nodes, "partitions", _metadata)


def test_partitions_are_keyed_as_the_history_keys_them_and_only_this_runs() -> None:
    cluster, _ = fake_cluster(3)
    parts = nodes.workload_partitions(cluster, None, PREFIX)
    assert sorted(parts) == ["t0-0", "t0-1"]
    assert parts["t0-1"].topic == "t0" and parts["t0-1"].isr == ("n3",)


def test_named_topics_are_looked_up_under_the_prefix() -> None:
    cluster, _ = fake_cluster(3)
    assert sorted(nodes.workload_partitions(cluster, ["t0"], PREFIX)) == ["t0-0", "t0-1"]


def test_without_a_prefix_the_cluster_names_stand() -> None:
    cluster, _ = fake_cluster(3)
    assert sorted(nodes.workload_partitions(cluster, None)) == [
        PREFIX + "t0-0", PREFIX + "t0-1", "iolderrun-t0-0"]


@pytest.mark.parametrize(("target", "hit"), [
    ("leader:t0-0", ["n2"]), ("followers:t0-0", ["n1"]), ("leader:t0-1", ["n3"]),
    ("followers:t0-1", ["n2"])])
def test_a_scenario_target_names_the_partition_its_history_wrote(target: str,
                                                                 hit: list[str]) -> None:
    cluster, _ = fake_cluster(3)
    facts = nodes.cluster_facts(cluster, None, PREFIX)
    assert resolve(target, list(cluster.nodes), random.Random(0), facts) == hit
