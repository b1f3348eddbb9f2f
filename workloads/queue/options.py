"""The queue workload's options: declared once, here, as rows of ``insync run``'s one table.

Each row of :data:`OPTIONS` is a flag, a ``run.toml`` key and a word of a
replayed argv (``harness.run.options`` adds the rows of every registered
workload to its table); its field and default are in :class:`QueueSettings`,
which the run's options inherit. What only the queue knows about them lives
here too: the values left to it (:func:`automatic`), the default test name, the
``test.json`` block, and the generator's shape (:func:`generator_options`); which
combinations cannot work is ``workloads.queue.combinations``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cluster.versions import KafkaVersion, feature_since
from harness.base.contract import parse_key
from harness.base.values import Range, Spec, boolean, choice, items, number, opt_whole, whole
from workloads.queue.config import MAX_POLL_RECORDS, ClientOptions
from workloads.queue.shape import TXN_GROUP, QueueOptions, group_names

#: librdkafka refuses more in-flight requests than this with enable.idempotence.
IDEMPOTENT_MAX_IN_FLIGHT = 5
#: Partitions of every workload topic: keys are ``t<topic>-<partition>``.
PARTITIONS_PER_TOPIC = 8
#: Keys written at a time (each retired after ``--max-writes-per-key`` sends).
#: With ``WRITERS_PER_KEY`` they bound the send ops in flight (12: every client
#: thread of a default 3-node run); simulated with 30 ms sends, 6 keys x 2 writers
#: recorded more than 4 x 2 or 4 x 3, with and without stalled partitions.
KEY_COUNT = 6
#: The most ops sending to one key in flight at once: a stalled partition holds at
#: most this many client threads (each until its op times out), never all of them.
WRITERS_PER_KEY = 2
#: A key whose send has been in flight this long is retired early (its partition is
#: stalled), so stalled keys do not pile up in the active set: half the producer's
#: delivery timeout, well above a healthy send's latency.
STALL_S = ClientOptions.delivery_timeout_ms / 2000
#: How long a refusal stands: a key a send op was refused on takes no send for this long,
#: and a topic Kafka refused to create is not asked for again sooner (``Topics``).
REFUSED_S = 1.0

#: How often an auto-commit run reads a group's committed offsets (``--commit auto``, the
#: auto-commit probe of docs/HISTORY-GROUPS.md): every few seconds, one group in turn;
#: librdkafka's auto.commit.interval.ms is 5 s.
COMMITTED_EVERY_NS = 3_000_000_000
#: Weight of ``poll`` beside ``send``'s 4 (see :func:`generator_options`).
POLL_WEIGHT = 0.5
#: Sends a key takes before a fresh key replaces it, by default. At 4,096 a fault-free 30 s
#: bench run went through 60 keys (8 new topics of 8 partitions, every client joining
#: each new key): keys lived about 2 s at ~8,000 sends/s, and the brokers spent twice the
#: bare producer loop's CPU per acknowledged send. At 32,768 a key lives for seconds to
#: minutes, as a Jepsen key (1,024 writes) does at Jepsen's rates, logs stay small enough
#: for the checker, and with ``MAX_POLL_RECORDS`` the brokers' CPU per send came to
#: 68-71 us against the bare loop's 51-58 (``insync bench run``; docs/BENCHMARKS.md).
MAX_WRITES_PER_KEY = 32_768

def keys(x: Any) -> list[str]:
    """``t0-0,t1-3``: distinct workload keys, each ``t<N>-<partition>`` with a partition
    below :data:`PARTITIONS_PER_TOPIC`."""
    out: list[str] = []
    for key in items(x):
        try:
            topic, partition = parse_key(key)
        except ValueError:
            topic, partition = "", PARTITIONS_PER_TOPIC
        if not (topic.startswith("t") and topic[1:].isdigit()) or \
                partition >= PARTITIONS_PER_TOPIC:
            raise ValueError(f"must name workload keys t<N>-<P>, P from 0 to "
                             f"{PARTITIONS_PER_TOPIC - 1} (e.g. t0-0), got {key!r}")
        if key not in out:
            out.append(key)
    return out


OPTIONS: tuple[Spec, ...] = (
    Spec("acks", choice("0", "1", "all"), "producer acks: 0, 1 or all (default: all)"),
    Spec("sub_via", choice("assign", "subscribe"),
         "how consumers get partitions (default: assign)"),
    Spec("commit", choice("auto", "sync"), "with --sub-via subscribe, how members commit: "
         "auto, librdkafka in the background, unrecorded; sync, after every poll, the "
         "positions read, recorded with the rebalances (docs/HISTORY-GROUPS.md) "
         "(default: auto)"),
    Spec("groups", whole, "with --sub-via subscribe, the consumer groups the members are "
         "dealt into (default: 1)", "N", range=Range(1, 1000)),
    Spec("group_protocol", choice("classic", "consumer"), "with --sub-via subscribe, the "
         "members' group.protocol: classic, or KIP-848's consumer (Kafka "
         f"{feature_since('consumer_group_protocol')}+) (default: classic)"),
    Spec("txn", boolean, "transactional producers and read_committed consumers; each "
         "transaction that polls commits the consumer's positions to group g0, recorded "
         "(docs/HISTORY-GROUPS.md)", "true|false"),
    Spec("txn_abort_p", number, "with --txn: probability of aborting a transaction on purpose "
         "(default: 0.1)", "P", range=Range(0, 1, open_hi=True)),
    Spec("txn_after_abort", choice("seek", "none"), "with --txn: what a client does to its "
         "consumer after an abort: seek, back over what the transaction read; none, "
         "nothing, so the next poll shows where the consumer itself stands, and the abort "
         "is recorded reads-kept (docs/HISTORY.md) (default: seek)", "seek|none"),
    Spec("idempotence", boolean, "enable.idempotence (default: true when --acks all and the "
         f"brokers support it, Kafka {feature_since('idempotence')}+)", "true|false"),
    Spec("retries", opt_whole, "producer retries (default: librdkafka's)",
         range=Range(0, 2**31 - 1)),
    Spec("max_in_flight", whole, "max.in.flight.requests.per.connection (default: 5; "
         f"at most {IDEMPOTENT_MAX_IN_FLIGHT} with idempotence)", range=Range(1, 1_000_000)),
    Spec("max_writes_per_key", whole, "sends per key before a fresh key replaces it "
         f"(default: {MAX_WRITES_PER_KEY})", range=Range(1, 1_000_000)),
    Spec("sends_per_op", whole, "most records one send op writes, all to one key; each op "
         "writes 1 to this many (default: 32)", "N", range=Range(1, 10_000)),
    Spec("poll_ms", whole, "how long a poll waits for a first record (default: 100)",
         range=Range(1, 60_000)),
    Spec("max_poll_records", whole, "most records one poll op returns and records "
         f"(default: {MAX_POLL_RECORDS})", "N", range=Range(1, 100_000)),
    Spec("check_crcs", boolean, "consumers check each fetched batch's CRC (librdkafka's "
         "check.crcs); off by default, as librdkafka's is: a client trusts its broker",
         "true|false"),
    Spec("record_keys", boolean, "each record carries a key, its own value (unique in the "
         "run), as a compacted topic requires (cleanup.policy=compact); compaction then "
         "removes none of them (default: false, records without keys)", "true|false"),
    Spec("pin_keys", keys, "keys never retired while their partition stalls, e.g. t0-0 "
         "(a scenario pins the keys its fault script names)", "K1,K2"),
    Spec("check_replicas", keys, "after the run, read every replica's log of these keys' "
         "partitions and report offsets where replicas hold different records, e.g. t0-0",
         "K1,K2"),
    Spec("members_from", number, "with --sub-via subscribe: the members make their consumers, "
         "and so first look up their group coordinator, only this many seconds into the main "
         "phase (brokers before 0.11 create __consumer_offsets at that lookup, with as many "
         "replicas as brokers are alive); until then client threads only send (default: 0)",
         "SECONDS", range=Range(0, 86_400)),
    Spec("stall_member", number, "with --commit sync: the member of client thread 0 stops "
         "polling once, 10 s into its life, for this many seconds, past its "
         "max.poll.interval.ms (6 s in such a run): the group evicts it and refuses the "
         "commit that follows (default: 0, no stall)", "SECONDS", range=Range(0, 12)),
    Spec("committed_every", number, "how often a committed op reads a group's committed "
         "offsets (groups in turn; with --txn, the one transactions commit to): an offset "
         "wrong only for a moment is seen only by a read in that moment (default: 3 with "
         "--sub-via subscribe --commit auto, else none; 0: none)", "SECONDS",
         range=Range(0, 3_600)),
    Spec("crash_client_interval", number, "how long a client lives, on average, before a "
         "crash op closes it and a fresh one takes its thread, as Jepsen's option of the "
         "name (default: 30; 0: no crashes)", "SECONDS", range=Range(0, 86_400)),
)  # fmt: skip


@dataclass(frozen=True)
class QueueSettings:
    """The queue workload's option values, one field per row of :data:`OPTIONS`."""

    acks: str = "all"
    sub_via: str = "assign"
    commit: str = "auto"
    groups: int = 1
    group_protocol: str = "classic"
    txn: bool = False
    txn_abort_p: float = 0.1
    txn_after_abort: str = "seek"
    idempotence: bool | None = None
    retries: int | None = None
    max_in_flight: int = 5
    max_writes_per_key: int = MAX_WRITES_PER_KEY
    sends_per_op: int = 32
    poll_ms: int = 100
    max_poll_records: int = MAX_POLL_RECORDS
    check_crcs: bool = False
    record_keys: bool = False
    pin_keys: list[str] = field(default_factory=list)
    check_replicas: list[str] = field(default_factory=list)
    members_from: float = 0.0
    stall_member: float = 0.0
    committed_every: float | None = None
    crash_client_interval: float = 30.0


