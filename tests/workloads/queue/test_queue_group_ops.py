"""The queue generator and drain with recorded groups (``--commit sync``), by simulation.

Members subscribe naming their group and ``reset``, every poll is invoked as
``[["poll"], ["commit"]]``, and the drain reads each group's committed offsets,
one ``committed`` op per group naming every key, before it re-reads anything
(docs/HISTORY-GROUPS.md: final committed reads go after the heal, before the drain).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_kafka import FakeKafka

from cluster.versions import resolve_version
from harness.base.errors import UsageError
from harness.gen import Op, plan_gen, run_phases, simulate
from workloads.queue import QUEUE, QueueSettings, combinations, options
from workloads.queue.drain import Drain
from workloads.queue.generator import QueueGen
from workloads.queue.shape import TXN_GROUP, QueueOptions, group_name


def latest_version() -> Any:
    return resolve_version("4.1.2")


class GroupKafka:
    """``FakeKafka`` answering a poll's commit with the offsets after what it read, and a
    ``committed`` op with no offset committed (the generator's shape is under test here,
    not a group's semantics: ``tests/support/group_model.py`` models those)."""

    def __init__(self) -> None:
        self.kafka = FakeKafka()

    def __call__(self, op: Op, rng: random.Random) -> Mapping[str, Any]:
        if op["f"] == "committed":
            return {"type": "ok", "value": [["committed", dict.fromkeys(op["value"][0][1])]]}
        if op["f"] == "poll" and op["value"][-1] == ["commit"]:
            done = self.kafka({**op, "value": [["poll"]]}, rng)
            read = done["value"][0][1]
            commit = {k: recs[-1][0] + 1 for k, recs in read.items() if recs}
            return {"type": "ok", "value": [*done["value"], ["commit", commit]]}
        return self.kafka(op, rng)


def history(groups: int, seed: int) -> list[Op]:
    opts = QueueOptions(key_count=3, max_writes_per_key=6, consume="subscribe", groups=groups,
                        weights={"send": 1, "poll": 1, "subscribe": 0.3})
    names = tuple(f"g{i}" for i in range(groups))
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=50, time_limit_s=1, quiet_s=0.5,
                               drain=Drain(groups=names), final_time_limit_s=2))
    return simulate(plan, concurrency=3, seed=seed, outcome_fn=GroupKafka())


@settings(max_examples=4, deadline=None)
@given(groups=st.integers(1, 3), seed=st.integers(0, 1000))
def test_members_name_their_group_and_the_drain_reads_each_groups_offsets_first(
        groups: int, seed: int) -> None:
    ops = history(groups, seed)
    invokes = [op for op in ops if op["type"] == "invoke" and op["process"] != "nemesis"]
    first_drain = next(i for i, op in enumerate(invokes) if op.get("seek") == "beginning")
    joins = [op for op in invokes[:first_drain] if op["f"] == "subscribe"]
    assert len(joins) > len({op["process"] for op in joins})  # drawn ones too
    assert joins and all(op["group"] == group_name(op["process"], groups)
                         and op["reset"] == "earliest" for op in joins)
    polls = [op for op in invokes[:first_drain] if op["f"] == "poll"]
    assert polls and all(op["value"] == [["poll"], ["commit"]] for op in polls)
    reads = [op for op in invokes if op["f"] == "committed"]
    assert sorted(op["group"] for op in reads) == [f"g{i}" for i in range(groups)]
    keys = ({k for op in invokes if op["f"] == "send" for _, k, _ in op["value"]}
            | {k for op in joins for k in op["value"]})
    assert all(set(op["value"][0][1]) == keys for op in reads)  # every key ever seen
    last_read_end = max(i for i, op in enumerate(ops)
                        if op["f"] == "committed" and op["type"] != "invoke")
    drain_start = min(i for i, op in enumerate(ops) if op["type"] == "invoke"
                      and i > ops.index(reads[0]) and op["f"] in ("crash", "assign"))
    assert last_read_end < drain_start  # every committed read completed before the re-read
    assert all(ops.index(r) > ops.index(p) for r in reads for p in polls)


def test_without_recorded_groups_nothing_changes() -> None:
    opts = QueueOptions(key_count=3, max_writes_per_key=6, consume="subscribe",
                        weights={"send": 1, "poll": 1})
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=100, time_limit_s=1, quiet_s=1,
                               drain=Drain(), final_time_limit_s=1))
    ops = simulate(plan, concurrency=3, seed=3, outcome_fn=FakeKafka())
    assert not any(op["f"] == "committed" or "group" in op for op in ops)
    assert all(op["value"] == [["poll"]] for op in ops
               if op["f"] == "poll" and op["type"] == "invoke")


