"""Symbolic targets resolve against node lists and (fake) metadata."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.metadata import PartitionState
from harness.base.errors import UsageError
from nemesis.targets import Facts, resolve

NODES = ["n1", "n2", "n3", "n4", "n5"]
PARTS = {
    "t0-0": PartitionState("t0", 0, "n2", ("n2", "n4", "n5"), ("n2", "n4")),
    "t0-1": PartitionState("t0", 1, "n4", ("n4", "n1", "n2"), ("n4", "n1", "n2")),
    "t1-0": PartitionState("t1", 0, None, ("n3",), ()),
}


def facts(asked: list[str] | None = None) -> Facts:
    def parts() -> dict[str, PartitionState]:
        if asked is not None:
            asked.append("partitions")
        return PARTS

    def controller() -> str:
        if asked is not None:
            asked.append("controller")
        return "n3"

    return Facts(partitions=parts, controller=controller)


@pytest.mark.parametrize(("target", "expected"), [
    ("leaders", ["n2", "n4"]),
    ("primaries", ["n2", "n4"]),
    ("controller", ["n3"]),
    ("leader:t0-0", ["n2"]),
    ("followers:t0-0", ["n4", "n5"]),
    ("leader:t1-0", []),
    ("all", NODES),
    ("n5", ["n5"]),
    (["n3", "n1", "n3"], ["n1", "n3"]),
], ids=str)
def test_resolves_to_the_nodes_named(target: str | list[str], expected: list[str]) -> None:
    assert resolve(target, NODES, random.Random(0), facts()) == expected


def test_plain_targets_never_ask_the_cluster() -> None:
    asked: list[str] = []
    for target in ("one", "minority", "majority", "all", "n2"):
        resolve(target, NODES, random.Random(0), facts(asked))
    assert asked == []


@given(st.integers(3, 9), st.integers(0, 2**32))
def test_random_target_sizes(n: int, seed: int) -> None:
    nodes = [f"n{i}" for i in range(1, n + 1)]
    rng = random.Random(seed)
    assert len(resolve("one", nodes, rng, facts())) == 1
    minority = resolve("minority", nodes, rng, facts())
    assert len(minority) >= 1 and 2 * len(minority) < n
    assert len(resolve("majority", nodes, rng, facts())) == n // 2 + 1


@pytest.mark.parametrize("target", ["everyone", "leader:t9-9", ["n1", "n7"]], ids=str)
def test_bad_targets_raise_usage_errors(target: str | list[str]) -> None:
    with pytest.raises(UsageError):
        resolve(target, NODES, random.Random(0), facts())


def test_the_newest_persisted_quorum_leader_is_the_controller() -> None:
    from nemesis.nodes import newest_quorum_leader

    states = {
        "n1": '{"leaderId":1,"leaderEpoch":4,"votedId":-1,"data_version":1}',
        "n2": '{"leaderId":2,"leaderEpoch":5,"votedId":2,"data_version":1}',
        "n3": '{"leaderId":-1,"leaderEpoch":6,"votedId":3,"data_version":1}',  # a candidate
        "n4": "garbage",
    }
    assert newest_quorum_leader(states) == "n2"
    assert newest_quorum_leader({"n1": '{"leaderId":-1,"leaderEpoch":1}'}) is None
