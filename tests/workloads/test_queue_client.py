"""``QueueClient`` against fake confluent-kafka objects built from handler functions.

The fakes answer the calls the client makes (produce/flush, poll/consume/seek,
the transaction calls); a test states in a handler what Kafka does, and checks
the completion the client reports and what it did to the consumer's position.
Real Kafka is exercised by tests/harness/test_run_integration.py.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from workloads.client import ClientOptions
from workloads.queue_client import QueueClient
from workloads.topics import Topics, topic_number

K = KafkaError


@dataclass
class Msg:
    topic_: str
    partition_: int
    offset_: int
    value_: bytes
    error_: KafkaError | None = None

    def topic(self) -> str:
        return self.topic_

    def partition(self) -> int:
        return self.partition_

    def offset(self) -> int:
        return self.offset_

    def value(self) -> bytes:
        return self.value_

    def error(self) -> KafkaError | None:
        return self.error_


@dataclass
class FakeProducer:
    """``deliver(topic, partition, value) -> (error, offset)`` decides each record's fate."""

    deliver: Callable[[str, int, bytes], tuple[KafkaError | None, int]]
    commit: Callable[[], None] = lambda: None
    abort: Callable[[], None] = lambda: None
    queued: list[tuple[Any, Msg]] = field(default_factory=list)
    stuck: bool = False
    calls: list[str] = field(default_factory=list)

    def produce(self, topic: str, value: bytes, partition: int, on_delivery: Any) -> None:
        self.queued.append((on_delivery, Msg(topic, partition, -1, value)))

    def flush(self, timeout: float = 0) -> int:
        if self.stuck:
            return len(self.queued)
        for callback, msg in self.queued:
            err, offset = self.deliver(msg.topic_, msg.partition_, msg.value_)
            msg.offset_ = offset
            callback(err, msg)
        self.queued.clear()
        return 0

    def begin_transaction(self) -> None:
        self.calls.append("begin")

    def send_offsets_to_transaction(self, *args: Any) -> None:
        self.calls.append("offsets")

    def commit_transaction(self, timeout: float = 0) -> None:
        self.calls.append("commit")
        self.commit()

    def abort_transaction(self, timeout: float = 0) -> None:
        self.calls.append("abort")
        self.abort()


@dataclass
class FakeConsumer:
    """Serves ``log[key]`` from per-key positions; ``fail_after`` raises mid-poll."""

    log: dict[tuple[str, int], list[int]]
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    assigned: list[TopicPartition] = field(default_factory=list)
    fail_after: int | None = None
    seeks: list[tuple[str, int, int]] = field(default_factory=list)
    calls: list[tuple[str, list[Any]]] = field(default_factory=list)

    def _next(self) -> Msg | None:
        for tp in self.assigned:
            key = (tp.topic, tp.partition)
            pos = self.positions.get(key, 0)
            values = self.log.get(key, [])
            if pos < len(values):
                self.positions[key] = pos + 1
                return Msg(tp.topic, tp.partition, pos, str(values[pos]).encode())
        return None

    def poll(self, timeout: float) -> Msg | None:
        return self._next()

    def consume(self, n: int, timeout: float) -> list[Msg]:
        out: list[Msg] = []
        while len(out) < n and (msg := self._next()) is not None:
            out.append(msg)
            if self.fail_after is not None and len(out) >= self.fail_after:
                raise KafkaException(KafkaError(K._TRANSPORT, "connection lost", fatal=True))
        return out

    def seek(self, tp: TopicPartition) -> None:
        self.seeks.append((tp.topic, tp.partition, tp.offset))
        self.positions[(tp.topic, tp.partition)] = tp.offset

    def incremental_assign(self, tps: list[TopicPartition]) -> None:
        held = {(tp.topic, tp.partition) for tp in self.assigned}
        assert not held & {(tp.topic, tp.partition) for tp in tps}, "assigned twice"
        self.assigned += tps
        self.calls.append(("assign", sorted((tp.partition, tp.offset) for tp in tps)))
        for tp in tps:
            if tp.offset >= 0:
                self.positions[(tp.topic, tp.partition)] = tp.offset
            elif tp.offset == OFFSET_BEGINNING:
                self.positions[(tp.topic, tp.partition)] = 0

    def incremental_unassign(self, tps: list[TopicPartition]) -> None:
        gone = {(tp.topic, tp.partition) for tp in tps}
        self.assigned = [tp for tp in self.assigned if (tp.topic, tp.partition) not in gone]
        self.calls.append(("unassign", sorted(tp.partition for tp in tps)))

    def assignment(self) -> list[TopicPartition]:
        return self.assigned

    def position(self, tps: list[TopicPartition]) -> list[TopicPartition]:
        return [
            TopicPartition(
                tp.topic, tp.partition, self.positions.get((tp.topic, tp.partition), -1001)
            )
            for tp in tps
        ]

    def consumer_group_metadata(self) -> object:
        return object()

    def close(self) -> None:
        pass


class NoAdmin:
    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        out: dict[str, Future[Any]] = {}
        for t in topics:
            f: Future[Any] = Future()
            f.set_result(None)
            out[t.topic] = f
        return out


def topics() -> Topics:
    return Topics(
        NoAdmin,
        prefix="run1-",
        partitions=8,  # type: ignore[arg-type]
        replication_factor=3,
        config={},
    )


