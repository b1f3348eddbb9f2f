"""Each Kafka error, per kind of call, maps to fail or info for a documented reason."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from confluent_kafka import KafkaError, KafkaException
from hypothesis import given
from hypothesis import strategies as st

from workloads.outcomes import (
    AMBIGUOUS_SEND,
    KINDS,
    REJECTED_BEFORE_APPEND,
    Kind,
    Outcome,
    classify,
    describe,
    merge,
)

K = KafkaError

# (kind, code, retried, expected type): one row per decision in the module docstring.
SEND_TABLE = [
    ("send", K._MSG_TIMED_OUT, True, "info"),
    ("send", K._TIMED_OUT, True, "info"),
    ("send", K._TIMED_OUT_QUEUE, True, "info"),
    ("send", K.REQUEST_TIMED_OUT, True, "info"),
    ("send", K._TRANSPORT, True, "info"),
    ("send", K._ALL_BROKERS_DOWN, True, "info"),
    ("send", K.NETWORK_EXCEPTION, True, "info"),
    ("send", K._PURGE_INFLIGHT, True, "info"),
    ("send", K._FATAL, True, "info"),
    ("send", K.NOT_LEADER_FOR_PARTITION, True, "info"),
    ("send", K.NOT_ENOUGH_REPLICAS_AFTER_APPEND, True, "info"),
    ("send", K.OUT_OF_ORDER_SEQUENCE_NUMBER, True, "info"),
    ("send", K.UNKNOWN_PRODUCER_ID, True, "info"),
    ("send", K.DUPLICATE_SEQUENCE_NUMBER, True, "info"),
    ("send", K.PRODUCER_FENCED, True, "info"),
    ("send", K.INVALID_PRODUCER_EPOCH, True, "info"),
    ("send", K.KAFKA_STORAGE_ERROR, True, "info"),
    # Rejected before append: absent only when the record was sent once.
    ("send", K.NOT_ENOUGH_REPLICAS, False, "fail"),
    ("send", K.NOT_ENOUGH_REPLICAS, True, "info"),
    ("send", K.MSG_SIZE_TOO_LARGE, False, "fail"),
    ("send", K.RECORD_LIST_TOO_LARGE, False, "fail"),
    ("send", K.INVALID_REQUIRED_ACKS, False, "fail"),
    ("send", K.TOPIC_AUTHORIZATION_FAILED, False, "fail"),
    ("send", K.UNKNOWN_TOPIC_OR_PART, False, "fail"),
    ("send", K.UNKNOWN_TOPIC_OR_PART, True, "info"),
    ("send", K._PURGE_QUEUE, False, "fail"),
    ("send", K._PURGE_QUEUE, True, "info"),
    ("send", K._UNKNOWN_PARTITION, False, "fail"),
    # Ambiguous errors stay info even when sent once.
    ("send", K.NOT_LEADER_FOR_PARTITION, False, "info"),
    ("send", K.NOT_ENOUGH_REPLICAS_AFTER_APPEND, False, "info"),
    ("send", K._MSG_TIMED_OUT, False, "info"),
]

OTHER_TABLE = [
    ("produce", K._QUEUE_FULL, True, "fail"),
    ("produce", K._UNKNOWN_PARTITION, True, "fail"),
    ("produce", K.MSG_SIZE_TOO_LARGE, True, "fail"),
    ("produce", K._STATE, True, "fail"),
    ("poll", K._TRANSPORT, True, "fail"),
    ("poll", K.OFFSET_OUT_OF_RANGE, True, "fail"),
    ("poll", K._ALL_BROKERS_DOWN, True, "fail"),
    ("poll", K.UNKNOWN_TOPIC_OR_PART, True, "fail"),
    ("poll", K.NOT_COORDINATOR, True, "fail"),
    ("assign", K._INVALID_ARG, True, "fail"),
    ("assign", K._STATE, True, "fail"),
    ("subscribe", K._INVALID_ARG, True, "fail"),
    ("subscribe", K.TOPIC_AUTHORIZATION_FAILED, True, "fail"),
    ("txn-begin", K._STATE, True, "fail"),
    ("txn-begin", K._FATAL, True, "fail"),
    ("txn-commit", K._TIMED_OUT, True, "info"),
    ("txn-commit", K.INVALID_TXN_STATE, True, "info"),
    ("txn-commit", K.TRANSACTION_COORDINATOR_FENCED, True, "info"),
    ("txn-commit", K.COORDINATOR_NOT_AVAILABLE, True, "info"),
    ("txn-commit", K.NOT_COORDINATOR, True, "info"),
    ("txn-commit", K.PRODUCER_FENCED, True, "info"),
    ("txn-commit", K._STATE, True, "info"),
    ("txn-abort", K._TIMED_OUT, True, "info"),
    ("txn-abort", K.INVALID_TXN_STATE, True, "info"),
    ("txn-aborted", K.NOT_ENOUGH_REPLICAS, True, "fail"),
    ("txn-aborted", K.INVALID_TXN_STATE, True, "fail"),
    ("txn-aborted", K._MSG_TIMED_OUT, True, "fail"),
    ("commit", K.UNKNOWN_MEMBER_ID, True, "info"),
    ("commit", K.ILLEGAL_GENERATION, True, "info"),
    ("commit-evicted", K.UNKNOWN_MEMBER_ID, True, "fail"),
    ("commit-evicted", K.ILLEGAL_GENERATION, True, "fail"),
    ("commit-evicted", K.REBALANCE_IN_PROGRESS, True, "info"),
    ("commit-evicted", K.REQUEST_TIMED_OUT, True, "info"),
    ("commit-evicted", K.NOT_COORDINATOR, True, "info"),
]


def _id(row: tuple[str, int, bool, str]) -> str:
    kind, code, retried, expected = row
    return f"{kind}-{KafkaError(code).name()}{'' if retried else '-once'}-{expected}"


@pytest.mark.parametrize(("kind", "code", "retried", "expected"),
                         [pytest.param(*r, id=_id(r)) for r in SEND_TABLE + OTHER_TABLE])
def test_error_table(kind: Kind, code: int, retried: bool, expected: str) -> None:
    outcome = classify(KafkaError(code), kind, retried=retried)
    assert outcome.type == expected, outcome.why
    assert outcome.error["code"] == KafkaError(code).name()
    assert outcome.error["num"] == code


@pytest.mark.parametrize("kind", KINDS)
def test_a_wrapped_error_is_classified_like_the_bare_one(kind: Kind) -> None:
    bare = classify(KafkaError(K._MSG_TIMED_OUT), kind)
    wrapped = classify(KafkaException(KafkaError(K._MSG_TIMED_OUT)), kind)
    assert wrapped == bare


@pytest.mark.parametrize("code", [K.UNKNOWN, 12345, K._INCONSISTENT, K.POLICY_VIOLATION],
                         ids=lambda c: KafkaError(c).name())
def test_unknown_send_errors_default_to_info(code: int) -> None:
    assert classify(KafkaError(code), "send", retried=False).type == "info"


@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k != "txn-aborted"],
)
@pytest.mark.parametrize(
    "exc", [RuntimeError("boom"), TimeoutError(), OSError(5, "EIO"), KafkaException("no error")],
    ids=["RuntimeError", "TimeoutError", "OSError", "KafkaException-without-KafkaError"],
)
def test_non_kafka_exceptions_default_to_info(kind: Kind, exc: BaseException) -> None:
    outcome = classify(exc, kind)
    assert outcome.type == "info"
    assert isinstance(outcome.error, str)
    assert outcome.error.startswith(type(exc).__name__)


def test_a_full_produce_queue_never_enqueued_the_record() -> None:
    assert classify(BufferError("Local: Queue full"), "produce").type == "fail"
    assert classify(BufferError("Local: Queue full"), "send").type == "info"


def test_an_aborted_transaction_failed_whatever_the_error() -> None:
    assert classify(RuntimeError("client bug mid-txn"), "txn-aborted").type == "fail"


def test_commit_passes_on_abort_and_retry_hints() -> None:
    abortable = KafkaError(K.NOT_ENOUGH_REPLICAS, "x", txn_requires_abort=True)
    retriable = KafkaError(K._TIMED_OUT, "x", retriable=True)
    plain = KafkaError(K.INVALID_TXN_STATE)
    assert classify(abortable, "txn-commit").abort
    assert not classify(abortable, "txn-commit").retry
    assert classify(retriable, "txn-commit").retry
    assert not classify(retriable, "txn-commit").abort
    assert not classify(plain, "txn-commit").abort
    assert not classify(plain, "txn-commit").retry


@pytest.mark.parametrize("kind", KINDS)
def test_fatal_errors_ask_for_a_new_client_and_no_retry(kind: Kind) -> None:
    fatal = KafkaError(K.PRODUCER_FENCED, "fenced", fatal=True, retriable=True,
                       txn_requires_abort=True)
    outcome = classify(fatal, kind)
    assert outcome.recreate
    assert not outcome.retry
    assert not outcome.abort
    assert outcome.error["fatal"] is True
    assert classify(KafkaError(K._FATAL), kind).recreate
    assert not classify(KafkaError(K._TRANSPORT), kind).recreate


def test_descriptions_are_short_json() -> None:
    err = KafkaError(K.NOT_ENOUGH_REPLICAS, "Broker: Not enough in-sync replicas", retriable=True)
    assert describe(err) == {"code": "NOT_ENOUGH_REPLICAS", "num": 19,
                             "reason": "Broker: Not enough in-sync replicas", "retriable": True}
    long: Any = describe(RuntimeError("x" * 1000))
    assert len(long) == 200
    assert orjson.loads(orjson.dumps(describe(KafkaError(K._FATAL, fatal=True))))["fatal"]


def test_no_error_is_both_rejected_and_ambiguous() -> None:
    assert not REJECTED_BEFORE_APPEND & AMBIGUOUS_SEND.keys()


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown operation kind"):
        classify(KafkaError(K._TRANSPORT), "fetch")  # type: ignore[arg-type]


@pytest.mark.parametrize("code", [K.REBALANCE_IN_PROGRESS, K.ILLEGAL_GENERATION,
                                  K.UNKNOWN_MEMBER_ID, K._TIMED_OUT, K.NOT_COORDINATOR])
def test_a_group_commit_error_is_info_and_a_committed_lookup_error_fail(code: int) -> None:
    """A refused commit may follow a retried attempt that was written; a lookup is a read."""
    assert classify(KafkaError(code), "commit").type == "info"
    assert classify(KafkaError(code), "committed").type == "fail"


# -- an op of several records (workloads.outcomes.merge) ------------------------------------

RECORD_ERRORS = {
    "delivered": None,
    "rejected-sent-once": (K.NOT_ENOUGH_REPLICAS, False),
    "timed-out": (K._MSG_TIMED_OUT, False),
    "fatal": (K._FATAL, True),
    "not-enqueued": "produce",
}


def record_outcome(name: str) -> Outcome | None:
    """One record's outcome, as the sender judges it."""
    what = RECORD_ERRORS[name]
    if what is None:
        return None
    if what == "produce":
        return classify(BufferError("queue full"), "produce")
    code, retried = what
    return classify(KafkaError(code, fatal=code == K._FATAL), "send", retried=retried)


