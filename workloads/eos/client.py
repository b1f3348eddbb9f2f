"""The exactly-once workload's client: a consume-transform-produce group member.

One ``EosClient`` per worker and process, built on the queue's pieces: a plain
idempotent producer writes inputs (``send``, recorded as the queue records
it); a member of the group (read_committed, no auto-commit, the queue's
:class:`~workloads.queue.members.Member` recording its rebalances) polls; its
transactional producer writes the outputs of what the member polled and the
offsets it consumed in one transaction (``send_offsets_to_transaction`` with
the consumer's group metadata, KIP-447), committed or aborted as the queue's
:class:`~workloads.queue.txn.Transactions` does, within the op's budget. The
drain and the ``committed`` reads are the queue client's.

A transaction's content is decided before its invoke is recorded
(:meth:`EosClient.plan`): the outputs of every record the member's polls
returned since its last transaction, for keys it still holds, each marked
with its input in the op's ``from`` field (docs/HISTORY-GROUPS.md). So an op
abandoned at its deadline still names every output it may have committed.
After an abort the member seeks back to its first uncommitted input; after an
``info`` the worker replaces the client, and the next member's
``init_transactions`` fences this one.
"""

from __future__ import annotations

import random
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from cluster.kafka_clients import base_config
from workloads.client import Completed, Op
from workloads.eos.shape import GROUP, OUTPUT_SHIFT, output_key
from workloads.outcomes import classify
from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions
from workloads.queue.members import Member
from workloads.queue.reading import Reader, Records
from workloads.queue.sending import Reports, Sender, sent
from workloads.queue.topics import Topics
from workloads.queue.txn import Transactions

#: A member's ``max.poll.interval.ms``, in op timeouts. A live member polls at least
#: once an op timeout (it alternates ``poll`` and ``txn`` ops). A member whose op was
#: abandoned keeps its consumer until its stuck call returns, and librdkafka keeps that
#: consumer in the group, heartbeating, until this interval passes without a poll; the
#: classic protocol's rebalance waits that long for every member to rejoin. At
#: librdkafka's default (300 s) one abandoned op held the group without owners for the
#: rest of a run.
POLL_INTERVAL_OP_TIMEOUTS = 2


def member_config(opts: ClientOptions) -> dict[str, Any]:
    """A group member's consumer settings (see :data:`POLL_INTERVAL_OP_TIMEOUTS`)."""
    config = opts.consumer_config(group=GROUP)
    interval_ms = round(POLL_INTERVAL_OP_TIMEOUTS * opts.op_timeout_s * 1000)
    config["max.poll.interval.ms"] = max(interval_ms, config.get("session.timeout.ms", 0))
    return config


class GroupReader(Reader):
    """The queue's reader as a member of the exactly-once group: read_committed, no
    auto-commit, its rebalances recorded; it commits only inside transactions."""

    def consumer(self, *, draining: bool = False) -> Consumer:
        if self._consumer is None:
            config = member_config(self.opts)
            self._consumer = Consumer(base_config(self.opts.bootstrap, **config))
            self.member = Member(self.topics.key, self.topics.real, self.process)
        return self._consumer


class Transform(Transactions):
    """One planned transaction: its sends, then the offsets, then the commit."""

    def transform(self, mops: list[Any], read: Records) -> Completed:
        if not mops:
            return Completed("ok", [])  # nothing polled since the last transaction
        producer = self._begin(mops)
        if isinstance(producer, Completed):
            return producer
        reports = Reports()
        sends = [i for i, m in enumerate(mops) if m[0] == "send"]
        try:
            for i in sends:
                self.sender.produce(producer, mops[i][1], mops[i][2], reports, i)
            if not self.sender.await_reports(producer, reports, len(sends), self._left()):
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "no delivery report"))
            failed = [err for err, _ in reports.values() if err is not None]
            if failed:
                raise KafkaException(failed[0])
            offsets = [TopicPartition(*self.reader.topics.real(k), o)
                       for k, o in mops[-1][1].items()]
            metadata = self.reader.consumer().consumer_group_metadata()
            producer.send_offsets_to_transaction(offsets, metadata, max(self._left(), 0.001))
        except Exception as err:
            return self._abort(producer, err, sent(mops, reports), read)
        return self._commit(producer, sent(mops, reports), read)


class EosClient(QueueClient):
    """A producer of inputs, a group member, and its transactional producer."""

    def __init__(self, plain: ClientOptions, txn: ClientOptions, topics: Topics,
                 thread: int, process: int) -> None:
        super().__init__(txn, topics, thread, process)
        self.plain = Sender(plain, topics, thread, process)
        self.group = GroupReader(txn, topics, process)
        self.transform = Transform(txn, self.sender, self.group, random.Random(process))
        self.pending: Records = {}  # inputs polled and not yet transformed, per key
        self.outputs = 0

    def plan(self, op: Op) -> Op:
        """A ``txn`` op's outputs and offsets, from what the member polled (see above)."""
        if op["f"] != "txn":
            return op
        mops: list[Any] = []
        derived: list[list[Any]] = []
        offsets: dict[str, int] = {}
        for key in sorted(self.pending):
            records = self.pending[key]
            for _, v in records:
                self.outputs += 1
                w = self.process << OUTPUT_SHIFT | self.outputs
                mops.append(["send", output_key(key), w])
                derived.append([output_key(key), w, key, v])
            offsets[key] = records[-1][0] + 1
        if offsets:
            mops.append(["commit", offsets])
        return {**op, "value": mops, "from": derived}

    def invoke(self, op: Op) -> Completed:
        f = op["f"]
        if f == "send":
            return self.plain.send(op)
        if f == "subscribe":
            return self.group.subscribe(op)
        if f == "poll" and self.group.member is not None:
            return self._poll()
        if f == "txn":
            read, self.pending = self.pending, {}
            return self.transform.transform(list(op["value"]), read)
        return super().invoke(op)

    def _poll(self) -> Completed:
        member = self.group.member
        assert member is not None
        mops: list[Any] = []
        try:
            member.poll(self.group.consumer(), self.opts.poll_ms / 1000,
                        self.opts.max_poll_records, mops)
        except Exception as err:  # its position is unknown: a fresh member starts again
            outcome = classify(err, "poll")
            return Completed(outcome.type, mops, outcome.error, reset=True)
        held = member.held
        for mop in mops:  # a key revoked is the group's again: its new owner reads it
            if mop[0] == "poll":
                for key, records in mop[1].items():
                    self.pending.setdefault(key, []).extend(records)
            elif mop[0] == "revoked":
                for key in mop[1]:
                    self.pending.pop(key, None)
        self.pending = {k: r for k, r in self.pending.items() if k in held and r}
        return Completed("ok", mops)

    def warm_up(self) -> None:
        self.plain.producer()
        self.sender.producer()

    def close(self) -> None:
        self.group.close()
        self.plain.close()
        super().close()
