"""Targets aimed at consumer groups: a group's coordinator and the __consumer_offsets leaders."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.metadata import PartitionState
from harness.base.errors import UsageError
from nemesis.nodes import Resolver
from nemesis.power_loss import PowerLossNemesis
from nemesis.targets import (
    OFFSETS_TOPIC,
    Facts,
    is_explicit,
    is_target,
    java_hash,
    offsets_partition,
    offsets_partition_seen,
    resolve,
)

NODES = ["n1", "n2", "n3"]


def _facts(count: int = 50, leaderless: tuple[int, ...] = ()) -> Facts:
    offsets = {
        n: PartitionState(OFFSETS_TOPIC, n, None if n in leaderless else NODES[n % 3],
                          tuple(NODES), tuple(NODES))
        for n in range(count)
    }
    return Facts(partitions=dict, controller=lambda: "n1", offsets=lambda: offsets)


def test_the_group_hash_is_javas_string_hash_code() -> None:
    # what Java 17's "...".hashCode() returns (jshell)
    assert java_hash("") == 0
    assert java_hash("hello") == 99162322
    assert java_hash("Aa") == java_hash("BB") == 2112
    assert java_hash("polygenelubricants") == -(2**31)
    assert java_hash("\u00e9t\u00e9") == 227742  # one UTF-16 unit per character
    assert java_hash("\U0001f600") == 1772899  # a surrogate pair: two units


def test_the_offsets_partition_is_kafkas_placement() -> None:
    assert offsets_partition("hello", 50) == 99162322 % 50
    assert offsets_partition("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0
    assert offsets_partition("Aa", 7) == offsets_partition("BB", 7)


@given(group=st.text(min_size=1, max_size=20), count=st.integers(1, 200))
def test_every_group_lands_in_one_partition(group: str, count: int) -> None:
    assert 0 <= offsets_partition(group, count) < count


def test_the_coordinator_is_the_leader_of_the_groups_partition() -> None:
    rng = random.Random(1)
    assert resolve("group-coordinator:hello", NODES, rng, _facts()) == [NODES[(99162322 % 50) % 3]]
    assert resolve("group-coordinator:hello", NODES, rng, _facts(leaderless=(22,))) == []
    assert resolve("group-coordinator:hello", NODES, rng, _facts(count=0)) == []  # no topic yet


def test_a_groups_coordinator_is_found_by_its_id_on_the_cluster_with_the_runs_prefix() -> None:
    """A history names group ``g0``; the cluster's group.id is ``<prefix>g0``."""
    prefixed = replace(_facts(), id_prefix="i42-")
    found = resolve("group-coordinator:g0", NODES, random.Random(1), prefixed)
    assert found == [NODES[offsets_partition("i42-g0", 50) % 3]]
    assert offsets_partition("i42-g0", 50) % 3 != offsets_partition("g0", 50) % 3  # it differs


def test_offsets_leaders_draw_distinct_leaders_with_the_runs_rng() -> None:
    one = resolve("offsets-leaders", NODES, random.Random(3), _facts())
    assert len(one) == 1 and one[0] in NODES
    three = resolve("offsets-leaders:50", NODES, random.Random(3), _facts())
    assert three == NODES  # every partition drawn: each leader once, in node order
    assert resolve("offsets-leaders:2", NODES, random.Random(3), _facts()) == resolve(
        "offsets-leaders:2", NODES, random.Random(3), _facts())


def test_group_targets_are_named_and_checked() -> None:
    assert is_target("group-coordinator:g1") and is_target("offsets-leaders")
    assert is_target("offsets-leaders:3")
    assert not is_target("group-coordinator:") and not is_target("offsets-leaders:0")
    assert is_explicit("group-coordinator:g1", NODES)  # one named broker: never narrowed
    assert not is_explicit("offsets-leaders", NODES)
    with pytest.raises(UsageError, match="__consumer_offsets partitions"):
        resolve("group-coordinator:g1", NODES, random.Random(0),
                Facts(partitions=dict, controller=lambda: "n1"))
    with pytest.raises(UsageError, match="must be >= 1"):
        resolve("offsets-leaders:0", NODES, random.Random(0), _facts())