def idempotent(s: QueueSettings, version: KafkaVersion | None = None) -> bool:
    """Whether the producers are idempotent: as given, else ``--acks all`` on brokers that
    can (0.10 brokers refuse it: every send would fail), and always with ``--txn``.

    ``version`` None: brokers with every feature (resolved settings, whose idempotence
    is already decided, or settings described without a cluster).
    """
    if s.txn:
        return True
    if s.idempotence is not None:
        return s.idempotence
    return s.acks == "all" and (version is None or version.can("idempotence"))


def automatic(s: QueueSettings, version: KafkaVersion) -> dict[str, Any]:
    """The values left to the workload: idempotence, as :func:`idempotent` decides it."""
    return {"idempotence": idempotent(s, version)}


def name_parts(s: QueueSettings) -> list[str]:
    """The default test name's words: ``queue-acks-all-txn-subscribe``."""
    parts = ["queue", f"acks-{s.acks}"]
    parts += ["txn"] if s.txn else []
    parts += ["subscribe"] if s.sub_via == "subscribe" else []
    parts += ["commit"] if s.commit == "sync" else []
    parts += [f"groups-{s.groups}"] if s.groups > 1 else []
    parts += ["consumer-protocol"] if s.group_protocol == "consumer" else []
    return parts


def block(s: QueueSettings) -> dict[str, Any]:
    """The queue's part of ``test.json``'s ``workload`` block, with the producer's settings."""
    producer = client_options(s).producer_config(thread=0)
    producer.pop("transactional.id", None)  # one per thread
    return {
        "acks": s.acks,
        "idempotence": s.idempotence,
        "retries": s.retries,
        "max_in_flight": s.max_in_flight,
        "txn": s.txn,
        "txn_abort_p": s.txn_abort_p,
        "txn_after_abort": s.txn_after_abort,
        "sub_via": s.sub_via,
        "commit": s.commit,
        "groups": s.groups,
        "group_protocol": s.group_protocol,
        "max_writes_per_key": s.max_writes_per_key,
        "sends_per_op": s.sends_per_op,
        "key_count": KEY_COUNT,
        "writers_per_key": WRITERS_PER_KEY,
        "stall_s": STALL_S,
        "refused_s": REFUSED_S,
        "partitions_per_topic": PARTITIONS_PER_TOPIC,
        "poll_ms": s.poll_ms,
        "max_poll_records": s.max_poll_records,
        "check_crcs": s.check_crcs,
        "record_keys": s.record_keys,
        "pin_keys": list(s.pin_keys),
        "check_replicas": list(s.check_replicas),
        "crash_client_interval": s.crash_client_interval,
        "stall_member": s.stall_member,
        "members_from": s.members_from,
        "committed_every": s.committed_every,
        "producer": producer,
    }


