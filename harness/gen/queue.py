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

The final drain (:class:`Drain`) re-assigns every key that ever appeared, from
the beginning, and polls; the runner stops it when :func:`drain_complete` says
every acknowledged value has been read, or at ``--final-time-limit``.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
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


@dataclass(frozen=True, slots=True)
class Drain(Gen):
    """The final drain: each client re-reads every key ever seen, from the start.

    A process that did anything before the drain first crashes (a ``crash`` op): its
    consumer is closed and its thread goes on as a fresh process, which
    assigns every key with ``"seek": "beginning"`` (a hint for the runner) and
    polls. Re-reading under the *old* process number would make the checker see
    its polls jump backwards (``nonmonotonic-poll``), since an assign keeps the
    positions of the keys it lists.

    It learns keys and processes from the events of earlier phases (``phases``
    passes them on). Endless by itself: bound it with ``time_limit``; the runner
    stops earlier once :func:`drain_complete` holds.
    """

    keys: frozenset[str] = frozenset()
    joined: Mapping[Process, frozenset[str]] = field(default_factory=dict)
    old: frozenset[Process] = frozenset()
    started: bool = False

    def op(self, ctx: Context) -> Step:
        if not self.keys:
            return None  # nothing was ever written or read: nothing to drain
        free = ctx.free_threads()
        state = self if self.started else replace(self, started=True)
        if not free:
            return PENDING, state
        i, _ = ctx.rng.below(len(free))
        process = ctx.workers[free[i]]
        base = {"process": process, "time": ctx.time, "type": "invoke"}
        if process in state.old:
            return {**base, "f": "crash", "value": None}, replace(state, old=state.old - {process})
        if state.joined.get(process) != state.keys:
            op = {**base, "f": "assign", "value": sorted(state.keys), "seek": "beginning"}
            return op, replace(state, joined={**state.joined, process: state.keys})
        return {**base, "f": "poll", "value": [["poll"]]}, state

    def update(self, ctx: Context, event: Op) -> Gen:
        state = self
        new = keys_of(event) - self.keys
        if new:
            state = replace(state, keys=self.keys | new)
        process = event.get("process")
        if not self.started and process is not None and process not in self.old:
            state = replace(state, old=state.old | {process})
        failed_join = event.get("type") == "fail" and event.get("f") == "assign"
        if (failed_join or event.get("type") == "info") and process in state.joined:
            state = replace(state, joined={p: k for p, k in state.joined.items() if p != process})
        return state


def unread(
    acked: Mapping[str, Collection[Hashable]], read: Mapping[str, Collection[Hashable]]
) -> dict[str, set[Hashable]]:
    """Per key, the acknowledged items (offsets or values) no read has returned yet."""
    missing = {key: set(items) - set(read.get(key, ())) for key, items in acked.items()}
    return {key: items for key, items in missing.items() if items}


def drain_complete(
    acked: Mapping[str, Collection[Hashable]], read: Mapping[str, Collection[Hashable]]
) -> bool:
    """Whether every acknowledged item of every key has been read.

    A lost write is never read, so a run with one drains until the final time
    limit; that costs time, never a wrong verdict.
    """
    return not unread(acked, read)


@dataclass(frozen=True, slots=True)
class DrainTracker:
    """Acknowledged, read and still-unread values per key, fed every completion.

    Values are unique per key, so tracking values is tracking offsets, and also
    covers acknowledgements that came without an offset. Only ``ok`` ops count:
    the checker's ``unseen`` is judged on ``ok`` reads of ``ok`` sends. Each
    ``observe`` costs the keys it touches, not the whole run, so the runner can
    call it on every completion.
    """

    acked: Mapping[str, frozenset[Any]] = field(default_factory=dict)
    read: Mapping[str, frozenset[Any]] = field(default_factory=dict)
    missing: Mapping[str, frozenset[Any]] = field(default_factory=dict)

    def observe(self, op: Op) -> DrainTracker:
        if op.get("type") != "ok" or op.get("f") not in ("send", "poll", "txn"):
            return self
        sent: dict[str, set[Any]] = {}
        got: dict[str, set[Any]] = {}
        for mop in op.get("value") or ():
            if mop[0] == "send":
                v = mop[2][1] if isinstance(mop[2], list) else mop[2]
                sent.setdefault(mop[1], set()).add(v)
            elif mop[0] == "poll" and len(mop) > 1:
                for key, records in mop[1].items():
                    if records:
                        got.setdefault(key, set()).update(value for _, value in records)
        if not sent and not got:
            return self
        acked, read, missing = dict(self.acked), dict(self.read), dict(self.missing)
        for key, vs in got.items():
            read[key] = read.get(key, frozenset()) | vs
        for key, vs in sent.items():
            acked[key] = acked.get(key, frozenset()) | vs
        for key in sent.keys() | got.keys():
            left = (missing.get(key, frozenset()) | (sent.get(key, set()) - read.get(
                key, frozenset()))) - got.get(key, set())
            if left:
                missing[key] = left
            else:
                missing.pop(key, None)
        return DrainTracker(acked, read, missing)

    @property
    def complete(self) -> bool:
        return not self.missing