def test_groups_need_subscribe() -> None:
    with pytest.raises(ValueError, match="groups"):
        QueueOptions(groups=2)


def test_the_workload_record_deals_subscribed_members_into_groups() -> None:
    sync = QueueSettings(sub_via="subscribe", commit="sync", groups=3)
    shape = options.generator_options(sync)
    assert (shape.groups, shape.auto_commit, shape.committed_every_ns) == (3, False, None)
    assert options.group_names_of(sync) == ("g0", "g1", "g2")
    drain = QUEUE.final_generator(sync)
    assert isinstance(drain, Drain) and drain.groups == ("g0", "g1", "g2")
    auto = options.generator_options(QueueSettings(sub_via="subscribe"))
    assert (auto.groups, auto.auto_commit) == (1, True) and auto.committed_every_ns
    assert options.generator_options(QueueSettings()).groups == 0
    assert options.group_names_of(QueueSettings()) == ()
    for txn in (QueueSettings(txn=True), QueueSettings(sub_via="subscribe", txn=True)):
        shape = options.generator_options(txn)  # transactions commit to their one group
        assert (shape.groups, shape.txn) == (0, True)
        assert options.group_names_of(txn) == (TXN_GROUP,) == ("g0",)


def test_the_auto_commit_probe_says_so_and_reads_committed_offsets_every_few_seconds(
) -> None:
    opts = QueueOptions(key_count=3, max_writes_per_key=6, consume="subscribe", groups=2,
                        auto_commit=True, committed_every_ns=300_000_000,
                        weights={"send": 1, "poll": 1})
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=50, time_limit_s=2, quiet_s=0.5,
                               drain=Drain(groups=("g0", "g1")), final_time_limit_s=1))
    ops = simulate(plan, concurrency=3, seed=5, outcome_fn=GroupKafka())
    invokes = [op for op in ops if op["type"] == "invoke"]
    joins = [op for op in invokes if op["f"] == "subscribe"]
    assert joins and all(op["auto-commit"] is True and "group" in op for op in joins)
    assert all(op["value"] == [["poll"]] for op in invokes if op["f"] == "poll")
    reads = [op for op in invokes if op["f"] == "committed"]
    assert len(reads) >= 5  # 2 s / 0.3 s in the main phase, and one per group at the end
    assert [op["group"] for op in reads[:4]] == ["g0", "g1", "g0", "g1"]


def test_a_transactional_run_reads_its_one_group_on_the_clock_it_is_given() -> None:
    every = options.generator_options(QueueSettings(txn=True, committed_every=0.25))
    assert every.committed_every_ns == 250_000_000 and every.groups == 0
    assert options.generator_options(QueueSettings(txn=True)).committed_every_ns is None
    assert options.generator_options(QueueSettings(txn=True, committed_every=0)
                                     ).committed_every_ns is None
    plan = plan_gen(run_phases(QueueGen.start(every), rate=50, time_limit_s=2, quiet_s=0.5,
                               final_time_limit_s=1))
    ops = simulate(plan, concurrency=3, seed=5, outcome_fn=GroupKafka())
    reads = [op for op in ops if op["type"] == "invoke" and op["f"] == "committed"]
    times = [op["time"] for op in reads if op["time"] < 2_000_000_000]  # the main phase's
    assert len(times) >= 6 and {op["group"] for op in reads} == {TXN_GROUP}
    # due every 0.25 s from the previous one's draw; the rate's pacing moves invokes a little
    assert all(b - a >= 200_000_000 for a, b in pairwise(times))


def test_committed_reads_need_a_group_that_commits() -> None:
    with pytest.raises(UsageError, match=r"--committed-every 0\.5 needs groups that commit"):
        combinations.validate(QueueSettings(committed_every=0.5), latest_version())
    combinations.validate(QueueSettings(txn=True, committed_every=0.5), latest_version())
    combinations.validate(QueueSettings(sub_via="subscribe", committed_every=0.5), latest_version())


