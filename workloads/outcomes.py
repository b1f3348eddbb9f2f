"""Did a failed Kafka client call certainly not happen (``fail``) or maybe happen (``info``)?

This is the one place insync decides it. A ``fail`` is a claim the checker builds
on: the values of a ``fail`` op must never be read, or the run is invalid. A wrong
``fail`` therefore makes insync report a Kafka bug that does not exist, while a
wrong ``info`` only costs some power to detect one. So ``fail`` is returned only
where Kafka or librdkafka *guarantees* the write is absent; everything else,
including every error we do not know and every non-Kafka exception, is ``info``.

The decision depends on the call that raised, the :data:`Kind`:

``produce``
    ``Producer.produce()`` itself raised (``BufferError`` for a full queue,
    ``KafkaException`` for an unknown partition, a too-large record, a fatal
    producer...). The record never entered librdkafka's queue: ``fail``.
``send``
    A non-transactional record's delivery report (or flush) carried an error.
    librdkafka retries retriable errors itself, so the report holds the *last*
    attempt's error. A broker error that rejects a request before appending
    (``NOT_ENOUGH_REPLICAS``: Kafka checks the in-sync replica count before it
    appends) proves only that *that* attempt was not appended: an earlier attempt
    whose response was lost may have been. Such errors are ``fail`` only when the
    caller knows there was one attempt (``retried=False``). No librdkafka
    producer knows that, whatever its ``retries``: after an error it marks not
    persisted (``NOT_LEADER_FOR_PARTITION`` from a leader that appended the
    request and stepped down before the followers had it) librdkafka sends the
    request again without counting a retry, so ``retries`` 0 still writes twice
    (Kafka 1.1.1 runs of ``offsets-expiry-clock``, docs/FINDINGS.md). The
    workloads therefore always pass ``retried=True``. Errors sent after the
    append or with no answer at all are always ``info``: timeouts, transport
    errors, ``NOT_ENOUGH_REPLICAS_AFTER_APPEND`` (appended on the leader, may
    survive), ``NOT_LEADER_OR_FOLLOWER`` (the old leader may have appended it
    before losing leadership, KAFKA-13574), ``_PURGE_INFLIGHT`` (purged while a
    request was on the wire).
``poll``
    A read has no side effect on the log, so a failed poll is ``fail``. The
    consumer's position may still have moved; seeking back (or retiring the
    process) is the runner's job.
``assign``, ``subscribe``
    Local calls that raise before they change the assignment: ``fail``.
``txn-begin``
    ``begin_transaction()`` is local and precedes every write of the op: ``fail``.
``txn-commit``
    ``commit_transaction()`` raised: the commit may have reached the coordinator,
    so ``info``. The outcome passes on librdkafka's hints: ``abort`` when
    ``txn_requires_abort()`` (call ``abort_transaction()``, then classify again as
    ``txn-aborted``), ``retry`` when ``retriable()`` (commit may be called again).
``txn-aborted``
    The op hit this error and ``abort_transaction()`` then *succeeded*. Kafka
    guarantees an aborted transaction's records are never returned to
    ``read_committed`` consumers (the coordinator cannot abort a transaction it
    has begun to commit), so ``fail``, whatever the error was.
``txn-abort``
    ``abort_transaction()`` itself raised: nobody knows how the transaction ended,
    ``info``.
``commit``
    A group member's synchronous ``commit()`` of offsets raised, or answered a
    partition with an error: ``info``. librdkafka retries a commit whose request
    timed out or whose coordinator moved, so even a refusal that the broker
    checks before writing (``REBALANCE_IN_PROGRESS``, ``ILLEGAL_GENERATION``) may
    follow an earlier attempt that was written.
``commit-evicted``
    The same call by a member that had not polled for longer than its
    ``max.poll.interval.ms``: librdkafka left the group for it before the call
    (a member that stops polling is considered failed), so every attempt came
    from a non-member, and the coordinator checks membership before it writes.
    ``UNKNOWN_MEMBER_ID`` and ``ILLEGAL_GENERATION`` are ``fail``; any other error
    is ``info``, as for ``commit``. (A coordinator accepts a non-member's commit
    only for an empty group, and then the call succeeds.)
``committed``
    A lookup of a group's committed offsets (``Consumer.committed()``) raised: a
    read, ``fail``.

An op of several records (a ``send`` op carries 1 to ``--sends-per-op``) is
judged record by record, then :func:`merge` decides the op: ``ok`` when every
record happened, ``fail`` only when *every* record certainly did not, and
``info`` otherwise: some records written and others not is neither.

librdkafka's ``fatal()`` (or the ``_FATAL`` code) sets ``recreate``: the client
instance is unusable and must be closed; the thread continues as a fresh process.
``retriable()`` is deliberately *not* used to pick fail/info for sends: it says an
error is transient, not that a write is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from confluent_kafka import KafkaError, KafkaException

from workloads.client import Completed

Kind = Literal[
    "produce", "send", "poll", "assign", "subscribe",
    "txn-begin", "txn-commit", "txn-abort", "txn-aborted", "commit", "commit-evicted",
    "committed",
]
KINDS: tuple[Kind, ...] = (
    "produce", "send", "poll", "assign", "subscribe",
    "txn-begin", "txn-commit", "txn-abort", "txn-aborted", "commit", "commit-evicted",
    "committed",
)

K = KafkaError

#: Broker and local errors that reject one produce attempt before anything is
#: appended (librdkafka's MSG_NOT_PERSISTED set, minus NOT_LEADER_FOR_PARTITION,
#: which KAFKA-13574 shows can follow an append).
REJECTED_BEFORE_APPEND: frozenset[int] = frozenset({
    K.NOT_ENOUGH_REPLICAS,
    K.MSG_SIZE_TOO_LARGE,
    K.RECORD_LIST_TOO_LARGE,
    K.INVALID_REQUIRED_ACKS,
    K.TOPIC_AUTHORIZATION_FAILED,
    K.CLUSTER_AUTHORIZATION_FAILED,
    K.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    K.UNKNOWN_TOPIC_OR_PART,
    K.INVALID_MSG,
    K.INVALID_RECORD,
    K.TOPIC_EXCEPTION,
    K._PURGE_QUEUE,
    K._UNKNOWN_PARTITION,
    K._UNKNOWN_TOPIC,
})

#: A group coordinator's refusals of a commit from a member not in the group's current
#: generation, checked before it writes (``commit-evicted``).
REFUSED_NON_MEMBER: frozenset[int] = frozenset({K.UNKNOWN_MEMBER_ID, K.ILLEGAL_GENERATION})

#: Errors that say nothing about whether the record was appended, each with why.
AMBIGUOUS_SEND: dict[int, str] = {
    K._MSG_TIMED_OUT: "timed out: the record may have been appended",
    K._TIMED_OUT: "timed out: the record may have been appended",
    K._TIMED_OUT_QUEUE: "timed out: the record may have been appended",
    K.REQUEST_TIMED_OUT: "timed out: the record may have been appended",
    K._TRANSPORT: "connection lost: the request may have been appended",
    K._ALL_BROKERS_DOWN: "connection lost: the request may have been appended",
    K.NETWORK_EXCEPTION: "connection lost: the request may have been appended",
    K.NOT_LEADER_FOR_PARTITION: "the old leader may have appended it (KAFKA-13574)",
    K.NOT_ENOUGH_REPLICAS_AFTER_APPEND: "appended on the leader, may survive",
    K._PURGE_INFLIGHT: "purged while a request was in flight",
    K.DUPLICATE_SEQUENCE_NUMBER: "the broker saw this batch before: it was appended",
    K.OUT_OF_ORDER_SEQUENCE_NUMBER: "idempotence state lost: the record may be appended",
    K.UNKNOWN_PRODUCER_ID: "idempotence state lost: the record may be appended",
    K.INVALID_PRODUCER_EPOCH: "producer epoch bumped: the record may be appended",
    K.PRODUCER_FENCED: "producer fenced: the record may be appended",
    K.KAFKA_STORAGE_ERROR: "leader disk error: the record may be partly appended",
    K._FATAL: "fatal producer error: the record may be appended",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an op that raised completes, and what librdkafka asks the runner to do next.

    ``type`` and ``error`` go straight into the completion; ``why`` is the rule
    that decided (for logs and tests). ``abort``: call ``abort_transaction()``
    and classify again as ``txn-aborted`` if it succeeds. ``retry``: the same
    call may be retried. ``recreate``: the client is unusable; close it.
    """

    type: Literal["fail", "info"]
    error: Any
    why: str
    abort: bool = False
    retry: bool = False
    recreate: bool = False

    def completed(self, value: Any) -> Completed:
        """The op's completion: this outcome, with ``value``; a client to recreate is reset."""
        return Completed(self.type, value, self.error, reset=self.recreate)


