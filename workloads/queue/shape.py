"""What a queue workload is made of: its op kinds, key names and options.

The generator (``workloads.queue.generator``) draws ops of this shape; the drain,
the topics and the options table name keys the same way through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Literal

from harness.base.contract import client_fs, group_fs
from harness.base.history import Op

#: The op kinds the generator draws from: the contract's client ops, in its order
#: (a weight per kind; an op the registry gains draws nothing until it has a weight),
#: but for docs/HISTORY-GROUPS.md's commit/committed ops, which this workload never
#: performs (a weight for them is refused as an unknown op kind).
OPS: tuple[str, ...] = tuple(f for f in client_fs() if f not in group_fs())


#: Every consumer's ``auto.offset.reset``, and the ``reset`` a recorded ``subscribe`` states:
#: a partition a group has committed nothing for is read from its first record.
OFFSET_RESET: Literal["earliest"] = "earliest"


#: The value recorded for a record whose bytes are not a value a send could have written:
#: an empty value, or bytes that are not a decimal integer below it (a disk's flipped bit
#: reaching a consumer, ``corrupt-read``). Sends write ``str(value)`` of values counted up
#: from 0, never this one, so such a record is a ``garbage-read`` (docs/HISTORY.md) where
#: a parse error would end the poll ``info`` and take every record it read with it.
UNREADABLE_VALUE = 2**63 - 1


def record_value(raw: bytes | None) -> int:
    """A read record's value as a history records it: the decimal integer a send wrote,
    else :data:`UNREADABLE_VALUE`."""
    if not raw or not raw.isdigit() or len(raw) > 19:
        return UNREADABLE_VALUE
    return min(int(raw), UNREADABLE_VALUE)


@lru_cache(maxsize=4096)
def key_name(n: int, partitions_per_topic: int) -> str:
    """The name of key number ``n``: ``t{topic}-{partition}`` (cached: the generator
    names every active key several times per op)."""
    return f"t{n // partitions_per_topic}-{n % partitions_per_topic}"


def group_name(process: int, groups: int) -> str:
    """The consumer group a process is a member of, as histories name it: ``g0`` to
    ``g{groups-1}``, processes dealt out in turn (a fresh process after a crash may join
    another group than its thread's previous one, as a restarted application instance may).
    On the cluster its ``group.id`` carries the run's token (``<token>-g0``), as topics do."""
    return f"g{process % groups}"


#: With ``--txn``, the one consumer group of the main phase's consumers, as histories name
#: it: every transaction that polls commits its consumer's positions to it, and every
#: ``assign`` starts a new key at its committed offset (docs/HISTORY-GROUPS.md).
TXN_GROUP = group_name(0, 1)


def group_names(groups: int) -> tuple[str, ...]:
    """Every group of a run with ``groups`` groups, in order."""
    return tuple(f"g{i}" for i in range(groups))


def _default_weights() -> dict[str, float]:
    return {"send": 4.0, "poll": 4.0, "txn": 1.0, "assign": 0.1, "subscribe": 0.0, "crash": 0.0}


@dataclass(frozen=True)
class QueueOptions:
    """The shape of a queue workload.

    ``weights``: relative frequency of each op kind (missing kinds weigh 0).
    ``consume``: how a process joins the current keys before it reads.
    ``txn_send_ratio``: the share of a transaction's micro-ops that are sends (each
    writes 1 to ``sends_per_op`` records to one key).
    ``sends_per_op``: a ``send`` op writes 1 to this many records, to one key.
    ``writers_per_key``: the most ops sending to one key in flight at once
    (None: no bound).
    ``stall_ns``: a key retires early once a send to it has been in flight this
    long (None: never).
    ``pinned``: keys never retired for a stall (a fault script's keys: a scenario that
    kills the leader of ``t0-0`` must keep writing to ``t0-0`` once it has a leader
    again, or the truncation it provokes leaves no trace in the history).
    ``client_life_ns``: how long a client lives, on average, before a ``crash`` op
    closes it (None: no timed crashes; a ``crash`` weight still draws them per op).
    ``refused_ns``: how long a key takes no ``send`` op after one failed (``fail``: Kafka
    refused every record, nothing was written) (None: sent to again at once).
    ``rejoin_ns``: how long a process whose join failed waits before it joins again
    (it sends meanwhile, and reads nothing until it has joined).
    ``groups``: with ``consume`` ``subscribe``, the number of consumer groups recorded
    as docs/HISTORY-GROUPS.md says: each ``subscribe`` names its process's group
    (:func:`group_name`) and ``reset``. Their members commit explicitly (each poll is
    invoked as ``[["poll"], ["commit"]]``), or with ``auto_commit`` librdkafka commits in
    the background: the subscribe says ``"auto-commit": true``, and every
    ``committed_every_ns`` a ``committed`` op reads a group's offsets of the active keys
    (the groups in turn). 0: no group is recorded (``assign``, transactions).
    Crashes come on a clock, as Jepsen's ``--crash-client-interval`` has them: one
    every ``client_life_ns / clients`` on average, spaced uniformly at random from
    0 to twice that, whatever the op rate. Drawn per op they followed the rate: at
    600 ops/s a weight of 0.02 restarted a client every 0.4 s, at 50 ops/s every 5 s.
    ``txn``: transactions commit their consumer's positions, recorded as
    docs/HISTORY-GROUPS.md says for ``--txn``: a ``txn`` that polls is invoked with a last
    ``["commit"]`` (the client fills in the positions it sends), and every ``assign`` or
    ``subscribe`` of the main phase names :data:`TXN_GROUP` and ``reset``, an ``assign``
    also ``"seek": "committed"`` (the client starts each new key at the group's committed
    offset and records the lookup), and with ``committed_every_ns`` a ``committed`` op
    reads that group's offsets of the active keys. A ``txn`` without a poll commits
    nothing: only reads move a position worth committing, and an invoke that names no
    commit lets an op abandoned at its deadline stand for no commit either.
    ``join_from_ns``: no process joins (subscribes or assigns) before this time of the
    main phase, and none reads a group's committed offsets: until then processes only
    send. A scenario that needs the group coordinator looked up first in a fault (the
    broker creates ``__consumer_offsets`` at that lookup) starts its members late.
    """

    key_count: int = 4
    max_writes_per_key: int = 64
    partitions_per_topic: int = 8
    weights: Mapping[str, float] = field(default_factory=_default_weights)
    max_txn_len: int = 4
    txn_send_ratio: float = 0.5
    consume: Literal["assign", "subscribe"] = "assign"
    sends_per_op: int = 1
    writers_per_key: int | None = None
    stall_ns: int | None = None
    pinned: frozenset[str] = frozenset()
    client_life_ns: int | None = None
    rejoin_ns: int = 1_000_000_000
    refused_ns: int | None = None
    groups: int = 0
    auto_commit: bool = False
    committed_every_ns: int | None = None
    join_from_ns: int = 0
    txn: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(OPS)
        if unknown:
            raise ValueError(f"unknown op kinds in weights: {sorted(unknown)}")
        if sum(self.weights.values()) <= 0 or min(self.weights.values()) < 0:
            raise ValueError("weights must be non-negative, and some positive")
        if self.key_count < 1 or self.max_writes_per_key < 1 or self.partitions_per_topic < 1:
            raise ValueError("key_count, max_writes_per_key and partitions_per_topic must be >= 1")
        if self.max_txn_len < 1 or not 0 <= self.txn_send_ratio <= 1:
            raise ValueError("max_txn_len must be >= 1 and txn_send_ratio within [0, 1]")
        if self.sends_per_op < 1 or (self.writers_per_key is not None
                                     and self.writers_per_key < 1):
            raise ValueError("sends_per_op and writers_per_key must be >= 1")
        if self.stall_ns is not None and self.stall_ns <= 0:
            raise ValueError("stall_ns must be > 0")
        if self.client_life_ns is not None and self.client_life_ns <= 0:
            raise ValueError("client_life_ns must be > 0")
        if self.rejoin_ns < 0:
            raise ValueError("rejoin_ns must be >= 0")
        if self.refused_ns is not None and self.refused_ns <= 0:
            raise ValueError("refused_ns must be > 0")
        if self.join_from_ns < 0:
            raise ValueError("join_from_ns must be >= 0")
        if self.groups < 0 or (self.groups and (self.consume != "subscribe" or self.txn)):
            raise ValueError("groups must be >= 0, and 0 unless consume is subscribe "
                             "without txn (transactions commit to TXN_GROUP)")

    @cached_property
    def draw_weights(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The weight of each of :data:`OPS`, as drawn when a key is open to a send, and
        when none is (send weighs 0). Cached: the generator draws with them every op."""
        weights = tuple(self.weights.get(name, 0.0) for name in OPS)
        send = OPS.index("send")
        return weights, (*weights[:send], 0.0, *weights[send + 1:])

    @cached_property
    def send_weights(self) -> tuple[float, ...]:
        """The weights for a process that has not joined and may not yet try again:
        sends only (it must not read before it has joined)."""
        return tuple(self.weights.get("send", 0.0) if name == "send" else 0.0 for name in OPS)


def keys_of(event: Op) -> set[str]:
    """Every key an op names: sent to, read from, assigned or subscribed."""
    value = event.get("value")
    f = event.get("f")
    if f in ("assign", "subscribe"):
        return set(value or ())
    if f == "send" and value:  # ["send", key, value] each: the common op, kept cheap
        return {mop[1] for mop in value}
    keys: set[str] = set()
    for mop in value or ():
        if isinstance(mop, list) and len(mop) >= 2:
            if mop[0] == "send":
                keys.add(mop[1])
            elif mop[0] == "poll" and isinstance(mop[1], dict):
                keys.update(mop[1])
    return keys
