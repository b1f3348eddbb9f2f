"""The queue workload: sends, polls and transactions over a rolling set of partitions.

Keys are topic-partitions: key number ``n`` is partition ``n % partitions_per_topic``
of topic ``t{n // partitions_per_topic}`` (``t0-0``, ``t0-1``, ...). A few keys are
written at a time; once a key has taken ``max_writes_per_key`` sends it is retired
and a fresh key takes its place, so every log stays short (cheap to check) and a
run exercises many partitions, as Jepsen's Kafka workload does.

Values come from one counter for the whole run, so they are unique per key (and
globally): every value read traces back to the one send that wrote it. That
holds because the generator is a single chain of immutable states; never wrap
:class:`QueueGen` in ``each_thread`` or ``repeat``, which would copy or replay it.

A client reads only what it has been assigned, so a process that has not yet
joined the current key set (a new process after a crash, or any process after a
key was retired) first assigns (or subscribes to) the active keys.

Ops: ``send`` and ``poll`` (one micro-op each), ``txn`` (1 to ``max_txn_len``
sends and polls), ``assign`` (a random non-empty subset of the active keys),
``subscribe`` (the active keys; the runner subscribes to their topics),
``crash``. A ``crash`` op asks the runner to close the client and complete the op ``info``;
the thread then goes on as a fresh process, which joins before it reads.

The final drain is in ``workloads.queue.drain``. Pure: no clock, no I/O, no
global randomness, so the simulator tests it (``tests/workloads/queue``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from harness.base.history import Op, Process
from harness.gen.core import PENDING, Context, Gen, Rng, Step

OPS: tuple[str, ...] = ("send", "poll", "txn", "assign", "subscribe", "crash")


def key_name(n: int, partitions_per_topic: int) -> str:
    """The name of key number ``n``: ``t{topic}-{partition}``."""
    return f"t{n // partitions_per_topic}-{n % partitions_per_topic}"


def parse_key(key: str) -> tuple[str, int]:
    """``"t3-5"`` → ``("t3", 5)``: the topic and partition a key names."""
    topic, _, partition = key.rpartition("-")
    if not topic or not partition.isdigit():
        raise ValueError(f"not a key of the form <topic>-<partition>: {key!r}")
    return topic, int(partition)


def _default_weights() -> dict[str, float]:
    return {"send": 4.0, "poll": 4.0, "txn": 1.0, "assign": 0.1, "subscribe": 0.0, "crash": 0.0}


@dataclass(frozen=True)
class QueueOptions:
    """The shape of a queue workload.

    ``weights``: relative frequency of each op kind (missing kinds weigh 0).
    ``consume``: how a process joins the current keys before it reads.
    ``txn_send_ratio``: the share of a transaction's micro-ops that are sends.
    """

    key_count: int = 4
    max_writes_per_key: int = 64
    partitions_per_topic: int = 8
    weights: Mapping[str, float] = field(default_factory=_default_weights)
    max_txn_len: int = 4
    txn_send_ratio: float = 0.5
    consume: Literal["assign", "subscribe"] = "assign"

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


@dataclass(frozen=True, slots=True)
class QueueGen(Gen):
    """The main-phase client generator of the queue workload (one immutable state)."""

    opts: QueueOptions
    active: tuple[int, ...]
    writes: Mapping[int, int]
    next_key: int
    next_value: int = 0
    epoch: int = 0
    joined: Mapping[Process, int] = field(default_factory=dict)

    @staticmethod
    def start(opts: QueueOptions | None = None) -> QueueGen:
        o = opts or QueueOptions()
        return QueueGen(o, tuple(range(o.key_count)), dict.fromkeys(range(o.key_count), 0),
                        o.key_count)

    def key(self, n: int) -> str:
        return key_name(n, self.opts.partitions_per_topic)

    def op(self, ctx: Context) -> Step:
        free = ctx.free_threads()
        if not free:
            return PENDING, self
        rng, _ = ctx.split()
        i, rng = rng.below(len(free))
        process = ctx.workers[free[i]]
        f: str
        if self.joined.get(process) != self.epoch:
            f, value = self.opts.consume, sorted(map(self.key, self.active))
            state = replace(self, joined={**self.joined, process: self.epoch})
        else:
            k, rng = rng.weighted([self.opts.weights.get(name, 0.0) for name in OPS])
            f = OPS[k]
            value, state = self._value(f, rng)
        return {"process": process, "time": ctx.time, "type": "invoke", "f": f,
                "value": value}, state

    def _value(self, f: str, rng: Rng) -> tuple[Any, QueueGen]:
        state = self
        if f == "send":
            mop, state = state._send(rng)
            return [mop], state
        if f == "poll":
            return [["poll"]], state
        if f == "txn":
            n, rng = rng.below(self.opts.max_txn_len)
            mops: list[list[Any]] = []
            for j in range(n + 1):
                x, rng = rng.random()
                if x < self.opts.txn_send_ratio:
                    mop, state = state._send(rng.fork(j))
                    mops.append(mop)
                else:
                    mops.append(["poll"])
            return mops, state
        if f == "assign":
            picks = [n for j, n in enumerate(self.active) if rng.fork(j).below(2)[0]]
            chosen = picks or [self.active[rng.below(len(self.active))[0]]]
            return sorted(map(self.key, chosen)), state
        if f == "subscribe":
            return sorted(map(self.key, self.active)), state
        return None, state  # crash

    def _send(self, rng: Rng) -> tuple[list[Any], QueueGen]:
        n = self.active[rng.below(len(self.active))[0]]
        mop = ["send", self.key(n), self.next_value]
        writes = {**self.writes, n: self.writes[n] + 1}
        active, next_key, epoch = self.active, self.next_key, self.epoch
        if writes[n] >= self.opts.max_writes_per_key:  # budget spent: retire the key
            del writes[n]
            active = (*(k for k in active if k != n), next_key)
            writes[next_key] = 0
            next_key, epoch = next_key + 1, epoch + 1
        return mop, replace(self, active=active, writes=writes, next_key=next_key,
                            next_value=self.next_value + 1, epoch=epoch)

    def update(self, ctx: Context, event: Op) -> Gen:
        """Forget a process that failed to join (it must join again) or was retired."""
        process = event.get("process")
        failed_join = event.get("type") == "fail" and event.get("f") in ("assign", "subscribe")
        if (failed_join or event.get("type") == "info") and process in self.joined:
            return replace(self, joined={p: e for p, e in self.joined.items() if p != process})
        return self


def keys_of(event: Op) -> set[str]:
    """Every key an op names: sent to, read from, assigned or subscribed."""
    value = event.get("value")
    if event.get("f") in ("assign", "subscribe"):
        return set(value or ())
    keys: set[str] = set()
    for mop in value or ():
        if isinstance(mop, list) and len(mop) >= 2:
            if mop[0] == "send":
                keys.add(mop[1])
            elif mop[0] == "poll" and isinstance(mop[1], dict):
                keys.update(mop[1])
    return keys
