"""Transactions of a queue client: sends and polls in one Kafka transaction.

A ``txn`` op (and, with ``--txn``, every ``send``: a transactional producer
writes only inside transactions) begins a transaction, runs its sends and polls
in order, commits the consumer's positions inside it when the op holds a
``["commit"]`` micro-op (``send_offsets_to_transaction``; the generator gives one
to every transaction that polls, as only reads move a position worth committing),
and commits. With probability ``abort_p`` the client aborts on purpose instead,
once the offsets are sent, so that Kafka's dropping of an aborted transaction's
offsets is judged as well as its records: the op is ``fail``.

The commit is recorded as docs/HISTORY-GROUPS.md says: the completion's commit
micro-op holds every position sent, ``["commit", {key: offset}]``, filled in just
before ``send_offsets_to_transaction`` is called, whatever follows. So an ``ok``
op's offsets were committed; a ``fail`` op's were sent and aborted with the
transaction (never applied); an ``info`` op's may have applied. Before that call
nothing was attempted and the micro-op stays ``["commit"]`` (a send that failed, a
poll that raised: never in an ``ok`` op). A consumer that knows no position (it
holds no key, or has fetched none yet) sends nothing, and the commit records
``{}``: an ``ok`` completion may not keep the bare ``["commit"]``, and an empty map
commits nothing. An op abandoned at its deadline completes with no value: its
invoke's ``["commit"]`` then stands for any offset of the group (an unknown
commit), as it should, since the transaction may have committed before the
client was replaced.

An abort that succeeded is ``fail`` (Kafka never shows an aborted record to a
``read_committed`` consumer), after seeking the consumer back over what the
transaction read; an abort that raised is ``info``. With ``--txn-after-abort none``
the client leaves the consumer where it is, so that its next poll shows what the
consumer itself does after an abort, and says so on the completion (``reads-kept``,
docs/HISTORY.md): the checker then makes no claim on the next poll's position.
Whether an error means ``fail`` or ``info`` is decided by ``workloads.outcomes``.

Every wait of one op (``init_transactions``, delivery reports, sending offsets,
commit attempts, the abort) draws on one budget, ``op_budget_s``: a paused
leader or coordinator makes each of them wait its full timeout, and seven
such waits in a row would keep one op (and the main phase behind it) for minutes.
When the budget runs out before the transaction is settled, the op ends
``info`` and the client is replaced: the next producer's ``init_transactions``
fences this one and aborts whatever it left open.

One wait is bounded only by the interpreter's op deadline:
``send_offsets_to_transaction`` is given what is left of the budget, but
librdkafka checks that deadline only when a response arrives, and not at all
while it looks up the group coordinator (librdkafka issue #5456), so with the
group coordinator cut off the call blocks past its timeout, and the op is
abandoned at its deadline (``harness.run.stuck`` logs where).
"""

from __future__ import annotations

import random
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from workloads.client import Completed, Op
from workloads.outcomes import Outcome, classify
from workloads.queue.config import ClientOptions
from workloads.queue.reading import Reader, Records
from workloads.queue.sending import Reports, Sender, sent

COMMIT_ATTEMPTS = 3
OUT_OF_TIME = "the op's time ran out before its transaction was settled: producer replaced"
#: The completion field of an aborted op whose reads the client did not seek back over.
READS_KEPT = {"reads-kept": True}


class _Aborted(Exception):
    """The client chose to abort this transaction (``--txn`` intentional aborts)."""


