"""The consumer side of a queue client: one consumer per process, its assignment and positions.

``poll``
    wait up to ``poll_ms`` for a first record, then take what is buffered (up to
    ``max_poll_records``); the completion maps each key to ``[[offset, value], ...]``.
``assign`` / ``subscribe``
    assign the keys' partitions (keeping the position of keys already held; new ones
    from the beginning for the drain's ``"seek": "beginning"``, from the group's
    committed offsets for ``--txn``'s ``"seek": "committed"``, which the completion's
    ``committed`` field records, docs/HISTORY-GROUPS.md), or subscribe
    to their topics in the run's one consumer group (auto-commit), or, with
    ``--commit sync``, in the process's own group as a member that commits what
    it polls (:mod:`workloads.queue.members`);
``committed``
    look up a group's committed offsets of the keys named, with a consumer of that
    group made for the lookup (it joins nothing).

An op that ends ``fail`` must leave no trace, so a failed op that had polled
(a poll, or an aborted transaction, ``workloads.queue.txn``) seeks the consumer
back to the first offset it returned for each key (:meth:`Reader.undo`); if that
seek fails, the client asks to be reset (closed, and its thread continues as a
fresh process).
"""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from cluster.kafka_clients import base_config
from harness.base.faults import BURST_RECORD_KEY
from workloads.client import Completed, Op
from workloads.outcomes import Outcome, classify
from workloads.queue.config import ClientOptions
from workloads.queue.members import MAX_POLL_INTERVAL_S, Member, Stall
from workloads.queue.shape import record_value
from workloads.queue.topics import Topics

LOG = logging.getLogger("insync.client")

#: Where a partition nobody has read starts, as a number (see :meth:`Reader.assign`):
#: a run's topics are its own and nothing deletes from their head (no retention in a
#: run's minutes, no DeleteRecords), so their first offset is 0. Were it not, the fetch
#: would be refused as out of range and ``auto.offset.reset`` (earliest) would apply.
FIRST_OFFSET = 0

#: What one op read: key → ``[[offset, value], ...]`` in the order returned.
Records = dict[str, list[list[int]]]