def test_the_options_take_group_targets_and_kills_and_pauses_draw_them() -> None:
    from test_nemesis_package import run

    from nemesis.settings import NemesisOptions

    with pytest.raises(UsageError, match="the count after offsets-leaders: must be >= 1"):
        NemesisOptions(targets=("offsets-leaders:0",))
    asked = run(NemesisOptions(faults=frozenset({"kill", "pause"}),
                               targets=("group-coordinator:g1", "offsets-leaders:2"),
                               interval=2), 300)
    drawn = {op["value"] for op in asked if op["f"] in ("kill", "pause")}
    assert drawn == {"group-coordinator:g1", "offsets-leaders:2"}


def _underreplicated() -> Facts:
    """``__consumer_offsets`` as a 0.10.2 broker creates it alone: one replica each."""
    offsets = {n: PartitionState(OFFSETS_TOPIC, n, "n1", ("n1",), ("n1",)) for n in range(6)}
    return Facts(partitions=dict, controller=lambda: "n1", offsets=lambda: offsets)


def test_a_coordinator_target_records_its_partitions_replicas() -> None:
    part = offsets_partition("hello", 6)
    assert offsets_partition_seen(_underreplicated(), "group-coordinator:hello") == {
        "offsets-partition": {"key": f"{OFFSETS_TOPIC}-{part}", "leader": "n1",
                              "replicas": ["n1"], "isr": ["n1"]}}
    three = offsets_partition_seen(_facts(count=6), "group-coordinator:hello")
    assert three["offsets-partition"]["replicas"] == NODES
    assert offsets_partition_seen(_facts(count=0), "group-coordinator:hello") == {
        "offsets-partition": None}  # no group has made the topic yet


def test_other_targets_record_nothing_and_ask_no_metadata() -> None:
    def never() -> dict[int, PartitionState]:
        raise AssertionError("metadata asked for a target that is not a group's coordinator")

    facts = Facts(partitions=dict, controller=lambda: "n1", offsets=never)
    for target in ("n1", ["n2", "n3"], "one", "offsets-leaders", "coordinator:t"):
        assert offsets_partition_seen(facts, target) == {}


def test_a_power_loss_of_a_coordinator_records_the_replicas_it_found() -> None:
    from tests.nemesis.test_nemesis_power_loss import power_cluster

    cluster, _ = power_cluster()
    resolver = Resolver(seed=1, facts_for=lambda _c: _underreplicated())
    out = PowerLossNemesis(resolver).invoke(
        cluster, {"f": "power-loss", "value": "group-coordinator:hello"})
    value = out["value"]
    assert list(value["lost"]) == ["n1"]
    assert value["offsets-partition"]["replicas"] == ["n1"]
    healed = PowerLossNemesis(resolver).invoke(cluster, {"f": "power-on", "value": "all"})
    assert "offsets-partition" not in healed["value"]  # a heal acts on named nodes


def test_a_fault_on_a_coordinator_asks_the_metadata_once() -> None:
    """What the completion records (``offsets-partition``) and whom the fault hits come
    from one look at ``__consumer_offsets``, not two."""
    from tests.nemesis.test_nemesis_power_loss import power_cluster

    cluster, _ = power_cluster()
    asked: list[str] = []
    offsets = _underreplicated().offsets
    assert offsets is not None

    def counted() -> Any:
        asked.append("offsets")
        return offsets()

    facts = Facts(partitions=dict, controller=lambda: "n1", offsets=counted)
    resolver = Resolver(seed=1, facts_for=lambda _c: facts)
    out = PowerLossNemesis(resolver).invoke(
        cluster, {"f": "power-loss", "value": "group-coordinator:hello"})
    assert list(out["value"]["lost"]) == ["n1"]
    assert out["value"]["offsets-partition"]["replicas"] == ["n1"]
    assert asked == ["offsets"]
