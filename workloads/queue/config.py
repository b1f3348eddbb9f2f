"""The queue workload's producer and consumer settings, shared by every client of a run.

Built once per run from the workload's options and the run's token
(``workloads.queue.setup``); each ``QueueClient`` turns them into
librdkafka configurations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from workloads.queue.shape import OFFSET_RESET, TXN_GROUP, group_name

Acks = Literal["0", "1", "all"]

#: linger.ms of every producer: librdkafka's default. An op's records enter the queue in
#: one ``produce_batch`` call, so linger no longer decides whether they share a request;
#: measured in one bench (``insync bench run``, 3 nodes, 2026-11-23), 1 ms against 5
#: gave the harness 7,633-9,566 acknowledged sends/s and 5 ms 9,738-9,920, the bare loop
#: about the same either way.
LINGER_MS = 5
SubVia = Literal["assign", "subscribe"]
#: How subscribed consumers commit: ``auto``, librdkafka in the background (unrecorded);
#: ``sync``, the member after each poll, recorded (``workloads.queue.members``).
CommitMode = Literal["auto", "sync"]
#: The group protocol of subscribed consumers: ``classic``, or KIP-848's ``consumer``.
GroupProtocol = Literal["classic", "consumer"]
#: What a transactional client does to its consumer after an abort that succeeded:
#: ``seek``, back to the first offset the transaction read of each key (the op leaves no
#: trace); ``none``, nothing, so its next poll shows where the consumer itself stands
#: (KAFKA-17582: rewinding is the application's job). Either way the op is ``fail``.
AfterAbort = Literal["seek", "none"]
#: Most records one poll op returns and records, by default. Every process reads each key
#: it holds from its first record, so the records read per acknowledged send are bounded
#: by the poll ops' capacity, not by what was written: at 500 a fault-free 30 s bench run
#: read 5.19 records per acknowledged send and its brokers spent 137-167 us of CPU per
#: send against the bare producer loop's 58-63 on the same two cores; at 100, 1.95 reads
#: per send (``insync bench run``, 3 nodes; docs/BENCHMARKS.md). The final drain reads
#: everything again, in consumers of its own.
MAX_POLL_RECORDS = 100
#: Records (per partition) and KiB (per consumer) a consumer prefetches ahead of its polls:
#: a few polls' worth (twice the most one took when the default was 500), and room for them.
QUEUED_MIN_MESSAGES = 1000
QUEUED_MAX_KBYTES = 1024
#: How long a consumer waits before fetching a partition again once its prefetch queue
#: passed those thresholds. librdkafka's default, 1 s, outlasts the queue: a poll op
#: took up to 500 of the 1,000 records (the default then), the next one the rest, and
#: every poll after found nothing and waited its whole ``poll_ms`` while the partition
#: was being written (three fault-free bench runs, 3 nodes, 2026-11-24: 536-702 such polls
#: a run, 55-71 s of the client threads' ~380 s). Main-phase consumers only, as the
#: thresholds are.
FETCH_QUEUE_BACKOFF_MS = 10


#: What an op's budget leaves of its op timeout: closing a producer, writing the completion.
OP_MARGIN_S = 2.0
#: Members' ``session.timeout.ms`` and ``max.poll.interval.ms`` in a run with a stalling
#: member (``--stall-member``): librdkafka wants the poll interval no shorter than the
#: session, and a stall past it must fit in one op with room for the commit after it.
STALL_POLL_INTERVAL_MS = 6_000


@dataclass(frozen=True)
class ClientOptions:
    """Producer and consumer settings shared by every client of a run."""

    bootstrap: str
    acks: Acks = "all"
    idempotence: bool = True
    retries: int | None = None
    max_in_flight: int = 5
    txn: bool = False
    sub_via: SubVia = "assign"
    group_id: str = "insync"
    commit: CommitMode = "auto"
    groups: int = 1
    group_prefix: str = "insync-"
    group_protocol: GroupProtocol = "classic"
    txn_id_prefix: str = "insync"
    abort_p: float = 0.1
    after_abort: AfterAbort = "seek"
    poll_ms: int = 100
    max_poll_records: int = MAX_POLL_RECORDS
    #: librdkafka's ``check.crcs``: whether consumers (the drain's too) verify each
    #: fetched batch's CRC; librdkafka's default, off, leaves a corrupt batch to the checker
    check_crcs: bool = False
    #: ``--record-keys``: each record's key is its value (unique in the run), which a
    #: compacted topic requires of every record; readers still know a record by its value
    record_keys: bool = False
    #: seconds thread 0's member stops polling once, past its max.poll.interval.ms (0: never)
    stall_member_s: float = 0.0
    #: ``--members-from``: members make their consumers only once they join, this many
    #: seconds into the main phase, not before the run's clock starts (0: at the warm-up)
    members_from_s: float = 0.0
    delivery_timeout_ms: int = 10_000
    seed: int = 0

    @property
    def op_timeout_s(self) -> float:
        """How long an op may take before the interpreter abandons it (``info``, client
        replaced): delivery timeout plus slack."""
        return self.delivery_timeout_ms / 1000 + 5.0

    @property
    def op_budget_s(self) -> float:
        """How long the client lets all of one op's waits take together (delivery reports,
        commit, abort): less than ``op_timeout_s`` by :data:`OP_MARGIN_S`, so an op that
        runs out ends with an outcome the client chose, before the interpreter gives up."""
        return self.op_timeout_s - OP_MARGIN_S

    def producer_config(self, thread: int) -> dict[str, Any]:
        conf: dict[str, Any] = {
            "acks": self.acks,
            "enable.idempotence": self.idempotence,
            "max.in.flight.requests.per.connection": self.max_in_flight,
            "linger.ms": LINGER_MS,
            # librdkafka's own defaults, spelled out so test.json states them: far above
            # one op's records (up to --sends-per-op small values), so not a limit.
            "batch.num.messages": 10_000,
            "batch.size": 1_000_000,
            "message.timeout.ms": self.delivery_timeout_ms,
            "request.timeout.ms": min(5000, self.delivery_timeout_ms),
        }
        if self.retries is not None:
            conf["retries"] = self.retries
        if self.txn:
            # One id per worker thread: a fresh process's producer fences the old one.
            conf["transactional.id"] = f"{self.txn_id_prefix}-{thread}"
            conf["transaction.timeout.ms"] = max(self.delivery_timeout_ms, 10_000)
            # AddPartitionsToTxn is refused (CONCURRENT_TRANSACTIONS) until the previous
            # commit's markers are written; retry soon instead of after 100 ms.
            conf["retry.backoff.ms"] = 10
        return conf

    @property
    def records_groups(self) -> bool:
        """Whether consumers subscribe as members of recorded groups (``g0``...): with
        ``--sub-via subscribe``, unless transactions commit the offsets."""
        return self.sub_via == "subscribe" and not self.txn

    @property
    def members_commit(self) -> bool:
        """Whether consumers subscribe as group members that commit explicitly, recorded
        (``--commit sync``)."""
        return self.sub_via == "subscribe" and self.commit == "sync"

    def group_of(self, process: int) -> str | None:
        """The group ``process``'s main-phase consumer is a member of, as histories name it
        (docs/HISTORY-GROUPS.md): its recorded group with ``--sub-via subscribe``, the one
        group transactions commit to with ``--txn``, else None: the run's unnamed group
        (``group_id``), whose members commit nothing, as the drain's consumers."""
        if self.records_groups:
            return group_name(process, self.groups)
        return TXN_GROUP if self.txn else None

    def group_id_of(self, group: str) -> str:
        """The ``group.id`` on the cluster of the group a history names ``group``."""
        return self.group_prefix + group

    def consumer_config(self, *, draining: bool = False, group: str | None = None
                        ) -> dict[str, Any]:
        """A consumer's settings; ``draining``: one made to re-read every key from the
        start at the end of a run, which keeps librdkafka's prefetch (see below);
        ``group``: a member of that group (as histories name it, :meth:`group_of`)."""
        auto_commit = self.sub_via == "subscribe" and not self.txn and self.commit == "auto"
        conf: dict[str, Any] = {
            "group.id": self.group_id if group is None else self.group_id_of(group),
            "auto.offset.reset": OFFSET_RESET,
            "enable.auto.commit": auto_commit,
            "isolation.level": "read_committed" if self.txn else "read_uncommitted",
            "session.timeout.ms": 10_000,
            "heartbeat.interval.ms": 1_000,
            "check.crcs": self.check_crcs,
            # fetch.wait.max.ms stays at its default (500): a fetch returns as soon as data
            # arrives anyway, and shorter waits multiply idle fetches from every consumer.
            # Prefetch a little, not librdkafka's 100,000 records / 64 MiB per partition:
            # every process has a consumer that a poll op reads a few times a second, and
            # with the defaults each of them kept fetching each time a batch was appended
            # (a fetch per consumer per produce request, served by the same 2 cores as
            # the writes). A fault-free 30 s run on 3 nodes recorded 7,600-8,000 sends/s
            # with the defaults and 11,700-12,300/s with these. The drain keeps the
            # defaults: capped, its consumers left 483,128 of a scenario's acknowledged
            # values unread in 60 s (measured while every drain process still re-read
            # every key; not measured again since the drain deals the keys out).
        }
        if self.stall_member_s and group is not None:
            conf["session.timeout.ms"] = STALL_POLL_INTERVAL_MS
            conf["max.poll.interval.ms"] = STALL_POLL_INTERVAL_MS
        if self.group_protocol == "consumer" and self.sub_via == "subscribe" and not draining:
            # KIP-848: the broker keeps the member's session and assigns partitions, so the
            # classic protocol's client-side session settings are not accepted.
            conf["group.protocol"] = "consumer"
            # (max.poll.interval.ms stays: the client enforces it under either protocol)
            del conf["session.timeout.ms"], conf["heartbeat.interval.ms"]
        if not draining:
            conf["queued.min.messages"] = QUEUED_MIN_MESSAGES
            conf["queued.max.messages.kbytes"] = QUEUED_MAX_KBYTES
            conf["fetch.queue.backoff.ms"] = FETCH_QUEUE_BACKOFF_MS
        return conf
