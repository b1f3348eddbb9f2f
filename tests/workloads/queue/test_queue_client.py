"""``QueueClient`` against fake confluent-kafka objects built from handler functions.

The fakes (``kafka_fakes.py``) answer the calls the client makes; a test states
in a handler what Kafka does, and checks the completion the client reports and
what it did to the consumer's position. Real Kafka is exercised by
tests/harness/test_run_integration.py.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition
from kafka_fakes import FakeConsumer, FakeProducer, topics

from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions
from workloads.queue.reading import FIRST_OFFSET

K = KafkaError


def client(
    producer: FakeProducer | None = None, consumer: FakeConsumer | None = None, **opts: Any
) -> QueueClient:
    c = QueueClient(ClientOptions(bootstrap="x:9092", **opts), topics(), thread=0, process=0)
    c.sender._producer = producer  # type: ignore[assignment]
    if producer is not None:
        c.sender.clock = producer.clock  # waiting moves the fake's clock, not the test's
    c.reader._consumer = consumer  # type: ignore[assignment]
    return c


def ok_at(offset: int) -> Callable[[str, int, bytes], tuple[KafkaError | None, int]]:
    return lambda topic, partition, value: (None, offset)


def test_a_send_completes_with_its_offset() -> None:
    c = client(FakeProducer(ok_at(17)))
    done = c.invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert (done.type, done.value) == ("ok", [["send", "t0-1", [17, 5]]])


@pytest.mark.parametrize(
    ("code", "retries", "expected"),
    [
        # retries 0 does not make one attempt: librdkafka resends uncounted after
        # NOT_LEADER_FOR_PARTITION, and an earlier attempt may have been appended
        (K.NOT_ENOUGH_REPLICAS, 0, "info"),
        (K.NOT_ENOUGH_REPLICAS, None, "info"),
        (K._MSG_TIMED_OUT, 0, "info"),
    ],
    ids=["rejected-retries-0", "rejected-maybe-retried", "timed-out"],
)
def test_delivery_errors_follow_outcomes(code: int, retries: int | None, expected: str) -> None:
    c = client(
        FakeProducer(lambda t, p, v: (KafkaError(code), -1)), retries=retries, idempotence=False
    )
    done = c.invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert done.type == expected
    assert done.value == [["send", "t0-1", 5]]  # no offset: none was given


def test_produce_raising_is_fail_and_no_report_is_info() -> None:
    full = FakeProducer(ok_at(1), refuse=lambda queued: BufferError("queue full"))
    assert client(full).invoke({"f": "send", "value": [["send", "t0-1", 5]]}).type == "fail"
    stuck = FakeProducer(ok_at(1), stuck=True)
    done = client(stuck).invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert done.type == "info" and "no delivery report" in done.error


def send_op(key: str, values: list[int]) -> dict[str, Any]:
    return {"f": "send", "value": [["send", key, v] for v in values]}


def by_value(fates: dict[int, tuple[KafkaError | None, int] | None]) -> Any:
    """A ``deliver`` that looks each record's fate up by its value."""
    return lambda topic, partition, value: fates[int(value)]


def test_an_op_of_many_records_queues_them_all_then_gives_each_its_offset() -> None:
    producer = FakeProducer(by_value({v: (None, 100 + v) for v in range(5)}), per_poll=2)
    done = client(producer).invoke(send_op("t0-1", [0, 1, 2, 3, 4]))
    assert (done.type, done.value) == ("ok", [["send", "t0-1", [100 + v, v]] for v in range(5)])
    assert producer.polls == 3  # served two reports at a time: every record was in flight
    assert producer.batches == [5]  # queued in one call: one batch, whatever linger.ms is


def test_sends_to_different_keys_queue_one_batch_per_run_of_one_key() -> None:
    producer = FakeProducer(by_value({v: (None, v) for v in range(5)}))
    op = {"f": "send", "value": [["send", "t0-1", 0], ["send", "t0-1", 1], ["send", "t0-2", 2],
                                 ["send", "t0-1", 3], ["send", "t0-1", 4]]}
    done = client(producer).invoke(op)
    assert done.type == "ok"
    assert producer.batches == [2, 1, 2]
    assert [m[2] for m in done.value] == [[v, v] for v in range(5)]