def client_options(
    s: QueueSettings, *, bootstrap: str = "", token: str = "insync", seed: int = 0
) -> ClientOptions:
    """Every client's producer and consumer settings for a run (``bootstrap``, ``token``
    and ``seed`` are the run's; the defaults serve to describe the settings). A run's
    ``s`` is resolved (``RunOptions.resolved``), so its idempotence is decided."""
    return ClientOptions(
        bootstrap=bootstrap,
        acks="all" if s.acks == "all" else ("1" if s.acks == "1" else "0"),
        idempotence=idempotent(s),
        retries=s.retries,
        max_in_flight=s.max_in_flight,
        txn=s.txn,
        sub_via="subscribe" if s.sub_via == "subscribe" else "assign",
        group_id=f"{token}-group",
        commit="sync" if s.commit == "sync" else "auto",
        groups=s.groups,
        group_prefix=f"{token}-",
        group_protocol="consumer" if s.group_protocol == "consumer" else "classic",
        txn_id_prefix=f"{token}-txn",
        abort_p=s.txn_abort_p if s.txn else 0.0,
        after_abort="none" if s.txn and s.txn_after_abort == "none" else "seek",
        poll_ms=s.poll_ms,
        max_poll_records=s.max_poll_records,
        check_crcs=s.check_crcs,
        record_keys=s.record_keys,
        stall_member_s=s.stall_member if s.sub_via == "subscribe" and s.commit == "sync" else 0.0,
        members_from_s=s.members_from,
        seed=seed,
    )


