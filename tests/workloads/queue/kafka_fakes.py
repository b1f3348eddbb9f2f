"""Fake confluent-kafka objects for the queue client's tests, each deciding through a handler.

The fakes answer the calls the client makes (produce/flush, poll/consume/seek,
the transaction calls, topic creation); a test states in a handler what Kafka
does.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from workloads.queue.topics import Topics

K = KafkaError


@dataclass
class Msg:
    topic_: str
    partition_: int
    offset_: int
    value_: bytes
    error_: KafkaError | None = None
    key_: bytes | None = None  # the workload's records have none, unless --record-keys

    def topic(self) -> str:
        return self.topic_

    def key(self) -> bytes | None:
        return self.key_

    def partition(self) -> int:
        return self.partition_

    def offset(self) -> int:
        return self.offset_

    def value(self) -> bytes:
        return self.value_

    def error(self) -> KafkaError | None:
        return self.error_


@dataclass
class Clock:
    """A monotonic clock a test moves by hand (``sending.monotonic``)."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


Deliver = Callable[[str, int, bytes], "tuple[KafkaError | None, int] | None"]


@dataclass
class FakeProducer:
    """``deliver(topic, partition, value) -> (error, offset)`` decides each record's fate;
    None: the record gets no report (it stays queued, like a record to a stalled partition).

    ``poll`` serves up to ``per_poll`` reports per call; when it serves none it moves
    ``clock`` on by its timeout, as a real wait would. ``stuck``: nothing is delivered.
    ``refuse(queued)`` says whether the next record may enter the queue (None) or not (the
    error: ``produce`` raises it, ``produce_batch`` marks the message with it, as
    confluent-kafka does), given how many records are queued already.
    ``offsets_answer`` runs in ``send_offsets_to_transaction`` after it noted the offsets
    (raise to refuse them). ``group``: the group's committed offsets, shared with a
    ``FakeConsumer``: a commit applies the offsets sent in its transaction, an abort
    drops them (or, ``keeps_aborted``, applies them: a broken coordinator).
    """

    deliver: Deliver
    commit: Callable[[], None] = lambda: None
    abort: Callable[[], None] = lambda: None
    queued: list[tuple[Any, Msg]] = field(default_factory=list)
    stuck: bool = False
    per_poll: int | None = None
    clock: Clock = field(default_factory=Clock)
    calls: list[str] = field(default_factory=list)
    polls: int = 0
    refuse: Callable[[int], BaseException | KafkaError | None] = lambda queued: None
    batches: list[int] = field(default_factory=list)  # the size of each produce_batch
    keys: list[bytes | None] = field(default_factory=list)  # each queued record's key
    offsets_answer: Callable[[], None] = lambda: None
    sent_offsets: list[list[tuple[str, int, int]]] = field(default_factory=list)
    group: dict[tuple[str, int], int] | None = None
    keeps_aborted: bool = False
    _pending: dict[tuple[str, int], int] = field(default_factory=dict)

    def produce(self, topic: str, value: bytes, partition: int,
                on_delivery: Any = lambda err, msg: None, key: bytes | None = None) -> None:
        error = self.refuse(len(self.queued))
        if isinstance(error, BaseException):
            raise error
        if error is not None:
            raise KafkaException(error)
        self.keys.append(key)
        self.queued.append((on_delivery, Msg(topic, partition, -1, value, key_=key)))

    def produce_batch(self, topic: str, messages: list[dict[str, Any]], partition: int,
                      on_delivery: Any) -> int:
        self.batches.append(len(messages))
        queued = 0
        for m in messages:
            error = self.refuse(len(self.queued))
            if isinstance(error, BaseException):
                error = KafkaError(KafkaError._QUEUE_FULL, str(error))
            if error is not None:
                m["_error"] = error
                continue
            self.keys.append(m.get("key"))
            self.queued.append((on_delivery, Msg(topic, partition, -1, m["value"],
                                                 key_=m.get("key"))))
            queued += 1
        return queued

    def _serve(self, most: int | None) -> int:
        served = 0
        left: list[tuple[Any, Msg]] = []
        for callback, msg in self.queued:
            fate = None if self.stuck or (most is not None and served >= most) else (
                self.deliver(msg.topic_, msg.partition_, msg.value_))
            if fate is None:
                left.append((callback, msg))
                continue
            err, msg.offset_ = fate
            callback(err, msg)
            served += 1
        self.queued = left
        return served

    def poll(self, timeout: float = 0) -> int:
        self.polls += 1
        served = self._serve(self.per_poll)
        if not served:
            self.clock.now += timeout
        return served

    def flush(self, timeout: float = 0) -> int:
        self._serve(None)
        return len(self.queued)

    def begin_transaction(self) -> None:
        self.calls.append("begin")
        self._pending = {}

    def send_offsets_to_transaction(self, positions: list[TopicPartition], metadata: Any,
                                    timeout: float = 0) -> None:
        self.calls.append("offsets")
        sent = [(tp.topic, tp.partition, tp.offset) for tp in positions]
        self.sent_offsets.append(sent)
        self.offsets_answer()
        self._pending.update(((t, p), o) for t, p, o in sent)

    def commit_transaction(self, timeout: float = 0) -> None:
        self.calls.append("commit")
        self.commit()
        if self.group is not None:
            self.group.update(self._pending)

    def abort_transaction(self, timeout: float = 0) -> None:
        self.calls.append("abort")
        self.abort()
        if self.group is not None and self.keeps_aborted:
            self.group.update(self._pending)


