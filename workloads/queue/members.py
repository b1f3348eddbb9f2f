"""A consumer-group member of a queue client: polls, commits what it read, records rebalances.

With ``--commit sync`` every process's consumer subscribes as a member of its
group (``shape.group_name``) with ``enable.auto.commit=false``, and each poll op
(invoked as ``[["poll"], ["commit"]]``, docs/HISTORY-GROUPS.md) does what an
at-least-once application does: it polls, then commits synchronously the
position after the last record it was handed of each key it still holds
(``commit(offsets=..., asynchronous=False)``). The completion records what
happened in order:

* ``["poll", {key: [[offset, value], ...]}]``: every record handed over;
* ``["assigned", keys]`` / ``["revoked", keys]``: where the rebalance callbacks
  ran, each starting a new poll micro-op. Records are taken one ``poll()`` call at
  a time, because a callback runs inside the call that returns the next record:
  records of one ``consume()`` batch could straddle a callback unseen;
* ``["commit", {key: offset}]``: the offsets passed to ``commit()``, filled in
  before the call (``{}`` when the op read nothing it still holds: no call).

The member never seeks inside a callback, so each newly assigned key starts at
the group's committed offset (``auto.offset.reset`` where none), as the contract's
rules assume. A revoked key is dropped from the commit: its records were handed
over, but the group has given the key to another member.

Outcomes: a commit that raised, or returned a partition error, ends the op
``info``: its polls happened, and its commit may have (librdkafka retries a
commit whose request timed out, so even a refusal at a rebalance does not prove
that no earlier attempt was written). The exception is a member that had not
polled for longer than its ``max.poll.interval.ms`` when it committed:
librdkafka has left the group for it, so every attempt of the commit came from
a non-member, and the coordinator's refusal of a non-member (``classify``'s
``commit-evicted``) ends the op ``fail``. ``--stall-member`` makes one member
stall so (``Stall``), between a poll and its commit, once. A poll that raised
ends ``fail`` (a read has no side effect) and replaces the client, whose
position can no longer be trusted: after a rebalance inside the op there is no
position to seek back to.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from workloads.client import Completed
from workloads.outcomes import classify
from workloads.queue.shape import record_value

LOG = logging.getLogger("insync.client")

#: A completion's micro-ops, in the order they happened.
Mops = list[list[Any]]
#: librdkafka's default ``max.poll.interval.ms``, in seconds.
MAX_POLL_INTERVAL_S = 300.0
#: How long a stalling member lives before it stalls: past its first rebalance, so that
#: it holds partitions and has records to commit.
STALL_AFTER_S = 10.0


@dataclass
class Stall:
    """``--stall-member``: the member stops polling once, ``seconds`` long, between a poll
    that read something and its commit, ``after_s`` into its life. ``sleep`` is injected
    so that tests run in virtual time."""

    seconds: float
    after_s: float = STALL_AFTER_S
    sleep: Callable[[float], None] = time.sleep
    done: bool = False


class Member:
    """The rebalance callbacks and poll-and-commit of one process's group consumer."""

    def __init__(self, key_of: Callable[[str, int], str], real: Callable[[str], tuple[str, int]],
                 process: int, stall: Stall | None = None, *,
                 max_poll_interval_s: float = MAX_POLL_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.key_of = key_of
        self.real = real
        self.process = process
        self.stall = stall
        self.max_poll_interval_s = max_poll_interval_s
        self.clock = clock
        self._born = clock()
        self._mops: Mops | None = None  # the op in hand's micro-ops; None between ops
        self._held: set[str] = set()  # the keys the group gave this member, as told
        self._pending: dict[str, int] = {}  # key -> the offset after its last record read

    # -- rebalance callbacks (run by librdkafka inside poll()) ---------------------------

    def _keys(self, partitions: list[TopicPartition]) -> list[str]:
        return sorted(self.key_of(tp.topic, tp.partition) for tp in partitions)

    def on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = self._keys(partitions)
        self._held.update(keys)
        self._note(["assigned", keys])

    def on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = self._keys(partitions)
        self._held.difference_update(keys)
        for key in keys:
            self._pending.pop(key, None)
        self._note(["revoked", keys])

    def _note(self, mop: list[Any]) -> None:
        """Record a rebalance where it ran and open a new poll micro-op after it. Outside
        an op (``close()`` revokes too) there is nothing to record it in: the process ends."""
        if self._mops is not None:
            self._mops.append(mop)
            self._mops.append(["poll", {}])

    # -- poll and commit -------------------------------------------------------------------

    @property
    def held(self) -> frozenset[str]:
        """The keys the group gave this member, as its callbacks were told."""
        return frozenset(self._held)

    def poll(self, consumer: Consumer, wait_s: float, most: int, mops: Mops) -> None:
        """Up to ``most`` records (waiting up to ``wait_s`` for the first), with the
        rebalances that ran among them, appended to ``mops`` as they come (so what was
        handed over is known when the consumer raises). An exactly-once member
        (``workloads.eos``) commits them later, in its transaction."""
        mops.append(["poll", {}])
        self._mops = mops
        self._pending = {}
        try:
            msg = consumer.poll(wait_s)
            taken = 0
            while msg is not None:
                self._take(msg, mops[-1][1])
                taken += 1
                if taken >= most:
                    break
                msg = consumer.poll(0)
        finally:
            self._mops = None

    def poll_commit(self, consumer: Consumer, wait_s: float, most: int) -> Completed:
        """One poll op: :meth:`poll`, then a synchronous commit of the positions read."""
        mops: Mops = []
        try:
            self.poll(consumer, wait_s, most, mops)
        except Exception as err:
            outcome = classify(err, "poll")
            return Completed(outcome.type, [*mops, ["commit"]], outcome.error, reset=True)
        polled_at = self.clock()  # just after the last poll() call: never overstates the gap
        offsets = {key: self._pending[key] for key in sorted(self._pending)}
        value = [*mops, ["commit", offsets]]
        if not offsets:
            return Completed("ok", value)
        stall = self.stall
        if stall is not None and not stall.done and polled_at - self._born >= stall.after_s:
            stall.done = True
            LOG.info("group consumer of process %s stalls %g s before its commit",
                     self.process, stall.seconds)
            stall.sleep(stall.seconds)
        evicted = self.clock() - polled_at > self.max_poll_interval_s
        try:
            done = consumer.commit(offsets=[self._at(k, o) for k, o in offsets.items()],
                                   asynchronous=False)
            refused = [tp.error for tp in done or () if tp.error is not None]
            if refused:
                raise KafkaException(refused[0])
        except Exception as err:
            return classify(err, "commit-evicted" if evicted else "commit").completed(value)
        return Completed("ok", value)

    def _at(self, key: str, offset: int) -> TopicPartition:
        topic, partition = self.real(key)
        return TopicPartition(topic, partition, offset)

    def _take(self, msg: Any, records: dict[str, list[list[int]]]) -> None:
        err = msg.error()
        if err is not None:
            if err.fatal():
                raise KafkaException(err)
            # kept in the run's log: a partition error (an offset fetch the coordinator
            # refuses) is the only trace of an assigned partition left unread
            LOG.info("group consumer of process %s: %s", self.process, err)
            return
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        if topic is None or partition is None or offset is None:
            return
        key = self.key_of(topic, partition)
        records.setdefault(key, []).append([offset, record_value(msg.value())])
        if key in self._held:
            self._pending[key] = offset + 1