def test_an_op_waits_for_its_own_records_only() -> None:
    """A record left from earlier (a stalled partition) does not hold a later op, as a
    ``flush()`` of the whole producer would."""
    producer = FakeProducer(by_value({9: None, 1: (None, 7), 2: (None, 8)}))
    producer.produce("run1-t0", b"9", 3, on_delivery=lambda err, msg: None)
    done = client(producer).invoke(send_op("t0-1", [1, 2]))
    assert (done.type, done.value) == ("ok", [["send", "t0-1", [7, 1]], ["send", "t0-1", [8, 2]]])
    assert producer.clock.now == 0  # it never waited
    assert len(producer.queued) == 1


NER = KafkaError(K.NOT_ENOUGH_REPLICAS)


@pytest.mark.parametrize(
    ("fates", "expected"),
    [
        ({1: (None, 5), 2: (NER, -1)}, "info"),
        # rejected, yet librdkafka may have resent an appended attempt uncounted
        ({1: (NER, -1), 2: (NER, -1)}, "info"),
        ({1: (NER, -1), 2: (KafkaError(K._MSG_TIMED_OUT), -1)}, "info"),
        ({1: (None, 5), 2: None}, "info"),
    ],
    ids=["one-written-one-rejected", "all-rejected", "rejected-and-timed-out",
         "one-never-reported"],
)
def test_mixed_record_outcomes_make_the_op_fail_only_when_all_certainly_failed(
    fates: dict[int, tuple[KafkaError | None, int] | None], expected: str
) -> None:
    producer = FakeProducer(by_value(fates))
    done = client(producer, retries=0, idempotence=False).invoke(send_op("t0-1", [1, 2]))
    assert done.type == expected
    first = fates[1]
    delivered = [m for m in done.value if isinstance(m[2], list)]
    assert delivered == ([["send", "t0-1", [5, 1]]] if first and first[0] is None else [])


def test_a_full_queue_midway_keeps_what_was_queued() -> None:
    def full_at_two(queued: int) -> KafkaError | None:
        return KafkaError(K._QUEUE_FULL) if queued == 2 else None

    written = client(FakeProducer(ok_at(3), refuse=full_at_two)).invoke(
        send_op("t0-1", [1, 2, 3]))
    assert written.type == "info"  # two were written, the third certainly not
    assert written.value == [["send", "t0-1", [3, 1]], ["send", "t0-1", [3, 2]],
                             ["send", "t0-1", 3]]
    rejected = FakeProducer(lambda t, p, v: (NER, -1), refuse=full_at_two)
    done = client(rejected, retries=0, idempotence=False).invoke(send_op("t0-1", [1, 2, 3]))
    assert done.type == "info"  # rejected by the broker: an earlier attempt may be in the log
    refused = FakeProducer(ok_at(3), refuse=lambda queued: KafkaError(K._QUEUE_FULL))
    assert client(refused).invoke(send_op("t0-1", [1, 2, 3])).type == "fail"  # none queued


def test_polls_report_records_per_key_in_order() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12]})
    c = client(consumer=consumer)
    assert c.invoke({"f": "assign", "value": ["t0-1"]}).type == "ok"
    done = c.invoke({"f": "poll", "value": [["poll"]]})
    assert done.value == [["poll", {"t0-1": [[0, 10], [1, 11], [2, 12]]}]]


def test_records_of_partitions_interleaved_in_one_poll_keep_their_order_per_key() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12], ("run1-t2", 3): [20, 21]},
                            round_robin=True)
    c = client(consumer=consumer)
    assert c.invoke({"f": "assign", "value": ["t0-1", "t2-3"]}).type == "ok"
    done = c.invoke({"f": "poll", "value": [["poll"]]})
    assert done.value == [["poll", {"t0-1": [[0, 10], [1, 11], [2, 12]],
                                    "t2-3": [[0, 20], [1, 21]]}]]