class OneMemberGroups(GroupKafka):
    """A correct Kafka for groups that have one live member each (a thread's processes are
    all of one group when there are as many groups as threads): a member starts each key
    it newly subscribes to at its group's committed offset, says so with ``assigned`` in
    its next poll, and its commits are what the group's ``committed`` reads answer.
    ``lower``: committed reads answer one below the truth for that many keys (a Kafka
    that lost the last commit of each)."""

    def __init__(self, groups: int, lower: int = 0) -> None:
        super().__init__()
        self.groups = groups
        self.lower = lower
        self.committed: dict[str, dict[str, int]] = {}
        self.news: dict[Any, list[str]] = {}

    def __call__(self, op: Op, rng: random.Random) -> Mapping[str, Any]:
        p, f = op["process"], op["f"]
        k = self.kafka
        if f == "subscribe":
            held = set(k.assigned.get(p, ()))
            new = [key for key in op["value"] if key not in held]
            k.assigned[p] = list(op["value"])
            for key in new:
                k.pos[(p, key)] = self.committed.get(op["group"], {}).get(key, 0)
            self.news[p] = new
            return {"type": "ok"}
        if f == "poll" and op["value"][-1] == ["commit"]:
            group = group_name(p, self.groups)
            head: list[list[Any]] = []
            if self.news.get(p):
                head = [["poll", {}], ["assigned", sorted(self.news.pop(p))]]
            read = k({**op, "value": [["poll"]]}, rng)["value"][0][1]
            commit = {key: recs[-1][0] + 1 for key, recs in read.items() if recs}
            self.committed.setdefault(group, {}).update(commit)
            return {"type": "ok", "value": [*head, ["poll", read], ["commit", commit]]}
        if f == "committed":
            found = self.committed.get(op["group"], {})
            answer: dict[str, int | None] = {key: found.get(key) for key in op["value"][0][1]}
            for key in sorted(key for key, c in answer.items() if c)[:self.lower]:
                answer[key] = answer[key] - 1  # type: ignore[operator]
            return {"type": "ok", "value": [["committed", answer]]}
        return super().__call__(op, rng)


def group_run(lower: int, seed: int) -> dict[str, Any]:
    from checkers import check_history

    opts = QueueOptions(key_count=3, max_writes_per_key=12, consume="subscribe", groups=3,
                        weights={"send": 2, "poll": 1}, client_life_ns=400_000_000)
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=60, time_limit_s=2, quiet_s=0.5,
                               drain=Drain(groups=("g0", "g1", "g2")), final_time_limit_s=2))
    ops = simulate(plan, concurrency=3, seed=seed, outcome_fn=OneMemberGroups(3, lower))
    return check_history(ops)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_checker_finds_the_workloads_group_history_of_a_correct_kafka_valid(seed: int
                                                                               ) -> None:
    verdict = group_run(0, seed)
    assert verdict["valid"] is True, verdict["anomalies"]
    assert verdict["stats"]["commits"] > 0 and verdict["stats"]["committed-reads"] > 0


def test_a_committed_read_below_an_acknowledged_commit_is_a_lost_commit() -> None:
    verdict = group_run(1, 1)
    assert verdict["valid"] is False
    assert "lost-commit" in verdict["anomalies"]
    # an offset nobody committed: a garbage-commit as well, as the contract has it
    assert set(verdict["anomalies"]) <= {"lost-commit", "garbage-commit"}


@pytest.mark.parametrize("auto_commit", [False, True], ids=["sync", "auto"])
def test_members_joining_late_only_send_until_then(auto_commit: bool) -> None:
    """``--members-from``: before ``join_from_ns`` no process subscribes, polls or reads a
    group's offsets (a consumer would look up its coordinator); it sends meanwhile."""
    late = 1_000_000_000
    opts = QueueOptions(key_count=3, max_writes_per_key=1000, consume="subscribe", groups=2,
                        auto_commit=auto_commit,
                        committed_every_ns=300_000_000 if auto_commit else None,
                        weights={"send": 1, "poll": 1, "subscribe": 0.3}, join_from_ns=late)
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=50, time_limit_s=2, quiet_s=0.5,
                               drain=Drain(groups=("g0", "g1")), final_time_limit_s=1))
    ops = simulate(plan, concurrency=3, seed=11, outcome_fn=GroupKafka())
    invokes = [op for op in ops if op["type"] == "invoke" and op["process"] != "nemesis"]
    early = [op for op in invokes if op["time"] < late]
    assert early and {op["f"] for op in early} == {"send"}
    later = {op["f"] for op in invokes if late <= op["time"] < 2 * late}
    assert {"subscribe", "poll"} <= later
    assert ("committed" in later) is auto_commit


def test_a_late_join_is_refused_below_zero() -> None:
    with pytest.raises(ValueError, match="join_from_ns"):
        QueueOptions(join_from_ns=-1)
