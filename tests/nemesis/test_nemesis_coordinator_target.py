"""``coordinator:ID``: the leader of the ``__transaction_state`` partition of a transactional id."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cluster.metadata import PartitionState
from harness.base.errors import UsageError
from nemesis.targets import (
    TXN_STATE_TOPIC,
    Facts,
    is_explicit,
    is_target,
    java_hash,
    resolve,
    txn_partition,
)

NODES = ["n1", "n2", "n3"]


def txn_state(count: int = 50) -> dict[int, PartitionState]:
    """Partition p led by n(p % 3 + 1); partition 7 has no leader."""
    return {p: PartitionState(TXN_STATE_TOPIC, p, None if p == 7 else f"n{p % 3 + 1}",
                              tuple(NODES), tuple(NODES)) for p in range(count)}


def facts(state: dict[int, PartitionState] | None) -> Facts:
    return Facts(partitions=dict, controller=lambda: "n1",
                 txn_state=None if state is None else (lambda: state))


@pytest.mark.parametrize(("text", "expected"), [
    ("", 0), ("hello", 99162322), ("insync-0", 560120547),
    ("polygenelubricants", -(1 << 31)),  # Integer.MIN_VALUE: Kafka's abs makes it 0
    ("é€", 0xE9 * 31 + 0x20AC), ("😀", 0xD83D * 31 + 0xDE00),  # UTF-16 code units
], ids=str)
def test_java_string_hash(text: str, expected: int) -> None:
    assert java_hash(text) == expected


def test_the_partition_is_kafkas() -> None:
    assert txn_partition("hello", 50) == 99162322 % 50
    assert txn_partition("polygenelubricants", 50) == 0
    assert txn_partition("insync-0", 50) == 47


@given(st.text(max_size=40), st.integers(1, 200))
def test_a_partition_is_always_in_range(txn_id: str, count: int) -> None:
    assert 0 <= txn_partition(txn_id, count) < count


def test_coordinator_resolves_to_the_leader_of_the_ids_partition() -> None:
    rng = random.Random(1)
    assert resolve("coordinator:insync-0", NODES, rng, facts(txn_state())) == ["n3"]  # 47
    p = txn_partition("hello", 50)
    assert resolve("coordinator:hello", NODES, rng, facts(txn_state())) == [f"n{p % 3 + 1}"]
    # the count is the topic's own (transaction.state.log.num.partitions)
    p = txn_partition("hello", 10)
    assert resolve("coordinator:hello", NODES, rng, facts(txn_state(10))) == [f"n{p % 3 + 1}"]


def test_no_leader_or_no_topic_yet_resolves_to_nothing() -> None:
    leaderless = next(t for t in (f"id-{i}" for i in range(1000)) if txn_partition(t, 50) == 7)
    assert resolve(f"coordinator:{leaderless}", NODES, random.Random(), facts(txn_state())) == []
    assert resolve("coordinator:x", NODES, random.Random(), facts({})) == []


def test_a_source_without_the_topic_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=TXN_STATE_TOPIC):
        resolve("coordinator:x", NODES, random.Random(), facts(None))


def test_it_is_a_target_and_explicit() -> None:
    assert is_target("coordinator:insync-3") and not is_target("coordinator:")
    assert is_explicit("coordinator:insync-3", NODES)


def test_an_id_is_found_on_the_cluster_with_the_runs_prefix() -> None:
    """A script names thread 0's producer ``txn-0``; on the cluster it is ``<prefix>txn-0``."""
    from dataclasses import replace

    prefixed = replace(facts(txn_state(6)), id_prefix="i42-")
    p = txn_partition("i42-txn-0", 6)
    assert p != txn_partition("txn-0", 6)  # the prefix changes the answer here
    assert resolve("coordinator:txn-0", NODES, random.Random(1), prefixed) == [f"n{p % 3 + 1}"]


@pytest.mark.parametrize("thread", [0, 3, 11])
def test_the_workloads_transactional_ids_are_the_prefix_and_txn_n(thread: int) -> None:
    """The run's prefix is ``<token>-`` (``RunEnv.topic_prefix``), which ``cluster_facts``
    is given; ``coordinator:txn-N`` must name the id the workloads' thread N uses."""
    from workloads.eos.options import client_options as eos_options
    from workloads.protocol import RunEnv
    from workloads.queue.options import QueueSettings
    from workloads.queue.options import client_options as queue_options

    env = RunEnv(bootstrap="b:9092", token="r7", seed=1, replication_factor=3)
    queue = queue_options(QueueSettings(txn=True), token=env.token)
    _, eos = eos_options(None, token=env.token)
    for opts in (queue, eos):
        assert opts.producer_config(thread)["transactional.id"] == \
            f"{env.topic_prefix}txn-{thread}"