def test_a_delivery_report_for_a_record_the_op_never_produced_is_not_its_own() -> None:
    """The op's one delivery callback tells its records apart by value: a report for
    another value (another op's record) leaves this op's record without a report."""
    foreign = FakeProducer(ok_at(4))
    real_produce_batch = foreign.produce_batch

    def produce_batch(topic: str, messages: list[dict[str, Any]], partition: int,
                      on_delivery: Any) -> int:
        others = [{"value": m["value"] + b"0"} for m in messages]  # a report for 10, not 1
        return real_produce_batch(topic, others, partition, on_delivery)

    foreign.produce_batch = produce_batch  # type: ignore[method-assign]
    done = client(foreign).invoke(send_op("t0-1", [1]))
    assert (done.type, done.value) == ("info", [["send", "t0-1", 1]])
    assert "no delivery report" in str(done.error)


def test_a_failed_poll_seeks_back_to_where_it_started() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12, 13]}, fail_after=2)
    c = client(consumer=consumer)
    c.invoke({"f": "assign", "value": ["t0-1"]})
    done = c.invoke({"f": "poll", "value": [["poll"]]})
    assert done.type == "fail"
    assert consumer.seeks == [("run1-t0", 1, 0)]
    consumer.fail_after = None
    again = c.invoke({"f": "poll", "value": [["poll"]]})
    assert again.value[0][1]["t0-1"][0] == [0, 10]  # nothing was skipped


def test_assign_leaves_kept_partitions_alone_and_names_new_ones_first_offset() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12], ("run1-t0", 2): [20]})
    c = client(consumer=consumer)
    c.invoke({"f": "assign", "value": ["t0-1", "t0-3"]})
    first = c.invoke({"f": "poll", "value": [["poll"]]})
    assert first.value[0][1]["t0-1"][0] == [0, 10]
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"]})
    # a new partition starts at its first offset as a number, not OFFSET_BEGINNING: a
    # logical start's stale lookup can move a re-added partition back later
    assert consumer.calls[-2:] == [("unassign", [3]), ("assign", [(2, FIRST_OFFSET)])]
    assert FIRST_OFFSET == 0 != OFFSET_BEGINNING
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"]})  # nothing changes: no calls
    assert len(consumer.calls) == 3


def test_the_drains_assign_adds_partitions_at_the_logical_beginning_and_keeps_held_ones() -> None:
    # its consumers are fresh: what one holds it added at the beginning already
    consumer = FakeConsumer({("run1-t0", 1): [10, 11], ("run1-t0", 2): [20], ("run1-t0", 3): [30]})
    c = client(consumer=consumer)
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"], "seek": "beginning"})
    assert consumer.calls == [("assign", [(1, OFFSET_BEGINNING), (2, OFFSET_BEGINNING)])]
    assert c.invoke({"f": "poll"}).value == [["poll", {"t0-1": [[0, 10], [1, 11]],
                                                       "t0-2": [[0, 20]]}]]
    # a late key re-deals the shares: t0-2 goes, t0-3 comes, t0-1 is not read again
    c.invoke({"f": "assign", "value": ["t0-1", "t0-3"], "seek": "beginning"})
    assert consumer.calls[-2:] == [("unassign", [2]), ("assign", [(3, OFFSET_BEGINNING)])]
    assert c.invoke({"f": "poll"}).value == [["poll", {"t0-3": [[0, 30]]}]]


def test_seek_committed_starts_a_new_partition_at_the_committed_offset_named_explicitly(
) -> None:
    # Looked up before the assignment changes and named in it: left to librdkafka's own
    # lookup, a consumer read from the reset offset and then jumped to the committed one.
    # Where nothing is committed, the first offset is named as a number too.
    consumer = FakeConsumer({("run1-t0", 2): [20, 21, 22], ("run1-t0", 3): [30]},
                            committed_offsets={("run1-t0", 2): 2})
    c = client(FakeProducer(ok_at(0)), consumer, txn=True, abort_p=0.0)
    done = c.invoke({"f": "assign", "value": ["t0-2", "t0-3"], "seek": "committed"})
    assert (done.type, done.fields) == ("ok", {"committed": {"t0-2": 2, "t0-3": None}})
    assert consumer.calls[-2:] == [("committed", [2, 3]),
                                   ("assign", [(2, 2), (3, FIRST_OFFSET)])]
    assert c.invoke({"f": "poll"}).value == [["poll", {"t0-2": [[2, 22]], "t0-3": [[0, 30]]}]]