@dataclass
class FakeConsumer:
    """Serves ``log[key]`` from per-key positions; ``fail_after`` raises mid-poll.
    ``round_robin``: one record of each partition in turn, as a real fetch may interleave
    them (otherwise each partition's records before the next's)."""

    log: dict[tuple[str, int], list[int]]
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    assigned: list[TopicPartition] = field(default_factory=list)
    fail_after: int | None = None
    seeks: list[tuple[str, int, int]] = field(default_factory=list)
    calls: list[tuple[str, list[Any]]] = field(default_factory=list)
    round_robin: bool = False
    #: the group's committed offsets, as ``committed()`` answers; ``committed_error``
    #: makes it raise instead
    committed_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    committed_error: KafkaError | None = None

    def _next(self) -> Msg | None:
        if self.round_robin and self.assigned:
            self.assigned.append(self.assigned.pop(0))
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

    def committed(self, tps: list[TopicPartition], timeout: float = -1) -> list[TopicPartition]:
        self.calls.append(("committed", sorted(tp.partition for tp in tps)))
        if self.committed_error is not None:
            raise KafkaException(self.committed_error)
        return [TopicPartition(tp.topic, tp.partition,
                               self.committed_offsets.get((tp.topic, tp.partition), -1001))
                for tp in tps]

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


def topics(lookahead: int = 2) -> Topics:
    """Topics on an admin client that creates everything; two in reserve unless asked."""
    return Topics(
        NoAdmin,
        prefix="run1-",
        partitions=8,  # type: ignore[arg-type]
        replication_factor=3,
        config={},
        lookahead=lookahead,
    )


#: What a group consumer's ``poll()`` serves next: a record, or a rebalance that runs the
#: callback of that name (``("assign", [tp, ...])`` or ``("revoke", [tp, ...])``) first.
Event = Msg | tuple[str, list[TopicPartition]]


@dataclass
class FakeGroupConsumer:
    """A group member: ``poll()`` serves ``events`` in order, running the rebalance
    callbacks given to ``subscribe`` where an event says so (inside the call, as
    librdkafka does); ``commit_answer(offsets)`` decides each commit (return the
    partitions, with or without errors, or raise). ``committed()`` answers from
    ``committed_offsets``."""

    events: list[Event] = field(default_factory=list)
    commit_answer: Callable[[list[TopicPartition]], list[TopicPartition]] = lambda tps: tps
    fail_on_poll: KafkaError | None = None
    subscriptions: list[list[str]] = field(default_factory=list)
    commits: list[list[tuple[str, int, int]]] = field(default_factory=list)
    committed_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    closed: bool = False
    _cbs: dict[str, Any] = field(default_factory=dict)

    def subscribe(self, topics: list[str], on_assign: Any = None, on_revoke: Any = None) -> None:
        self.subscriptions.append(list(topics))
        self._cbs = {"assign": on_assign, "revoke": on_revoke}

    def poll(self, timeout: float) -> Msg | None:
        if self.fail_on_poll is not None and not self.events:
            raise KafkaException(self.fail_on_poll)
        while self.events:
            event = self.events.pop(0)
            if isinstance(event, Msg):
                return event
            name, tps = event
            self._cbs[name](self, tps)
        return None

    def commit(self, offsets: list[TopicPartition], asynchronous: bool = True
               ) -> list[TopicPartition]:
        assert not asynchronous, "members commit synchronously"
        self.commits.append([(tp.topic, tp.partition, tp.offset) for tp in offsets])
        return self.commit_answer(offsets)

    def committed(self, tps: list[TopicPartition], timeout: float = -1) -> list[TopicPartition]:
        return [TopicPartition(tp.topic, tp.partition,
                               self.committed_offsets.get((tp.topic, tp.partition), -1001))
                for tp in tps]

    def close(self) -> None:
        if self._cbs.get("revoke"):
            self._cbs["revoke"](self, [TopicPartition("run1-t0", 1)])
        self.closed = True