class Reader:
    """A process's consumer, created on first use, and the keys it holds."""

    def __init__(self, opts: ClientOptions, topics: Topics, process: int, *,
                 stall_s: float = 0.0) -> None:
        self.opts = opts
        self.stall_s = stall_s  # ``--stall-member``: this process's member stalls once
        self.topics = topics
        self.process = process
        self._consumer: Consumer | None = None
        self._assigned: set[str] = set()
        #: this process's group (``ClientOptions.group_of``), and with ``--commit sync``
        #: its member (the drain's consumers are in no named group: they assign)
        self.group = opts.group_of(process)
        self.member: Member | None = None
        self._topics: list[str] | None = None  # what the member subscribed to last

    def consumer(self, *, draining: bool = False) -> Consumer:
        """The consumer, made on first use; one first used by the drain (a fresh process
        whose first op is the drain's ``"seek": "beginning"`` assign) reads everything
        once, as fast as it can, so it prefetches as much as librdkafka likes."""
        if self._consumer is None:
            group = None if draining else self.group
            config = self.opts.consumer_config(draining=draining, group=group)
            self._consumer = Consumer(base_config(self.opts.bootstrap, **config))
            if group is not None and self.opts.members_commit:
                self.member = Member(
                    self.topics.key, self.topics.real, self.process,
                    Stall(self.stall_s) if self.stall_s else None,
                    max_poll_interval_s=config.get("max.poll.interval.ms",
                                                   MAX_POLL_INTERVAL_S * 1000) / 1000)
        return self._consumer

    # -- poll ---------------------------------------------------------------------

    def poll(self, op: Op) -> Completed:
        if self.member is not None:
            return self.member.poll_commit(self.consumer(), self.opts.poll_ms / 1000,
                                           self.opts.max_poll_records)
        records: Records = {}
        try:
            self.poll_into(records)
        except Exception as err:
            return self.undo(classify(err, "poll"), [["poll", records]], records)
        return Completed("ok", [["poll", records]])

    def poll_into(self, records: Records) -> None:
        """Poll once, adding what was returned to ``records`` as it arrives."""
        consumer = self.consumer()
        first = consumer.poll(self.opts.poll_ms / 1000)
        if first is None:
            return
        self._take([first], records)  # before consume(): if that raises, first is known
        if self.opts.max_poll_records > 1:
            self._take(consumer.consume(self.opts.max_poll_records - 1, 0), records)

    def _take(self, batch: list[Any], records: Records) -> None:
        """Add each record of ``batch`` to its key's list. Per record read, so the key's
        list is looked up once per run of records of one partition, not per record."""
        key_of = self.topics.key
        where: tuple[str, int] | None = None
        recs: list[list[int]] = []
        for msg in batch:
            err = msg.error()
            if err is not None:
                if err.fatal():
                    raise KafkaException(err)
                # kept in the run's log: a partition error (an offset lookup the
                # coordinator refuses) is the only trace of a partition left unread
                LOG.info("consumer of process %s: %s", self.process, err)
                continue
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            if topic is None or partition is None or offset is None:
                continue  # not a record (librdkafka marks events this way)
            if msg.key() == BURST_RECORD_KEY:
                continue  # a burst's load (nemesis.burst), not the workload's
            if where != (topic, partition):
                where = (topic, partition)
                recs = records.setdefault(key_of(topic, partition), [])
            recs.append([offset, record_value(msg.value())])

    def undo(self, outcome: Outcome, value: Any, read: Records) -> Completed:
        """Complete a failed op, first seeking the consumer back over what it read."""
        if outcome.type == "fail" and not self._seek_back(read):
            return Completed("fail", value, outcome.error, reset=True)
        return outcome.completed(value)

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
        return True

    # -- assign / subscribe ---------------------------------------------------------

    def assign(self, op: Op) -> Completed:
        """Change the assignment incrementally: kept partitions are never touched.

        Re-assigning a partition that is already being fetched restarts librdkafka's
        offset lookup while the old fetch state lingers; a run showed the consumer
        first continue past records it had prefetched and later jump back to the
        beginning (``nonmonotonic-poll`` that Kafka did not cause). So only the
        partitions that change are unassigned or assigned, and every partition
        added in the main phase starts at an offset named as a number, never at a
        logical one (``OFFSET_BEGINNING``): with ``"seek": "committed"`` (every assign
        of a ``--txn`` run) the group's committed offset (looked up before anything
        changes), otherwise (or where nothing is committed) :data:`FIRST_OFFSET`.
        librdkafka 2.16 (its debug log, a 120 s
        ``--txn`` run) answers a logical start with an offset query; a partition
        dropped while that query is out and added again at a numeric offset has the
        stale answer restart the query, which then moves the consumer, mid-read,
        back to the beginning: 2 of 3 such runs ended INVALID with a
        ``nonmonotonic-poll`` (or ``int-nonmonotonic-poll``) no broker caused, and
        so did one CI run (librdkafka's open issue 5345 reports the same race for
        an assign that leaves the start to the committed-offset lookup). Earlier, a
        partition left to the committed-offset lookup was read from offset 0 and
        then, inside one transaction, from the committed offset (``int-poll-skip``).

        The lookup is a committed read (docs/HISTORY-GROUPS.md): the completion's
        ``committed`` field holds what it returned for each new key (null where nothing
        is committed; ``{}`` when every key was kept), whatever the op's outcome once
        the lookup has answered. A kept key is not looked up: it keeps its position.

        Only the drain's ``"seek": "beginning"`` names the beginning logically (one
        fresh consumer per process, which reads from there anyway). Its consumers
        are fresh, so what one holds was added at the beginning already and is
        kept, as in the main phase: dropping and re-adding it (when a late key
        re-deals the drain's shares) would re-read it under the same process, and
        drop a partition whose logical start may still be being looked up.
        """
        keys: list[str] = list(op["value"])
        seek = op.get("seek")
        beginning = seek == "beginning"
        held = self._assigned
        drop = held - set(keys)
        add = [k for k in keys if k not in held]
        consumer = self.consumer(draining=beginning)
        changed = False
        found: dict[str, dict[str, int | None]] | None = None  # the lookup, as recorded
        try:
            if beginning:
                starts = [self._partition(k, OFFSET_BEGINNING) for k in add]
            elif seek == "committed":
                starts, committed = self._committed(consumer, add)
                found = {"committed": committed}
            else:
                starts = [self._partition(k, FIRST_OFFSET) for k in add]
            if drop:
                consumer.incremental_unassign([self._partition(k) for k in sorted(drop)])
                changed = True
            if add:
                consumer.incremental_assign(starts)
        except Exception as err:
            outcome = classify(err, "assign")
            # half done (unassigned, not assigned): only a fresh consumer is certain
            return Completed(outcome.type, keys, outcome.error,
                             reset=changed or outcome.recreate, fields=found)
        self._assigned = set(keys)
        return Completed("ok", keys, fields=found)

    def _committed(self, consumer: Consumer, keys: list[str]
                   ) -> tuple[list[TopicPartition], dict[str, int | None]]:
        """``keys``' partitions at the group's committed offsets (:data:`FIRST_OFFSET`
        where none is committed), and what the lookup returned per key (None: nothing
        committed). Raises what the lookup raised, or a partition's error: an error is
        no answer, and recorded as null it would read as an offset lost."""
        if not keys:
            return [], {}
        offsets = self._lookup(consumer, keys)
        starts = [self._partition(k, FIRST_OFFSET if offsets[k] is None else offsets[k])
                  for k in keys]
        return starts, offsets

    def _lookup(self, consumer: Consumer, keys: list[str]) -> dict[str, int | None]:
        """The group's committed offset of each of ``keys``, in their order (None: nothing
        committed). Raises what the lookup raised, a partition's error, or ValueError
        when the answer names other partitions than those asked."""
        found = consumer.committed([self._partition(k) for k in keys],
                                   timeout=self.opts.op_budget_s)
        offsets: dict[str, int | None] = {}
        for tp in found:
            if tp.error is not None:
                raise KafkaException(tp.error)
            offsets[self.topics.key(tp.topic, tp.partition)] = (
                tp.offset if tp.offset >= 0 else None)
        if set(offsets) != set(keys):
            raise ValueError(f"committed() answered {sorted(offsets)}, asked {sorted(keys)}")
        return {k: offsets[k] for k in keys}

    def _partition(self, key: str, offset: int | None = None) -> TopicPartition:
        topic, partition = self.topics.real(key)
        if offset is None:
            return TopicPartition(topic, partition)
        return TopicPartition(topic, partition, offset)

    def subscribe(self, op: Op) -> Completed:
        """Subscribe to the keys' topics. A member whose topics are already those keeps its
        subscription as it is: subscribing again would make its group rebalance for nothing."""
        keys: list[str] = list(op["value"])
        topics = sorted({self.topics.real(k)[0] for k in keys})
        try:
            consumer = self.consumer()
            member = self.member
            if member is None:
                consumer.subscribe(topics)
            elif topics != self._topics:
                consumer.subscribe(topics, on_assign=member.on_assign,
                                   on_revoke=member.on_revoke)
                self._topics = topics
        except Exception as err:
            return classify(err, "subscribe").completed(keys)
        self._assigned = set(keys)
        return Completed("ok", keys)

    def committed_read(self, op: Op) -> Completed:
        """A ``committed`` op: the committed offsets of op's group for the keys named (null
        where none), looked up by a consumer of that group made for this lookup alone."""
        keys: list[str] = list(op["value"][0][1])
        config = self.opts.consumer_config(group=op["group"])
        config.pop("group.protocol", None)  # it never joins: only its group.id matters
        lookup: Consumer | None = None
        try:
            lookup = Consumer(base_config(self.opts.bootstrap, **config))
            offsets = self._lookup(lookup, keys)
        except Exception as err:
            return classify(err, "committed").completed(op["value"])
        finally:
            if lookup is not None:
                try:
                    lookup.close()
                except Exception as err:
                    LOG.debug("closing the committed lookup of process %s: %s",
                              self.process, err)
        return Completed("ok", [["committed", offsets]])

    # -- for transactions -------------------------------------------------------------

    def committable(self) -> tuple[list[TopicPartition], Any] | None:
        """The positions a transaction commits (only those known) and the group's
        metadata; None when there is nothing to commit."""
        consumer = self._consumer
        if consumer is None:
            return None
        positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
        if not positions:
            return None
        return positions, consumer.consumer_group_metadata()

    def close(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            try:
                consumer.close()
            except Exception as err:  # closing a broken client: note it, carry on
                LOG.debug("closing consumer of process %s: %s", self.process, err)