def test_a_failed_offset_lookup_fails_the_assign_and_changes_nothing() -> None:
    consumer = FakeConsumer({}, committed_error=KafkaError(K.COORDINATOR_NOT_AVAILABLE))
    c = client(FakeProducer(ok_at(0)), consumer, txn=True, abort_p=0.0)
    consumer.assigned = [TopicPartition("run1-t0", 1)]
    c.reader._assigned = {"t0-1"}
    done = c.invoke({"f": "assign", "value": ["t0-2"], "seek": "committed"})
    assert done.type == "fail" and not done.reset and done.fields is None  # no answer
    assert consumer.calls == [("committed", [2])]  # t0-1 still held, t0-2 not added
    assert c.reader._assigned == {"t0-1"}


def test_a_half_done_assign_resets_the_client() -> None:
    class Refusing(FakeConsumer):
        def incremental_assign(self, tps: list[TopicPartition]) -> None:
            raise KafkaException(KafkaError(K._STATE, "erroneous state"))

    consumer = Refusing({})
    c = client(consumer=consumer)
    consumer.assigned = [TopicPartition("run1-t0", 1)]
    c.reader._assigned = {"t0-1"}
    done = c.invoke({"f": "assign", "value": ["t0-2"]})
    assert (done.type, done.reset) == ("fail", True)


def test_intentional_abort_is_fail_and_rewinds_the_reads() -> None:
    producer = FakeProducer(ok_at(3))
    consumer = FakeConsumer({("run1-t0", 1): [10, 11]})
    c = client(producer, consumer, txn=True, abort_p=0.999999)
    c.invoke({"f": "assign", "value": ["t0-1"]})
    done = c.invoke({"f": "txn", "value": [["send", "t0-2", 7], ["poll"]]})
    assert (done.type, done.error) == ("fail", "aborted on purpose")
    assert producer.calls == ["begin", "abort"]
    assert consumer.seeks == [("run1-t0", 1, 0)]
    assert done.value == [["send", "t0-2", [3, 7]], ["poll", {"t0-1": [[0, 10], [1, 11]]}]]


def test_after_abort_none_leaves_the_consumer_where_it_is_and_says_so() -> None:
    producer = FakeProducer(ok_at(3))
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12]})
    c = client(producer, consumer, txn=True, abort_p=0.999999, after_abort="none",
               max_poll_records=2)
    c.invoke({"f": "assign", "value": ["t0-1"]})
    done = c.invoke({"f": "txn", "value": [["poll"]]})
    assert (done.type, done.fields, done.reset) == ("fail", {"reads-kept": True}, False)
    assert producer.calls == ["begin", "abort"]
    assert consumer.seeks == []
    assert c.invoke({"f": "poll"}).value == [["poll", {"t0-1": [[2, 12]]}]]


def test_after_abort_none_marks_only_an_abort_that_read() -> None:
    c = client(FakeProducer(ok_at(3)), FakeConsumer({}), txn=True, abort_p=0.999999,
               after_abort="none")
    done = c.invoke({"f": "txn", "value": [["send", "t0-2", 7], ["poll"]]})
    assert (done.type, done.fields) == ("fail", None)


def test_a_committed_transaction_commits_offsets_only_when_it_read() -> None:
    producer = FakeProducer(ok_at(3))
    c = client(producer, FakeConsumer({}), txn=True, abort_p=0.0)
    assert c.invoke({"f": "send", "value": [["send", "t0-2", 7]]}).type == "ok"
    assert producer.calls == ["begin", "commit"]