class Transactions:
    """Runs transaction ops on a process's producer and consumer."""

    def __init__(
        self, opts: ClientOptions, sender: Sender, reader: Reader, rng: random.Random
    ) -> None:
        self.opts = opts
        self.sender = sender
        self.reader = reader
        self.rng = rng
        self._deadline = 0.0  # the op in hand's end of budget, on the sender's clock

    def _left(self) -> float:
        """Seconds left of this op's budget (0 when spent)."""
        return max(0.0, self._deadline - self.sender.clock())

    def _begin(self, mops: list[Any]) -> Producer | Completed:
        """Start this op's budget and a transaction: the producer, or the op's completion
        when the transaction could not begin (nothing of the op was written)."""
        self._deadline = self.sender.clock() + self.opts.op_budget_s
        try:
            producer = self.sender.producer(self._left())
            producer.begin_transaction()
        except Exception as err:  # nothing of this op was written
            outcome = classify(err, "txn-begin")
            return Completed(outcome.type, mops, outcome.error, reset=True)
        return producer

    def run(self, op: Op) -> Completed:
        mops: list[Any] = op["value"]
        producer = self._begin(mops)
        if isinstance(producer, Completed):
            return producer
        reports = Reports()
        read: Records = {}
        out: list[Any] = list(mops)
        produced = 0
        commit_at: int | None = None  # where the op's ["commit"] stands
        try:
            for i, mop in enumerate(mops):
                if mop[0] == "send":
                    self.sender.produce(producer, mop[1], mop[2], reports, i)
                    produced += 1
                elif mop[0] == "poll":
                    records: Records = {}
                    out[i] = ["poll", records]
                    self.reader.poll_into(records)
                    for key, recs in records.items():
                        read.setdefault(key, []).extend(recs)
                else:  # ["commit"]: the positions are sent last, once every send is acked
                    commit_at = i
            if not self.sender.await_reports(producer, reports, produced, self._left()):
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "no delivery report"))
            failed = [err for err, _ in reports.values() if err is not None]
            if failed:
                raise KafkaException(failed[0])
            if commit_at is not None:
                self._send_offsets(producer, out, commit_at)
            if self.opts.abort_p and self.rng.random() < self.opts.abort_p:
                raise _Aborted("aborted on purpose")  # its offsets too: Kafka must drop them
        except Exception as err:
            return self._abort(producer, err, sent(out, reports), read)
        return self._commit(producer, sent(out, reports), read)

    def _send_offsets(self, producer: Producer, out: list[Any], at: int) -> None:
        """Commit the consumer's positions inside the transaction, recorded at ``out[at]``
        before the call, so that whatever the call and the transaction then do, the
        completion names every offset that may have been committed: ``["commit",
        {key: offset}]``, every position sent (``{}`` when the consumer knows none, and
        nothing is sent)."""
        committable = self.reader.committable()
        if committable is None:
            out[at] = ["commit", {}]
            return
        positions, group = committable
        key = self.reader.topics.key
        out[at] = ["commit", {key(tp.topic, tp.partition): tp.offset for tp in positions}]
        producer.send_offsets_to_transaction(positions, group, max(self._left(), 0.001))

    def _commit(self, producer: Producer, value: list[Any], read: Records) -> Completed:
        for _attempt in range(COMMIT_ATTEMPTS):
            if self._left() <= 0:
                return Completed("info", value, OUT_OF_TIME, reset=True)
            try:
                producer.commit_transaction(self._left())
                return Completed("ok", value)
            except Exception as err:
                outcome = classify(err, "txn-commit")
                if outcome.abort:
                    return self._abort(producer, err, value, read)
                if not outcome.retry:
                    return Completed("info", value, outcome.error, reset=True)
        return Completed(
            "info", value, f"commit still retriable after {COMMIT_ATTEMPTS} attempts", reset=True
        )

    def _abort(
        self, producer: Producer, err: Exception, value: list[Any], read: Records
    ) -> Completed:
        """Abort after ``err``; ``fail`` only if the abort itself succeeded."""
        if self._left() <= 0:
            return Completed("info", value, OUT_OF_TIME, reset=True)
        try:
            producer.abort_transaction(self._left())
        except Exception as abort_err:
            outcome = classify(abort_err, "txn-abort")
            return Completed("info", value, outcome.error, reset=True)
        if isinstance(err, _Aborted):
            outcome = Outcome("fail", "aborted on purpose", "intentional abort")
        else:
            outcome = classify(err, "txn-aborted")
        if self.opts.after_abort == "none" and outcome.type == "fail" and any(read.values()):
            return Completed("fail", value, outcome.error, reset=outcome.recreate,
                             fields=READS_KEPT)
        return self.reader.undo(outcome, value, read)
