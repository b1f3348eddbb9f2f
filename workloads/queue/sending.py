"""The producer side of a queue client: one producer per process, sends and delivery reports.

``send`` produces each record to its key's partition and waits for the
delivery reports; the completion carries ``[offset, value]`` where a report
gave an offset. Whether an error means ``fail`` or ``info`` is decided by
``workloads.outcomes`` alone. Transactions (``workloads.queue.txn``) use the
same producer and ``produce``.
"""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from cluster.kafka_clients import base_config
from workloads.client import Completed, Op
from workloads.outcomes import classify, describe
from workloads.queue.config import ClientOptions
from workloads.queue.topics import Topics

LOG = logging.getLogger("insync.client")

#: Delivery reports of one op: micro-op position → (error, offset).
Reports = dict[int, tuple[KafkaError | None, int]]


class Sender:
    """A process's producer (transactional with ``--txn``), created on first use."""

    def __init__(self, opts: ClientOptions, topics: Topics, thread: int, process: int) -> None:
        self.opts = opts
        self.topics = topics
        self.thread = thread  # a transactional id per thread: a fresh process fences the old
        self.process = process
        self._producer: Producer | None = None

    def producer(self) -> Producer:
        if self._producer is None:
            producer = Producer(
                base_config(self.opts.bootstrap, **self.opts.producer_config(self.thread))
            )
            if self.opts.txn:
                producer.init_transactions(self.opts.op_timeout_s)
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
            producer.produce(topic, value=b"warm-up", partition=0)
            if producer.flush(self.opts.op_timeout_s):
                raise RuntimeError("the warm-up write was not acknowledged in time")

    def send(self, op: Op) -> Completed:
        """A non-transactional ``send`` op: produce every record, then wait for the reports."""
        mops = op["value"]
        producer = self.producer()
        reports: Reports = {}
        for i, (_, key, value) in enumerate(mops):
            try:
                self.produce(producer, key, value, reports, i)
            except (BufferError, KafkaException) as err:
                if i == 0:  # nothing of this op entered the queue
                    return classify(err, "produce").completed(mops)
                producer.flush(self.opts.op_timeout_s)
                return Completed("info", sent(mops, reports), describe(err))
        left = producer.flush(self.opts.op_timeout_s)
        value = sent(mops, reports)
        if left:
            return Completed("info", value, f"no delivery report after {self.opts.op_timeout_s}s")
        errors = [err for err, _ in reports.values() if err is not None]
        if not errors:
            return Completed("ok", value)
        outcome = classify(errors[0], "send", retried=self.opts.sends_retried)
        if outcome.type == "fail" and len(errors) < len(mops):
            return Completed("info", value, outcome.error, reset=outcome.recreate)
        return outcome.completed(value)

    def produce(self, producer: Producer, key: str, value: int, reports: Reports, i: int) -> None:
        """Queue one record; its delivery report lands in ``reports[i]``."""
        topic, partition = self.topics.real(key)

        def delivered(err: KafkaError | None, msg: Any) -> None:
            reports[i] = (err, msg.offset() if err is None else -1)

        producer.produce(
            topic, value=str(value).encode(), partition=partition, on_delivery=delivered
        )

    def close(self) -> None:
        """Drop the producer without waiting: what was not delivered stays unknown."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            try:
                producer.purge()
                producer.flush(0)
                producer.close()
            except Exception as err:  # closing a broken client: note it, carry on
                LOG.debug("closing producer of process %s: %s", self.process, err)


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
