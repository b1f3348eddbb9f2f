"""The queue workload's client: real confluent-kafka producers and consumers.

One ``QueueClient`` per worker and process: a producer (transactional with
``--txn``) and a consumer, created on first use. It performs one op at a time:

``send``
    produce each record to its key's partition and wait for the delivery
    report; the completion carries ``[offset, value]``. With ``--txn`` a send
    is a transaction of its own, since a transactional producer writes only
    inside transactions.
``poll``
    wait up to ``poll_ms`` for a first record, then take what is buffered (up to
    ``max_poll_records``); the completion maps each key to ``[[offset, value], ...]``.
``txn``
    begin; sends and polls in order; the consumer's positions committed inside
    the transaction (``send_offsets_to_transaction``); commit. With probability
    ``abort_p`` the client aborts on purpose: the op is ``fail``.
``assign`` / ``subscribe``
    assign the keys' partitions (keeping the position of keys already held, or
    from the beginning for the drain's ``"seek": "beginning"``), or subscribe
    to their topics in the run's one consumer group.
``crash``
    nothing: the op ends ``info`` and the worker closes this client.

Whether a Kafka error means ``fail`` or ``info`` is decided by
``workloads.outcomes`` alone. An op that ends ``fail`` must leave no trace, so a
failed or aborted op that had polled seeks the consumer back to the first
offset it returned for each key; if that seek fails, the client asks to be
reset (closed, and its thread continues as a fresh process).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

from cluster.kafka_clients import base_config
from workloads.client import ClientOptions, Completed, Op
from workloads.outcomes import Outcome, classify, describe
from workloads.topics import Topics

LOG = logging.getLogger("insync.client")

Records = dict[str, list[list[int]]]


class _Aborted(Exception):
    """The client chose to abort this transaction (``--txn`` intentional aborts)."""


class QueueClient:
    """A producer and a consumer for one process of one worker thread."""

    def __init__(self, opts: ClientOptions, topics: Topics, thread: int, process: int) -> None:
        self.opts = opts
        self.topics = topics
        self.thread = thread
        self.process = process
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._assigned: set[str] = set()
        self._positions: dict[str, int] = {}  # key -> next offset this consumer returns
        self._rng = random.Random(opts.seed * 1_000_003 + process)

    # -- the Client protocol ----------------------------------------------------

    def prepare(self, op: Op) -> None:
        keys: set[str] = set()
        if op["f"] in ("assign", "subscribe"):
            keys.update(op["value"] or ())
        elif op["f"] in ("send", "txn"):
            keys.update(m[1] for m in op["value"] if m[0] == "send")
        if keys:
            self.topics.ensure_keys(keys)

    def invoke(self, op: Op) -> Completed:
        f = op["f"]
        if f == "send":
            return self._txn(op) if self.opts.txn else self._send(op)
        if f == "poll":
            return self._poll_op(op)
        if f == "txn":
            return self._txn(op)
        if f == "assign":
            return self._assign(op)
        if f == "subscribe":
            return self._subscribe(op)
        if f == "crash":
            return Completed("info", None, "crashed on purpose: the client is closed")
        raise ValueError(f"the queue client has no op {f!r}")

    def warm_up(self) -> None:
        """Connect before the run's clock starts: a producer id (or ``init_transactions``)
        and a consumer. A non-transactional producer gets its id with a first write, to
        the run's warm-up topic, which no key names, so no history ever sees it.
        """
        producer = self.producer()
        self.consumer()
        if not self.opts.txn:
            topic = self.topics.warm_up_topic()
            producer.produce(topic, value=b"warm-up", partition=0)
            if producer.flush(self.opts.op_timeout_s):
                raise RuntimeError("the warm-up write was not acknowledged in time")

    def close(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            try:
                consumer.close()
            except Exception as err:  # closing a broken client: note it, carry on
                LOG.debug("closing consumer of process %s: %s", self.process, err)
        if self._producer is not None:
            producer, self._producer = self._producer, None
            try:
                producer.purge()  # what was not delivered stays unknown: do not wait for it
                producer.flush(0)
                producer.close()
            except Exception as err:
                LOG.debug("closing producer of process %s: %s", self.process, err)

    # -- clients, created on first use ------------------------------------------

    def producer(self) -> Producer:
        if self._producer is None:
            producer = Producer(
                base_config(self.opts.bootstrap, **self.opts.producer_config(self.thread))
            )
            if self.opts.txn:
                producer.init_transactions(self.opts.op_timeout_s)
            self._producer = producer
        return self._producer

    def consumer(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer(
                base_config(self.opts.bootstrap, **self.opts.consumer_config())
            )
        return self._consumer

    # -- send ---------------------------------------------------------------------

    def _send(self, op: Op) -> Completed:
        mops = op["value"]
        producer = self.producer()
        reports: dict[int, tuple[KafkaError | None, int]] = {}
        for i, (_, key, value) in enumerate(mops):
            try:
                self._produce(producer, key, value, reports, i)
            except (BufferError, KafkaException) as err:
                if i == 0:  # nothing of this op entered the queue
                    return _completed(classify(err, "produce"), mops)
                producer.flush(self.opts.op_timeout_s)
                return Completed("info", self._sent(mops, reports), describe(err))
        left = producer.flush(self.opts.op_timeout_s)
        value = self._sent(mops, reports)
        if left:
            return Completed("info", value, f"no delivery report after {self.opts.op_timeout_s}s")
        errors = [err for err, _ in reports.values() if err is not None]
        if not errors:
            return Completed("ok", value)
        outcome = classify(errors[0], "send", retried=self.opts.sends_retried)
        if outcome.type == "fail" and len(errors) < len(mops):
            return Completed("info", value, outcome.error, reset=outcome.recreate)
        return Completed(outcome.type, value, outcome.error, reset=outcome.recreate)

    def _produce(
        self,
        producer: Producer,
        key: str,
        value: int,
        reports: dict[int, tuple[KafkaError | None, int]],
        i: int,
    ) -> None:
        topic, partition = self.topics.real(key)

        def delivered(err: KafkaError | None, msg: Any) -> None:
            reports[i] = (err, msg.offset() if err is None else -1)

        producer.produce(
            topic, value=str(value).encode(), partition=partition, on_delivery=delivered
        )

    @staticmethod
    def _sent(mops: list[Any], reports: dict[int, tuple[KafkaError | None, int]]) -> list[Any]:
        """Send micro-ops with ``[offset, value]`` where the delivery report gave one."""
        out: list[Any] = []
        for i, mop in enumerate(mops):
            if mop[0] != "send":
                out.append(mop)
                continue
            err, offset = reports.get(i, (None, -1))
            out.append(
                ["send", mop[1], [offset, mop[2]] if err is None and offset >= 0 else mop[2]]
            )
        return out

    # -- poll ---------------------------------------------------------------------

    def _poll_op(self, op: Op) -> Completed:
        records: Records = {}
        try:
            self._poll_into(records)
        except Exception as err:
            return self._undo(classify(err, "poll"), [["poll", records]], records)
        return Completed("ok", [["poll", records]])

    def _poll_into(self, records: Records) -> None:
        """Poll once, adding what was returned to ``records`` as it arrives."""
        consumer = self.consumer()
        first = consumer.poll(self.opts.poll_ms / 1000)
        if first is None:
            return
        self._take([first], records)  # before consume(): if that raises, first is known
        if self.opts.max_poll_records > 1:
            self._take(consumer.consume(self.opts.max_poll_records - 1, 0), records)

    def _take(self, batch: list[Any], records: Records) -> None:
        for msg in batch:
            err = msg.error()
            if err is not None:
                if err.fatal():
                    raise KafkaException(err)
                LOG.debug("consumer of process %s: %s", self.process, err)
                continue
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            if topic is None or partition is None or offset is None:
                continue  # not a record (librdkafka marks events this way)
            key = self.topics.key(topic, partition)
            records.setdefault(key, []).append([offset, int(msg.value() or b"-1")])
            self._positions[key] = offset + 1

    def _undo(self, outcome: Outcome, value: Any, read: Records) -> Completed:
        """Complete a failed op, first seeking the consumer back over what it read."""
        if outcome.type == "fail" and not self._seek_back(read):
            return Completed("fail", value, outcome.error, reset=True)
        return Completed(outcome.type, value, outcome.error, reset=outcome.recreate)

    def _seek_back(self, read: Records) -> bool:
        """Rewind each key to the first offset this op read; False if that failed."""
        for key, recs in read.items():
            if not recs:
                continue
            topic, partition = self.topics.real(key)
            try:
                assert self._consumer is not None
                self._consumer.seek(TopicPartition(topic, partition, recs[0][0]))
            except Exception as err:
                LOG.info("process %s could not seek %s back: %s", self.process, key, err)
                return False
            self._positions[key] = recs[0][0]
        return True

    # -- assign / subscribe ---------------------------------------------------------

    def _assign(self, op: Op) -> Completed:
        """Change the assignment incrementally: kept partitions are never touched.

        Re-assigning a partition that is already being fetched restarts librdkafka's
        offset lookup while the old fetch state lingers; a run showed the consumer
        first continue past records it had prefetched and later jump back to the
        beginning (``nonmonotonic-poll`` that Kafka did not cause). So only the
        partitions that change are unassigned or assigned. New ones start at the
        beginning, named explicitly: without ``--txn`` nothing commits offsets, and
        leaving the start to a committed-offset lookup let a run read a partition
        dropped and re-added by the same consumer from offset 0 twice in a row
        (the lookup and ``auto.offset.reset`` each restarted the fetch). With
        ``--txn`` offsets are committed in transactions, so they are looked up.
        The drain's ``"seek": "beginning"`` re-adds every partition at its first
        offset.
        """
        keys: list[str] = list(op["value"])
        beginning = op.get("seek") == "beginning"
        held = self._assigned
        drop = held if beginning else held - set(keys)
        add = [k for k in keys if beginning or k not in held]
        start = OFFSET_BEGINNING if beginning or not self.opts.txn else None
        consumer = self.consumer()
        changed = False
        try:
            if drop:
                consumer.incremental_unassign([self._partition(k) for k in sorted(drop)])
                changed = True
            if add:
                consumer.incremental_assign([self._partition(k, start) for k in add])
        except Exception as err:
            outcome = classify(err, "assign")
            # half done (unassigned, not assigned): only a fresh consumer is certain
            return Completed(outcome.type, keys, outcome.error, reset=changed or outcome.recreate)
        self._hold(keys, keep=not beginning)
        return Completed("ok", keys)

    def _partition(self, key: str, offset: int | None = None) -> TopicPartition:
        topic, partition = self.topics.real(key)
        if offset is None:
            return TopicPartition(topic, partition)
        return TopicPartition(topic, partition, offset)

    def _subscribe(self, op: Op) -> Completed:
        keys: list[str] = list(op["value"])
        topics = sorted({self.topics.real(k)[0] for k in keys})
        try:
            self.consumer().subscribe(topics)
        except Exception as err:
            return _completed(classify(err, "subscribe"), keys)
        self._hold(keys, keep=True)
        return Completed("ok", keys)

    def _hold(self, keys: list[str], *, keep: bool) -> None:
        self._assigned = set(keys)
        self._positions = {k: o for k, o in self._positions.items() if keep and k in self._assigned}

    # -- transactions ---------------------------------------------------------------

    def _txn(self, op: Op) -> Completed:
        mops: list[Any] = op["value"]
        try:
            producer = self.producer()
            producer.begin_transaction()
        except Exception as err:  # nothing of this op was written
            outcome = classify(err, "txn-begin")
            return Completed(outcome.type, mops, outcome.error, reset=True)
        reports: dict[int, tuple[KafkaError | None, int]] = {}
        read: Records = {}
        out: list[Any] = list(mops)
        try:
            for i, mop in enumerate(mops):
                if mop[0] == "send":
                    self._produce(producer, mop[1], mop[2], reports, i)
                else:
                    records: Records = {}
                    out[i] = ["poll", records]
                    self._poll_into(records)
                    for key, recs in records.items():
                        read.setdefault(key, []).extend(recs)
            if producer.flush(self.opts.op_timeout_s):
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "flush timed out"))
            failed = [err for err, _ in reports.values() if err is not None]
            if failed:
                raise KafkaException(failed[0])
            if self.opts.abort_p and self._rng.random() < self.opts.abort_p:
                raise _Aborted("aborted on purpose")
            if read or any(m[0] == "poll" for m in mops):
                self._send_offsets(producer)  # only reads move positions worth committing
        except Exception as err:
            return self._abort(producer, err, self._merge(out, reports), read)
        return self._commit(producer, self._merge(out, reports), read)

    def _merge(
        self, out: list[Any], reports: dict[int, tuple[KafkaError | None, int]]
    ) -> list[Any]:
        return self._sent(out, reports)

    def _send_offsets(self, producer: Producer) -> None:
        consumer = self._consumer
        if consumer is None:
            return
        positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
        if positions:
            producer.send_offsets_to_transaction(
                positions, consumer.consumer_group_metadata(), self.opts.op_timeout_s
            )

    def _commit(self, producer: Producer, value: list[Any], read: Records) -> Completed:
        for _attempt in range(3):
            try:
                producer.commit_transaction(self.opts.op_timeout_s)
                return Completed("ok", value)
            except Exception as err:
                outcome = classify(err, "txn-commit")
                if outcome.abort:
                    return self._abort(producer, err, value, read)
                if not outcome.retry:
                    return Completed("info", value, outcome.error, reset=True)
        return Completed("info", value, "commit still retriable after 3 attempts", reset=True)

    def _abort(
        self, producer: Producer, err: Exception, value: list[Any], read: Records
    ) -> Completed:
        """Abort after ``err``; ``fail`` only if the abort itself succeeded."""
        try:
            producer.abort_transaction(self.opts.op_timeout_s)
        except Exception as abort_err:
            outcome = classify(abort_err, "txn-abort")
            return Completed("info", value, outcome.error, reset=True)
        error = "aborted on purpose" if isinstance(err, _Aborted) else describe(err)
        outcome = classify(err, "txn-aborted")
        if isinstance(err, _Aborted):
            outcome = Outcome("fail", error, "intentional abort")
        return self._undo(outcome, value, read)


def _completed(outcome: Outcome, value: Any) -> Completed:
    return Completed(outcome.type, value, outcome.error, reset=outcome.recreate)


ClientFactory = Callable[[int, int], QueueClient]
