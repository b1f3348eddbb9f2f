"""Symbolic targets resolve against node lists and (fake) metadata."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.metadata import PartitionState
from harness.base.errors import UsageError
from nemesis.targets import Facts, is_explicit, is_target, leader_count, resolve

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

    return Facts(partitions=parts, controller=controller,
                 brokers=lambda: ["n1", "n2", "n3", "n5"])  # n4 starting, not registered


@pytest.mark.parametrize(("target", "expected"), [
    ("leaders:2", ["n2", "n4"]),  # both partitions that have a leader
    ("leaders:9", ["n2", "n4"]),
    ("primaries:2", ["n2", "n4"]),
    ("controller", ["n3"]),
    ("non-controllers", ["n1", "n2", "n5"]),  # registered, not n3, not the starting n4
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


@pytest.mark.parametrize("seed", range(20))
def test_leaders_is_the_leader_of_one_drawn_partition(seed: int) -> None:
    """Not every leader: on 3 nodes the leaders of all partitions are every node."""
    got = resolve("leaders", NODES, random.Random(seed), facts())
    assert got in (["n2"], ["n4"])  # t1-0 has no leader: never drawn
    assert resolve("primaries", NODES, random.Random(seed), facts()) == got, "an alias"


def test_leaders_draws_every_led_partition_over_seeds() -> None:
    seen = {tuple(resolve("leaders", NODES, random.Random(s), facts())) for s in range(40)}
    assert seen == {("n2",), ("n4",)}


def test_leaders_of_a_leaderless_workload_is_nobody() -> None:
    none = Facts(partitions=lambda: {"t1-0": PARTS["t1-0"]}, controller=lambda: "n3")
    assert resolve("leaders", NODES, random.Random(0), none) == []


@pytest.mark.parametrize(("target", "count"), [
    ("leaders", 1), ("primaries", 1), ("leaders:3", 3), ("primaries:12", 12), ("leader:t0-0", None),
    ("one", None), ("leadersx", None)], ids=str)
def test_leader_count(target: str, count: int | None) -> None:
    assert leader_count(target) == count
    assert is_target(target) == (count is not None or target == "one")


@pytest.mark.parametrize("target", ["leaders:0", "leaders:-1", "primaries:two", "leaders:"])
def test_a_bad_leader_count_is_a_usage_error_and_not_a_target(target: str) -> None:
    with pytest.raises(UsageError, match="must be >= 1"):
        leader_count(target)
    assert not is_target(target)


@pytest.mark.parametrize(("target", "explicit"), [
    ("all", True), ("majority", True), ("n2", True), (["n1", "n2"], True),
    ("one", False), ("minority", False), ("leaders", False), ("leaders:2", False),
    ("controller", False), ("leader:t0-0", True), ("followers:t0-0", True),
    ("non-controllers", True),
], ids=str)
def test_wide_targets_names_and_named_partitions_are_explicit(
    target: str | list[str], explicit: bool
) -> None:
    assert is_explicit(target, NODES) == explicit


def test_non_controllers_needs_a_source_that_knows_the_registered_brokers() -> None:
    blind = Facts(partitions=lambda: PARTS, controller=lambda: "n3")
    with pytest.raises(UsageError, match=r"non-controllers.*registered brokers"):
        resolve("non-controllers", NODES, random.Random(0), blind)
    assert is_target("non-controllers")


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