def client(
    producer: FakeProducer | None = None, consumer: FakeConsumer | None = None, **opts: Any
) -> QueueClient:
    c = QueueClient(ClientOptions(bootstrap="x:9092", **opts), topics(), thread=0, process=0)
    c._producer = producer  # type: ignore[assignment]
    c._consumer = consumer  # type: ignore[assignment]
    return c


def ok_at(offset: int) -> Callable[[str, int, bytes], tuple[KafkaError | None, int]]:
    return lambda topic, partition, value: (None, offset)


def test_topic_names_are_prefixed_and_keys_map_back() -> None:
    t = topics()
    assert t.real("t3-5") == ("run1-t3", 5)
    assert t.key("run1-t3", 5) == "t3-5"
    assert topic_number("t12") == 12
    with pytest.raises(ValueError):
        topic_number("x1")


def test_ensure_creates_the_topic_and_the_next_ones() -> None:
    t = topics()
    t.ensure_keys(["t0-1", "t0-2"])
    assert t.created == ["run1-t0", "run1-t1", "run1-t2"]


def test_a_send_completes_with_its_offset() -> None:
    c = client(FakeProducer(ok_at(17)))
    done = c.invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert (done.type, done.value) == ("ok", [["send", "t0-1", [17, 5]]])


@pytest.mark.parametrize(
    ("code", "retries", "expected"),
    [
        (K.NOT_ENOUGH_REPLICAS, 0, "fail"),
        (K.NOT_ENOUGH_REPLICAS, None, "info"),
        (K._MSG_TIMED_OUT, 0, "info"),
    ],
    ids=["rejected-sent-once", "rejected-maybe-retried", "timed-out"],
)
def test_delivery_errors_follow_outcomes(code: int, retries: int | None, expected: str) -> None:
    c = client(
        FakeProducer(lambda t, p, v: (KafkaError(code), -1)), retries=retries, idempotence=False
    )
    done = c.invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert done.type == expected
    assert done.value == [["send", "t0-1", 5]]  # no offset: none was given


def test_produce_raising_is_fail_and_no_report_is_info() -> None:
    class Full(FakeProducer):
        def produce(self, *a: Any, **kw: Any) -> None:
            raise BufferError("queue full")

    assert (
        client(Full(ok_at(1))).invoke({"f": "send", "value": [["send", "t0-1", 5]]}).type == "fail"
    )
    stuck = FakeProducer(ok_at(1), stuck=True)
    done = client(stuck).invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert done.type == "info" and "no delivery report" in done.error


def test_polls_report_records_per_key_in_order() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12]})
    c = client(consumer=consumer)
    assert c.invoke({"f": "assign", "value": ["t0-1"]}).type == "ok"
    done = c.invoke({"f": "poll", "value": [["poll"]]})
    assert done.value == [["poll", {"t0-1": [[0, 10], [1, 11], [2, 12]]}]]


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


def test_assign_leaves_kept_partitions_alone_and_drain_starts_over() -> None:
    consumer = FakeConsumer({("run1-t0", 1): [10, 11, 12], ("run1-t0", 2): [20]})
    c = client(consumer=consumer)
    c.invoke({"f": "assign", "value": ["t0-1", "t0-3"]})
    first = c.invoke({"f": "poll", "value": [["poll"]]})
    assert first.value[0][1]["t0-1"][0] == [0, 10]
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"]})
    # a new partition starts at the beginning by name: no committed-offset lookup
    assert consumer.calls[-2:] == [("unassign", [3]), ("assign", [(2, OFFSET_BEGINNING)])]
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"]})  # nothing changes: no calls
    assert len(consumer.calls) == 3
    c.invoke({"f": "assign", "value": ["t0-1", "t0-2"], "seek": "beginning"})
    assert consumer.calls[-2:] == [
        ("unassign", [1, 2]),
        ("assign", [(1, OFFSET_BEGINNING), (2, OFFSET_BEGINNING)]),
    ]


def test_with_txn_a_new_partition_starts_at_the_committed_offset() -> None:
    consumer = FakeConsumer({("run1-t0", 2): [20]})
    c = client(FakeProducer(ok_at(0)), consumer, txn=True, abort_p=0.0)
    c.invoke({"f": "assign", "value": ["t0-2"]})
    assert consumer.calls[-1] == ("assign", [(2, -1001)])  # OFFSET_INVALID: look it up


def test_a_half_done_assign_resets_the_client() -> None:
    class Refusing(FakeConsumer):
        def incremental_assign(self, tps: list[TopicPartition]) -> None:
            raise KafkaException(KafkaError(K._STATE, "erroneous state"))

    consumer = Refusing({})
    c = client(consumer=consumer)
    consumer.assigned = [TopicPartition("run1-t0", 1)]
    c._assigned = {"t0-1"}
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


def test_configs_follow_the_options() -> None:
    o = ClientOptions(bootstrap="x", acks="1", idempotence=False, retries=0, txn=False)
    assert o.producer_config(2)["acks"] == "1" and o.producer_config(2)["retries"] == 0
    assert "transactional.id" not in o.producer_config(2) and not o.sends_retried
    t = ClientOptions(bootstrap="x", txn=True, txn_id_prefix="run")
    assert t.producer_config(4)["transactional.id"] == "run-4"
    assert t.consumer_config()["isolation.level"] == "read_committed"
    s = ClientOptions(bootstrap="x", sub_via="subscribe")
    assert s.consumer_config()["enable.auto.commit"] is True
