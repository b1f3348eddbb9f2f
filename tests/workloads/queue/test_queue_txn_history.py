"""The queue workload's ``--txn`` histories, by simulation, as the groups checker judges them.

The real generator and drain, in virtual time, against ``TxnKafka``
(``tests/support/txn_kafka.py``): transactions that commit their consumer's
positions, assigns from the group's committed offsets, aborts and ops abandoned
with no value. The invokes are the generator's; the completions are shaped as the
client records them (its shapes are held in ``test_queue_txn_commits.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from txn_kafka import TxnKafka

from checkers import check_history
from harness.gen import Op, plan_gen, run_phases, simulate
from workloads.queue.drain import Drain
from workloads.queue.generator import QueueGen
from workloads.queue.shape import OFFSET_RESET, TXN_GROUP, QueueOptions

GROUP_TYPES = ("lost-commit", "commit-skip", "garbage-commit")


def txn_history(kafka: TxnKafka, seed: int) -> list[Op]:
    opts = QueueOptions(key_count=3, max_writes_per_key=12, partitions_per_topic=2, txn=True,
                        weights={"send": 1, "poll": 1, "txn": 2, "assign": 0.4})
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=100, time_limit_s=3, quiet_s=0.5,
                               drain=Drain(groups=(TXN_GROUP,)), final_time_limit_s=0.3))
    return simulate(plan, concurrency=4, seed=seed, outcome_fn=kafka)


def client_invokes(ops: list[Op]) -> list[Op]:
    return [op for op in ops if op["type"] == "invoke" and isinstance(op["process"], int)]


def completion_of(ops: list[Op], invoke: Op) -> Op | None:
    return next((op for op in ops[ops.index(invoke) + 1:]
                 if op["process"] == invoke["process"]), None)


def group_anomalies(verdict: dict[str, Any]) -> dict[str, Any]:
    return {t: a for t, a in verdict["anomalies"].items() if t in GROUP_TYPES}


def test_invokes_carry_the_commit_where_the_txn_polls_and_assigns_seek_committed() -> None:
    ops = txn_history(TxnKafka(), seed=3)
    invokes = client_invokes(ops)
    txns = [op for op in invokes if op["f"] == "txn"]
    polling = [op for op in txns if ["poll"] in op["value"]]
    assert polling and len(polling) < len(txns)  # some txns only send
    for op in txns:  # a commit, last, exactly where the txn polls
        assert (op["value"][-1] == ["commit"]) is (op in polling)
        assert op["value"].count(["commit"]) == (op in polling)
    assert all(["commit"] not in op["value"] for op in invokes if op["f"] in ("send", "poll"))
    drain_at = next(i for i, op in enumerate(invokes) if op.get("seek") == "beginning")
    joins = [op for op in invokes[:drain_at] if op["f"] == "assign"]
    assert joins and all((op["group"], op["reset"], op["seek"]) ==
                         (TXN_GROUP, OFFSET_RESET, "committed") for op in joins)
    for op in invokes[drain_at:]:  # the drain's re-read names no group: nothing changed
        if op["f"] == "assign":
            assert op["seek"] == "beginning" and "group" not in op
    (final,) = [op for op in invokes if op["f"] == "committed"]
    assert final["group"] == TXN_GROUP and invokes.index(final) < drain_at
    assert set(final["value"][0][1]) >= {k for op in joins for k in op["value"]}


def test_subscribed_txn_members_name_the_group_and_seek_nothing() -> None:
    opts = QueueOptions(key_count=2, max_writes_per_key=6, consume="subscribe", txn=True,
                        weights={"send": 1, "txn": 1, "subscribe": 0.5})
    plan = plan_gen(run_phases(QueueGen.start(opts), rate=50, time_limit_s=1,
                               drain=Drain(groups=(TXN_GROUP,)), final_time_limit_s=0.2))
    invokes = client_invokes(simulate(plan, concurrency=3, seed=1, outcome_fn=TxnKafka()))
    joins = [op for op in invokes if op["f"] == "subscribe"]
    assert joins and all((op["group"], op["reset"]) == (TXN_GROUP, OFFSET_RESET)
                         and "seek" not in op and "auto-commit" not in op for op in joins)


def test_transactions_commit_to_their_own_group_not_to_dealt_ones() -> None:
    with pytest.raises(ValueError, match="without txn"):
        QueueOptions(consume="subscribe", groups=1, txn=True)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), unknown_p=st.sampled_from([0.0, 0.15]))
def test_a_correct_kafkas_txn_history_has_its_commits_judged_and_is_valid(
        seed: int, unknown_p: float) -> None:
    ops = txn_history(TxnKafka(abort_p=0.2, unknown_p=unknown_p), seed)
    verdict = check_history(ops)
    assert verdict["valid"] is True, group_anomalies(verdict) or verdict["anomaly-types"]
    stats = verdict["stats"]
    assert stats["commits"] > 0 and stats["committed-reads"] > 0  # judged, not skipped
    done = [completion_of(ops, op) for op in client_invokes(ops) if op["f"] == "txn"
            and op["value"][-1] == ["commit"]]
    assert any(c is not None and c["type"] == "ok" for c in done)
    assert any(c is not None and c["type"] == "fail" and c["value"][-1][1] for c in done)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_offsets_whose_markers_land_after_the_transaction_returned_are_no_loss(
        seed: int) -> None:
    """Before Kafka 2.5 a read may return a group's older offsets after an ok transaction
    committed newer ones, until its markers are written; they are written by the end of
    its process's next transaction that sends or commits, which is what the checker allows."""
    kafka = TxnKafka(abort_p=0.2, late_p=0.5, land_p=0.05)
    verdict = check_history(txn_history(kafka, seed))
    assert verdict["valid"] is True, group_anomalies(verdict) or verdict["anomaly-types"]


def test_an_aborted_transactions_offsets_kept_by_the_coordinator_are_garbage() -> None:
    """The same run against a coordinator that applies an aborted transaction's offsets:
    the final committed read returns an offset only an aborted txn committed."""
    found = []
    for seed in range(4):
        ops = txn_history(TxnKafka(abort_p=0.3, keeps_aborted_offsets=True), seed)
        garbage = check_history(ops)["anomalies"].get("garbage-commit", [])
        by_index = {op["index"]: op for op in ops}
        for g in garbage:
            writer = by_index[g["writer"]]
            assert (writer["f"], writer["type"]) == ("txn", "fail")
            assert writer["value"][-1][1][g["key"]] == g["offset"]
            assert g["group"] == TXN_GROUP
        found += garbage
    assert found  # some run's final read lands on an offset only an abort committed


def test_offsets_the_coordinator_forgets_are_a_lost_commit() -> None:
    """Committed offsets read as null, or a member started below them, after the group's
    offsets were read back (O1: an offsets topic that lost them)."""
    lost = []
    for seed in range(4):
        ops = txn_history(TxnKafka(abort_p=0.1, forgets_after=30), seed)
        anomalies = group_anomalies(check_history(ops))
        assert set(anomalies) <= {"lost-commit"}, anomalies
        lost += anomalies.get("lost-commit", [])
    assert lost and {a["via"] for a in lost} <= {"committed", "start"}
    assert all(a["group"] == TXN_GROUP for a in lost)


def test_offsets_stored_past_what_was_sent_are_a_commit_skip() -> None:
    """An offset above every position a member sent passes over records nobody received."""
    skips = []
    for seed in range(4):
        verdict = check_history(txn_history(TxnKafka(abort_p=0.1, skews=2), seed))
        skips += verdict["anomalies"].get("commit-skip", [])
    assert skips and all(a["group"] == TXN_GROUP for a in skips)