@given(st.lists(st.sampled_from(sorted(RECORD_ERRORS)), min_size=1, max_size=12))
def test_an_op_of_several_records_fails_only_if_every_record_certainly_failed(
    names: list[str],
) -> None:
    records = [record_outcome(n) for n in names]
    merged = merge(records)
    if all(r is None for r in records):
        assert merged is None  # ok: every record happened
        return
    assert merged is not None
    certainly_absent = all(r is not None and r.type == "fail" for r in records)
    assert merged.type == ("fail" if certainly_absent else "info")
    assert merged.recreate == any(r is not None and r.recreate for r in records)
    if merged.type == "info" and any(r is not None and r.type == "info" for r in records):
        assert merged.error == next(r.error for r in records if r is not None and r.type == "info")


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["delivered", "delivered"], None),
        (["rejected-sent-once", "not-enqueued"], "fail"),
        (["delivered", "rejected-sent-once"], "info"),
        (["rejected-sent-once", "timed-out"], "info"),
        (["delivered", "not-enqueued"], "info"),
    ],
    ids=["all-delivered", "all-certainly-absent", "some-written-some-not", "one-unknown",
         "queue-full-midway"],
)
def test_merge_examples(names: list[str], expected: str | None) -> None:
    merged = merge([record_outcome(n) for n in names])
    assert (merged.type if merged else None) == expected