def generator_options(s: QueueSettings) -> QueueOptions:
    """The generator's shape: op weights follow ``--txn`` and ``--sub-via``.

    One poll per eight sends (:data:`POLL_WEIGHT`): a poll holds a client thread for a
    fetch and returns up to ``max_poll_records`` records to parse and record, but
    carries no send. At one per four, polls took 14% of the client threads' time on
    the fake Kafka of ``insync bench run --no-kafka`` and the run recorded 0.57 of the
    bare loop's sends; at one per eight, 0.78 (``--rate 0``, 8 ms requests). Reads are
    still checked all run long (about 100 polls/s at ``--rate 1000``), and the final
    drain re-reads everything.

    Client crashes come on a clock (``--crash-client-interval``, ``client_life_ns``), not
    as a weight per op: drawn at 0.02 per op they restarted a client every 0.4 s at 600
    ops/s and every 5 s at 50, so how hard a run exercised client restarts depended on
    how fast the cluster was. (Throughput did not depend on them: 7,362 vs 7,293 sends/s
    without and with them, ``insync bench run``, 2026-11-22.)
    """
    recorded = client_options(s).records_groups
    weights = {
        "send": 4.0,
        "poll": POLL_WEIGHT,
        "txn": 1.0 if s.txn else 0.0,
        "assign": 0.1 if s.sub_via == "assign" else 0.0,
        "subscribe": 0.1 if s.sub_via == "subscribe" else 0.0,
        "crash": 0.0,
    }
    return QueueOptions(
        key_count=KEY_COUNT,
        max_writes_per_key=s.max_writes_per_key,
        partitions_per_topic=PARTITIONS_PER_TOPIC,
        weights=weights,
        consume="subscribe" if s.sub_via == "subscribe" else "assign",
        sends_per_op=s.sends_per_op,
        writers_per_key=WRITERS_PER_KEY,
        stall_ns=int(STALL_S * 1e9),
        refused_ns=int(REFUSED_S * 1e9),
        pinned=frozenset(s.pin_keys),
        client_life_ns=int(s.crash_client_interval * 1e9) if s.crash_client_interval else None,
        groups=s.groups if recorded else 0,
        auto_commit=s.commit == "auto",
        committed_every_ns=_committed_every_ns(s, recorded),
        join_from_ns=int(s.members_from * 1e9),
        txn=s.txn,
    )


def _committed_every_ns(s: QueueSettings, recorded: bool) -> int | None:
    """``--committed-every``, else every few seconds in a run whose members auto-commit
    (``recorded`` groups; transactions commit inside themselves)."""
    if s.committed_every is not None:
        return round(s.committed_every * 1e9) or None
    return COMMITTED_EVERY_NS if s.commit == "auto" and recorded else None


def group_names_of(s: QueueSettings) -> tuple[str, ...]:
    """The recorded groups (``--sub-via subscribe`` without ``--txn``, or with ``--txn``
    the one its transactions commit to): the drain reads each one's committed offsets
    first."""
    if s.txn:
        return (TXN_GROUP,)
    return group_names(s.groups) if client_options(s).records_groups else ()