def kafka_error(error: BaseException | KafkaError) -> KafkaError | None:
    """The ``KafkaError`` inside ``error`` (confluent-kafka raises it wrapped), if any."""
    if isinstance(error, KafkaError):
        return error
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0]
    return None


def describe(error: BaseException | KafkaError) -> Any:
    """A short JSON description of ``error`` for a completion's ``error`` field."""
    err = kafka_error(error)
    if err is None:
        text = f"{type(error).__name__}: {error}"
        return text if len(text) <= 200 else text[:197] + "..."
    out: dict[str, Any] = {
        "code": err.name(),
        "num": err.code(),
        "reason": err.str(),
        "retriable": bool(err.retriable()),
    }
    if _fatal(err):
        out["fatal"] = True
    if err.txn_requires_abort():
        out["txn-requires-abort"] = True
    return out


def classify(error: BaseException | KafkaError, kind: Kind, *, retried: bool = True) -> Outcome:
    """Decide ``fail`` or ``info`` for ``error`` raised by a call of ``kind``.

    ``retried`` matters for ``send`` only: pass False when the record was sent
    at most once (retries disabled), so that a rejection before append proves
    the record absent.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown operation kind {kind!r}")
    desc = describe(error)
    err = kafka_error(error)
    if err is None:
        return _not_kafka(error, kind, desc)
    fatal = _fatal(err)
    if kind == "send":
        return _send(err, desc, retried=retried, fatal=fatal)
    if kind in _FAIL_KINDS:
        return Outcome("fail", desc, _FAIL_KINDS[kind], recreate=fatal)
    if kind == "txn-commit":
        return Outcome("info", desc, "the commit may have reached the coordinator",
                       abort=bool(err.txn_requires_abort()) and not fatal,
                       retry=bool(err.retriable()) and not fatal, recreate=fatal)
    if kind == "commit-evicted" and err.code() in REFUSED_NON_MEMBER:
        return Outcome("fail", desc, "refused: the member had left the group (it stopped "
                       "polling past max.poll.interval.ms), and no attempt was written",
                       recreate=fatal)
    if kind in ("commit", "commit-evicted"):
        return Outcome("info", desc, "the commit may have been written (librdkafka retries "
                       "it)", recreate=fatal)
    # txn-abort
    return Outcome("info", desc, "abort_transaction() failed: the outcome is unknown",
                   retry=bool(err.retriable()) and not fatal, recreate=fatal)


def merge(records: Sequence[Outcome | None]) -> Outcome | None:
    """How an op of several records ends, from each record's outcome (None: it happened).

    None when every record happened (the op is ``ok``). ``fail`` only when every
    record certainly did not happen; a mix of written and certainly-absent
    records, or any record whose fate is unknown, makes the op ``info``. A record
    whose client must be recreated makes the op's outcome ask for it too.
    """
    bad = [o for o in records if o is not None]
    if not bad:
        return None
    recreate = any(o.recreate for o in bad)
    unknown = next((o for o in bad if o.type == "info"), None)
    if unknown is not None:
        return replace(unknown, recreate=recreate)
    if len(bad) == len(records):
        return replace(bad[0], recreate=recreate)
    return Outcome("info", bad[0].error, "some records were written, the others certainly "
                   "not: the op neither happened nor failed whole", recreate=recreate)


_FAIL_KINDS: dict[str, str] = {
    "produce": "produce() raised: the record never entered the queue",
    "poll": "a read has no side effect",
    "assign": "assign() raised before changing the assignment",
    "subscribe": "subscribe() raised before changing the subscription",
    "txn-begin": "begin_transaction() is local and precedes every write",
    "txn-aborted": "the transaction was aborted: its records are never visible",
    "committed": "a lookup of committed offsets has no side effect",
}


def _send(err: KafkaError, desc: Any, *, retried: bool, fatal: bool) -> Outcome:
    code = err.code()
    if code in AMBIGUOUS_SEND:
        return Outcome("info", desc, AMBIGUOUS_SEND[code], recreate=fatal)
    if code in REJECTED_BEFORE_APPEND:
        if not retried:
            return Outcome("fail", desc, "rejected before append, sent once", recreate=fatal)
        return Outcome("info", desc, "rejected before append, but an earlier attempt may "
                       "have been appended", recreate=fatal)
    return Outcome("info", desc, "unknown error: the record may have been appended",
                   recreate=fatal)


def _not_kafka(error: BaseException | KafkaError, kind: Kind, desc: Any) -> Outcome:
    if kind == "produce" and isinstance(error, BufferError):
        return Outcome("fail", desc, "produce() raised: the record never entered the queue")
    if kind == "txn-aborted":
        return Outcome("fail", desc, _FAIL_KINDS["txn-aborted"])
    return Outcome("info", desc, "not a Kafka error: cannot tell what happened")


def _fatal(err: KafkaError) -> bool:
    return bool(err.fatal()) or err.code() == K._FATAL
