"""The producer side of a queue client: one producer per process, sends and delivery reports.

``send`` queues the op's records to its key's partition in one
``produce_batch`` call (one batch, whatever ``linger.ms`` and the interpreter's
load), then serves delivery reports until every record of *this* op has one
(several records in flight per producer); the
completion carries ``[offset, value]`` where a report gave an offset. Whether
an error means ``fail`` or ``info`` is decided by ``workloads.outcomes`` alone.
With ``--record-keys`` each record's key is its value, unique in the run: a
compacted topic refuses records without a key, and unique keys leave compaction
nothing to remove (the history still names records by value alone).
Transactions (``workloads.queue.txn``) use the same producer, ``produce`` and
``await_reports``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import monotonic
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from cluster.kafka_clients import base_config
from workloads.client import Completed, Op
from workloads.outcomes import Outcome, classify, merge
from workloads.queue.config import ClientOptions
from workloads.queue.topics import Topics

LOG = logging.getLogger("insync.client")


class Reports(dict[int, tuple[KafkaError | None, int]]):
    """Delivery reports of one op: micro-op position → (error, offset).

    Also the op's one delivery callback, shared by all its records (not a closure per
    record, built and called on the send path of every record): a report names its
    record by the record's value, which is unique in the run. A report whose value this
    op never produced is ignored, and its record stays without a report (unknown).
    """

    def __init__(self) -> None:
        super().__init__()
        self._at: dict[bytes, int] = {}  # a record's payload → its micro-op position

    def expect(self, payload: bytes, i: int) -> None:
        """The record at micro-op position ``i`` was produced with ``payload``."""
        self._at[payload] = i

    def __call__(self, err: KafkaError | None, msg: Any) -> None:
        i = self._at.get(msg.value())
        if i is not None:
            self[i] = (err, msg.offset() if err is None else -1)


class Sender:
    """A process's producer (transactional with ``--txn``), created on first use."""

    def __init__(self, opts: ClientOptions, topics: Topics, thread: int, process: int) -> None:
        self.opts = opts
        self.topics = topics
        self.thread = thread  # a transactional id per thread: a fresh process fences the old
        self.process = process
        self._producer: Producer | None = None
        self.clock: Callable[[], float] = monotonic  # how long an op has waited

    def producer(self, timeout_s: float | None = None) -> Producer:
        """The producer, created (and with ``--txn`` initialised, fencing any older producer
        of this thread's transactional id) within ``timeout_s`` (default: an op's budget)."""
        if self._producer is None:
            producer = Producer(
                base_config(self.opts.bootstrap, **self.opts.producer_config(self.thread))
            )
            if self.opts.txn:
                wait = self.opts.op_budget_s if timeout_s is None else timeout_s
                try:
                    producer.init_transactions(max(wait, 0.001))
                except Exception:  # not ours to keep: a half-initialised producer is dropped
                    _drop(producer, self.process)
                    raise
            self._producer = producer
        return self._producer

    def warm_up(self) -> None:
        """A producer id before the run's clock starts (``init_transactions`` with
        ``--txn``; otherwise a first write, to the run's warm-up topic, which no key
        names, so no history ever sees it).
        """
        producer = self.producer()
        if not self.opts.txn:
            topic = self.topics.warm_up_topic()
            key = b"warm-up" if self.opts.record_keys else None  # a compacted topic needs one
            producer.produce(topic, value=b"warm-up", key=key, partition=0)
            if producer.flush(self.opts.op_budget_s):
                raise RuntimeError("the warm-up write was not acknowledged in time")

    def send(self, op: Op) -> Completed:
        """A non-transactional ``send`` op: queue every record, then wait for their reports.

        The records are produced asynchronously (librdkafka batches them) and the
        op waits for *its* delivery reports only. Each record's outcome is judged
        alone (``workloads.outcomes``) and :func:`~workloads.outcomes.merge` says
        how the op ends: ``ok`` if every record was delivered, ``fail`` only if
        every record certainly was not, else ``info``.
        """
        mops = op["value"]
        producer = self.producer()
        reports = Reports()
        unsent: dict[int, Outcome] = {}
        for start, end in runs_of_one_key(mops):
            unsent.update(self.produce_run(producer, mops, start, end, reports))
        produced = len(mops) - len(unsent)
        self.await_reports(producer, reports, produced)
        if not unsent and len(reports) == len(mops) and all(
                error is None for error, _ in reports.values()):
            return Completed("ok", sent(mops, reports))  # every record delivered: the usual op
        late = Outcome("info", f"no delivery report after {self.opts.op_budget_s:g}s",
                       "no delivery report: the record may have been appended")
        outcomes: list[Outcome | None] = []
        for i in range(len(mops)):
            if i in unsent:
                outcomes.append(unsent[i])
            elif i not in reports:
                outcomes.append(late)
            else:
                error, _ = reports[i]
                outcomes.append(None if error is None else
                                classify(error, "send"))
        value = sent(mops, reports)
        outcome = merge(outcomes)
        return Completed("ok", value) if outcome is None else outcome.completed(value)

    def await_reports(self, producer: Producer, reports: Reports, count: int,
                      timeout_s: float | None = None) -> bool:
        """Serve delivery reports until ``count`` records of this op have one, or
        ``timeout_s`` (default: the op's budget) passes (False). Not ``flush()``: that
        would wait for every queued record."""
        deadline = self.clock() + (self.opts.op_budget_s if timeout_s is None else timeout_s)
        while len(reports) < count:
            left = deadline - self.clock()
            if left <= 0:
                return False
            producer.poll(min(left, 1.0))
        return True

    def produce_run(self, producer: Producer, mops: list[Any], start: int, end: int,
                    reports: Reports) -> dict[int, Outcome]:
        """Queue ``mops[start:end]`` (sends to one key) in one call, so librdkafka puts them
        in one batch: produced one by one by a thread that must take the GIL for each, an
        op's records could straddle ``linger.ms`` and go out in two requests. Returns the
        records that never entered the queue, by position, with why (each is ``fail``)."""
        topic, partition = self.topics.real(mops[start][1])
        messages: list[dict[str, Any]] = []
        keyed = self.opts.record_keys
        for i in range(start, end):
            payload = str(mops[i][2]).encode()
            reports.expect(payload, i)
            messages.append({"value": payload, "key": payload} if keyed else {"value": payload})
        try:
            producer.produce_batch(topic, messages, partition=partition, on_delivery=reports)
        except (BufferError, KafkaException) as err:  # none of them entered the queue
            outcome = classify(err, "produce")
            return dict.fromkeys(range(start, end), outcome)
        return {start + j: classify(m["_error"], "produce")
                for j, m in enumerate(messages) if "_error" in m}

    def produce(self, producer: Producer, key: str, value: int, reports: Reports, i: int) -> None:
        """Queue one record; its delivery report lands in ``reports[i]``."""
        topic, partition = self.topics.real(key)
        payload = str(value).encode()
        reports.expect(payload, i)
        producer.produce(topic, value=payload, key=payload if self.opts.record_keys else None,
                         partition=partition, on_delivery=reports)

    def close(self) -> None:
        """Drop the producer without waiting: what was not delivered stays unknown."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            _drop(producer, self.process)


def _drop(producer: Producer, process: int) -> None:
    """Close ``producer`` without waiting for anything it still holds."""
    try:
        producer.purge()
        producer.flush(0)
        producer.close()
    except Exception as err:  # closing a broken client: note it, carry on
        LOG.debug("closing producer of process %s: %s", process, err)


def runs_of_one_key(mops: list[Any]) -> list[tuple[int, int]]:
    """``[start, end)`` of each run of consecutive micro-ops that send to one key."""
    runs: list[tuple[int, int]] = []
    for i, mop in enumerate(mops):
        if runs and mops[runs[-1][0]][1] == mop[1]:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def sent(mops: list[Any], reports: Reports) -> list[Any]:
    """Send micro-ops with ``[offset, value]`` where the delivery report gave one."""
    out: list[Any] = []
    for i, mop in enumerate(mops):
        if mop[0] != "send":
            out.append(mop)
            continue
        err, offset = reports.get(i, (None, -1))
        out.append(["send", mop[1], [offset, mop[2]] if err is None and offset >= 0 else mop[2]])
    return out