def _raise(err: KafkaError) -> Callable[[], None]:
    def go() -> None:
        raise KafkaException(err)

    return go


@pytest.mark.parametrize(
    ("commit_err", "abort_err", "expected", "reset"),
    [
        (KafkaError(K.NOT_ENOUGH_REPLICAS, txn_requires_abort=True), None, "fail", False),
        (
            KafkaError(K.NOT_ENOUGH_REPLICAS, txn_requires_abort=True),
            KafkaError(K._TRANSPORT),
            "info",
            True,
        ),
        (KafkaError(K._TRANSPORT), None, "info", True),
    ],
    ids=["abortable-then-aborted", "abort-fails", "unknown-commit"],
)
def test_commit_errors(
    commit_err: KafkaError, abort_err: KafkaError | None, expected: str, reset: bool
) -> None:
    producer = FakeProducer(
        ok_at(3),
        commit=_raise(commit_err),
        abort=_raise(abort_err) if abort_err else (lambda: None),
    )
    c = client(producer, FakeConsumer({}), txn=True, abort_p=0.0)
    done = c.invoke({"f": "txn", "value": [["send", "t0-2", 7]]})
    assert (done.type, done.reset) == (expected, reset)


def test_crash_is_info() -> None:
    assert client().invoke({"f": "crash", "value": None}).type == "info"


def test_the_drains_reread_creates_no_topic_and_a_main_phase_assign_does() -> None:
    """The drain reads what exists: a topic it cannot create must not stop it re-reading
    the partitions of others (as NOT_CONTROLLER did on 0.10.2 after a controller failover)."""
    class Refusing:
        def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Any]:
            raise AssertionError("no topic may be created")

    c = client(consumer=FakeConsumer({("run1-t0", 0): [1]}))
    c.topics._admin = Refusing()  # type: ignore[assignment]
    c.prepare({"f": "assign", "value": ["t0-0", "t3-0"], "seek": "beginning"})
    with pytest.raises(AssertionError, match="no topic"):
        c.prepare({"f": "assign", "value": ["t0-0", "t3-0"]})


def test_a_topic_whose_creation_failed_is_asked_for_again_by_the_next_call() -> None:
    """A refusal drops the topic's entry so a later call retries; ``ensure`` now holds the
    future it waits on, so another thread dropping the entry meanwhile is no KeyError.
    (A timeout or a moved controller is asked again within the call: test_queue_topics.)"""
    t = topics()
    calls: list[str] = []

    class Failing:
        def create_topics(self, new: list[Any], request_timeout: float) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for topic in new:
                calls.append(topic.topic)
                f: Future[Any] = Future()
                f.set_exception(KafkaException(KafkaError(KafkaError.INVALID_REPLICATION_FACTOR)))
                out[topic.topic] = f
            return out

    t._admin = Failing()  # type: ignore[assignment]
    t.refused_s = 0.0  # a refusal stands for no time (test_queue_topics: for a while)
    for _ in range(2):
        with pytest.raises(KafkaException):
            t.ensure(0)
    assert calls.count("run1-t0") == 2  # dropped after the first failure, asked again


@pytest.mark.parametrize(("sub_via", "members_from", "consumer_made"), [
    ("subscribe", 0.0, True), ("subscribe", 20.0, False), ("assign", 0.0, True)])
def test_a_member_joining_late_makes_no_consumer_at_the_warm_up(
        monkeypatch: pytest.MonkeyPatch, sub_via: str, members_from: float,
        consumer_made: bool) -> None:
    """A consumer with a group looks up its coordinator once made: a late member's waits."""
    made: list[str] = []
    monkeypatch.setattr("workloads.queue.reading.Consumer",
                        lambda conf: made.append(conf["group.id"]) or FakeConsumer({}))
    c = client(FakeProducer(ok_at(0)), None, sub_via=sub_via, commit="sync"
               if sub_via == "subscribe" else "auto", members_from_s=members_from)
    monkeypatch.setattr(c.sender, "warm_up", lambda: None)  # its write: other tests'
    c.warm_up()
    assert bool(made) is consumer_made
