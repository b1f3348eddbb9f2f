"""The queue workload: sends, polls and transactions over a rolling set of partitions.

Keys are topic-partitions: key number ``n`` is partition ``n % partitions_per_topic``
of topic ``t{n // partitions_per_topic}`` (``t0-0``, ``t0-1``, ...). A few keys are
written at a time; once a key has taken ``max_writes_per_key`` sends (or its
partition stalls, below) it is retired and a fresh key takes its place, so
every log stays short (cheap to check) and a run exercises many partitions, as
Jepsen's Kafka workload does.

Values come from one counter for the whole run, so they are unique per key (and
globally): every value read traces back to the one send that wrote it. That
holds because the generator is a single chain of immutable states; never wrap
:class:`QueueGen` in ``each_thread`` or ``repeat``, which would copy or replay it.

A client reads only what it has been assigned, so a process that has not yet
joined the current key set (a new process after a crash, or any process after a
key was retired) first assigns (or subscribes to) the active keys. A join that
fails is tried again ``rejoin_ns`` later, and the process only sends meanwhile:
a join fails at once when a fresh key's topic cannot be created (replication
factor 3 with a broker down: ``INVALID_REPLICATION_FACTOR``), and retried at once
it kept every client thread in a loop of failing joins, no sends, for as long as
the broker was down (a 1.1 idempotence-off-duplicates run: 39,905 failed assigns
and 527 ok ops in its first 100 s).

Ops: ``send`` (1 to ``sends_per_op`` records, all to one key, as many as its
budget has left), ``poll`` (one micro-op), ``txn`` (1 to ``max_txn_len`` sends
and polls; each send writes 1 to ``sends_per_op`` records to its key, as a ``send`` op
does, so that a transaction carries as many records as a send op, over several
partitions: one record per transaction made a transactional run's rate that of its
commits; with ``--txn`` one that polls ends in ``["commit"]``, the consumer's
positions it commits, docs/HISTORY-GROUPS.md), ``assign`` (a random non-empty subset
of the active keys; with ``--txn`` from the group's committed offsets, ``"seek":
"committed"``), ``subscribe`` (the active keys; the runner subscribes to their topics),
``crash``. A ``crash`` op asks the runner to close the client and complete the op ``info``;
the thread then goes on as a fresh process, which joins before it reads.

A stalled partition must not stall the run: a client thread waits for its op
until the op's timeout, so if every thread could pick a stuck key, every thread
would soon be stuck. So at most ``writers_per_key`` ops that send to one key
are in flight at once, and only one until a send to the key has succeeded (a
fresh key may well sit on a stalled partition); a send op goes to a key below
its bound, and when every key is at it the thread polls instead (or waits, if
it may not poll).
Sends stay one key per op for the same reason: an op that spans keys is as
slow as its slowest partition. And a key whose send has been in flight for
``stall_ns`` is retired early, as if its budget were spent: otherwise stalled
keys, which never spend their budget, would pile up in the active set until no
healthy key is left to write. A key a send op was refused on (``fail``: nothing
written, e.g. its topic cannot be created while a broker is down) rests for
``refused_ns`` before it takes another send, as a producer backs off; it keeps
its budget (nothing was written), and meanwhile the threads write other keys or read.

The final drain is in ``workloads.queue.drain``. Pure: no clock, no I/O, no
global randomness, so the simulator tests it (``tests/workloads/queue``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.base.history import Op, Process
from harness.gen.core import PENDING, Context, Gen, Pending, Rng, Step
from workloads.queue.shape import (
    OFFSET_RESET,
    OPS,
    TXN_GROUP,
    QueueOptions,
    group_name,
    key_name,
)


@dataclass(frozen=True, slots=True)
class QueueGen(Gen):
    """The main-phase client generator of the queue workload (one immutable state).

    ``writing``: for each process with an op in flight that sends, when it was
    asked for and the keys it sends to (for ``writers_per_key`` and ``stall_ns``);
    ``proven``: the active keys a send op has succeeded on (they take more than
    one writer); ``rejoin_at``: for a process whose join failed, when it may join again;
    ``resting``: for a key a send was refused on, until when it takes no send
    (``refused_ns``).
    """

    opts: QueueOptions
    active: tuple[int, ...]
    writes: Mapping[int, int]
    next_key: int
    next_value: int = 0
    epoch: int = 0
    joined: Mapping[Process, int] = field(default_factory=dict)
    writing: Mapping[Process, tuple[int, frozenset[str]]] = field(default_factory=dict)
    proven: frozenset[str] = frozenset()
    next_crash: int | None = None  # when the next timed crash is due (client_life_ns)
    rejoin_at: Mapping[Process, int] = field(default_factory=dict)
    resting: Mapping[str, int] = field(default_factory=dict)
    next_read: int = 0  # when the next periodic committed read is due (committed_every_ns)
    reads: int = 0  # periodic committed reads so far (which group is next)

    def _with(self, **changes: Any) -> QueueGen:
        """This state with ``changes``: ``dataclasses.replace`` without its per-call field
        introspection, which cost ~10 us, several times per op, on the dispatch path."""
        get = changes.get
        return QueueGen(get("opts", self.opts), get("active", self.active),
                        get("writes", self.writes), get("next_key", self.next_key),
                        get("next_value", self.next_value), get("epoch", self.epoch),
                        get("joined", self.joined), get("writing", self.writing),
                        get("proven", self.proven), get("next_crash", self.next_crash),
                        get("rejoin_at", self.rejoin_at), get("resting", self.resting),
                        get("next_read", self.next_read), get("reads", self.reads))

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
        rng = ctx.rng.fork(1)  # the caller's share of ctx.split(); the child's is not needed
        i, rng = rng.below(len(free))
        process = ctx.workers[free[i]]
        state = self._retire_stalled(ctx.time)
        if state.opts.client_life_ns is not None:
            due = state.next_crash
            if due is None or ctx.time >= due:
                gap = state._crash_gap(ctx, rng.fork(2))
                state = state._with(next_crash=ctx.time + gap)
                if due is not None:  # a client's time is up (the first call only schedules)
                    return self._invoke(ctx, process, "crash", None, state)
        every = state.opts.committed_every_ns
        first = state.opts.join_from_ns
        reads = state.opts.groups or state.opts.txn
        if every is not None and reads and ctx.time >= max(state.next_read, first):
            return state._committed_read(ctx, process, every)
        if state.joined.get(process) != state.epoch:
            # its join failed (send meanwhile), or members do not join yet
            retry = max(state.rejoin_at.get(process, 0), first)
            if ctx.time < retry:
                return state._main_op(ctx, process, rng, until=retry)
            value = sorted(map(state.key, state.active))  # a past rejoin_at is inert
            return self._invoke(ctx, process, state.opts.consume, value,
                                state._with(joined={**state.joined, process: state.epoch}))
        return state._main_op(ctx, process, rng)

    def _committed_read(self, ctx: Context, process: Process, every: int) -> Step:
        """The next group's periodic ``committed`` op, over the active keys (with ``txn``,
        the one group transactions commit to)."""
        group = TXN_GROUP if self.opts.txn else f"g{self.reads % self.opts.groups}"
        op = {"process": process, "time": ctx.time, "type": "invoke", "f": "committed",
              "value": [["committed", sorted(map(self.key, self.active))]], "group": group}
        return op, self._with(next_read=ctx.time + every, reads=self.reads + 1)

    def _crash_gap(self, ctx: Context, rng: Rng) -> int:
        """Nanoseconds to the next timed crash: uniform from 0 to twice the mean gap, which
        is a client's mean life over the client threads (each lives that long, on average)."""
        clients = max(1, sum(1 for t in ctx.threads if isinstance(t, int)))
        assert self.opts.client_life_ns is not None
        span = max(1, 2 * self.opts.client_life_ns // clients)
        return rng.below(span)[0]

    def _main_op(self, ctx: Context, process: Process, rng: Rng,
                 until: int | None = None) -> Step:
        """A drawn op for a process that has joined the current keys, or, ``until`` it may
        join again, a send (nothing to do if no key is open: ask again then)."""
        keys, rest = self._awake(self._open(), ctx.time)
        # no open key: every key has its writers (or rests), so do something else
        weights = (self.opts.send_weights if until is not None
                   else self.opts.draw_weights[0 if keys else 1])
        if (not keys and until is not None) or sum(weights) <= 0:
            # it may only send, and cannot: ask again when a writer finishes, a key rests
            # out, or it may rejoin
            wake = min((t for t in (until, rest) if t is not None), default=None)
            return (PENDING if wake is None else Pending(wake)), self
        k, rng = rng.weighted(weights)
        f = OPS[k]
        value, state = self._value(f, rng, keys)
        if f == "send":  # one key per send op
            written: frozenset[str] | None = frozenset((value[0][1],)) if value else None
        elif f == "txn":
            written = frozenset(m[1] for m in value if m[0] == "send")
        else:
            written = None
        if written:
            state = state._with(writing={**state.writing, process: (ctx.time, written)})
        return self._invoke(ctx, process, f, value, state)

    @staticmethod
    def _invoke(ctx: Context, process: Process, f: str, value: Any, state: QueueGen) -> Step:
        """The invoke of ``f``; a recorded member's ``subscribe`` (every one, drawn or a
        join) names its group and ``reset`` (docs/HISTORY-GROUPS.md), and so does, with
        ``txn``, every ``assign`` (with ``"seek": "committed"``) and ``subscribe``."""
        op = {"process": process, "time": ctx.time, "type": "invoke", "f": f, "value": value}
        if f == "subscribe" and state.opts.groups and isinstance(process, int):
            op["group"] = group_name(process, state.opts.groups)
            op["reset"] = OFFSET_RESET
            if state.opts.auto_commit:
                op["auto-commit"] = True
        elif state.opts.txn and f in ("assign", "subscribe"):
            op["group"] = TXN_GROUP
            op["reset"] = OFFSET_RESET
            if f == "assign":
                op["seek"] = "committed"
        return op, state

    def _open(self) -> list[int]:
        """The active keys another op may send to: fewer than ``writers_per_key`` ops
        send to them, and none yet if no send to them has succeeded."""
        cap = self.opts.writers_per_key
        if cap is None or not self.writing:
            return list(self.active)
        writers: dict[str, int] = {}
        for _, keys in self.writing.values():
            for key in keys:
                writers[key] = writers.get(key, 0) + 1
        return [n for n in self.active
                if writers.get(k := self.key(n), 0) < (cap if k in self.proven else 1)]

    def _awake(self, keys: list[int], now: int) -> tuple[list[int], int | None]:
        """Those of ``keys`` that do not rest now, and when the first that rests may take
        sends again (None if none rests: the usual case, no refusal lately)."""
        if not self.resting:
            return keys, None
        awake: list[int] = []
        ends: list[int] = []
        for n in keys:
            until = self.resting.get(self.key(n), 0)
            if until > now:
                ends.append(until)
            else:
                awake.append(n)
        return awake, min(ends, default=None)

    def _rest(self, mops: Any, now: int) -> QueueGen:
        """The keys of a refused send op take no send for ``refused_ns``: sent to again at
        once, a key whose topic Kafka would not create took a refused send on every op
        its one writer drew (4,865 of them in one 2.8 controller-failover run)."""
        if self.opts.refused_ns is None:
            return self
        until = now + self.opts.refused_ns
        resting = {k: t for k, t in self.resting.items() if t > now}  # the rest are over
        for mop in mops:
            if mop[0] == "send":
                resting[mop[1]] = until
        return self._with(resting=resting)

    def _retire_stalled(self, now: int) -> QueueGen:
        """Retire every active key a send has been stuck on for ``stall_ns``: its
        partition is stalled (a fault), and fresh keys keep the writes flowing."""
        if self.opts.stall_ns is None or not self.writing:
            return self
        since = now - self.opts.stall_ns
        if min(start for start, _ in self.writing.values()) > since:
            return self  # nothing stuck yet: the usual case, asked every op
        stuck = {key for start, keys in self.writing.values() if start <= since for key in keys}
        state = self
        for n in self.active:
            if (key := self.key(n)) in stuck and key not in self.opts.pinned:
                state = state._retire(n)
        return state

    def _value(self, f: str, rng: Rng, keys: list[int]) -> tuple[Any, QueueGen]:
        """The value of an ``f`` op and the state after it; ``keys``: the open keys."""
        state = self
        if f == "send":
            n = keys[rng.below(len(keys))[0]]
            count, rng = rng.below(self.opts.sends_per_op)
            return state._write(n, count + 1)
        if f == "poll":
            commits = self.opts.groups and not self.opts.auto_commit
            return ([["poll"], ["commit"]] if commits else [["poll"]]), state
        if f == "txn":
            n, rng = rng.below(self.opts.max_txn_len)
            mops: list[list[Any]] = []
            polls = False
            for j in range(n + 1):
                x, rng = rng.random()
                keys = state._open() if x < self.opts.txn_send_ratio else []
                if keys:  # a key its own earlier sends chose counts once: still open
                    key, pick = rng.fork(j).below(len(keys))
                    count, _ = pick.below(self.opts.sends_per_op)
                    sent, state = state._write(keys[key], count + 1)
                    mops += sent
                else:
                    mops.append(["poll"])
                    polls = True
            if polls and self.opts.txn:  # it commits the positions its reads moved
                mops.append(["commit"])
            return mops, state
        if f == "assign":
            picks = [n for j, n in enumerate(self.active) if rng.fork(j).below(2)[0]]
            chosen = picks or [self.active[rng.below(len(self.active))[0]]]
            return sorted(map(self.key, chosen)), state
        if f == "subscribe":
            return sorted(map(self.key, self.active)), state
        return None, state  # crash

    def _write(self, n: int, count: int) -> tuple[list[list[Any]], QueueGen]:
        """``count`` sends to key ``n`` (fewer if its budget runs out first), fresh values."""
        count = min(count, self.opts.max_writes_per_key - self.writes[n])
        key = self.key(n)
        first = self.next_value
        mops: list[list[Any]] = [["send", key, value] for value in range(first, first + count)]
        state = self._with(writes={**self.writes, n: self.writes[n] + count},
                        next_value=self.next_value + count)
        if state.writes[n] >= self.opts.max_writes_per_key:  # budget spent
            state = state._retire(n)
        return mops, state

    def _retire(self, n: int) -> QueueGen:
        """Key ``n`` takes no more sends; the next fresh key takes its place."""
        writes = {k: w for k, w in self.writes.items() if k != n}
        writes[self.next_key] = 0
        return self._with(active=(*(k for k in self.active if k != n), self.next_key),
                       writes=writes, next_key=self.next_key + 1, epoch=self.epoch + 1,
                       proven=self.proven - {self.key(n)})

    def _refund(self, mops: Any) -> QueueGen:
        """Give back the budget of a ``fail``ed send op's records to keys still active:
        ``fail`` means none of them was written. Spent at once, a refused send used up
        its key: a 2.8 controller-failover run, whose fresh keys' topics could not be
        created while a broker was down, went through 56 keys in 34 s, each one refused
        at once, and nothing was written to the keys already there."""
        refund: dict[str, int] = {}
        for mop in mops:
            if mop[0] == "send":
                refund[mop[1]] = refund.get(mop[1], 0) + 1
        writes = dict(self.writes)
        for n in self.active:
            back = refund.get(self.key(n))
            if back:
                writes[n] = max(0, writes[n] - back)
        return self._with(writes=writes)

    def update(self, ctx: Context, event: Op) -> Gen:
        """Forget a finished op's writers, and a process that failed to join (it must join
        again, ``rejoin_ns`` later) or was retired; a failed send's records no longer count
        against their key's budget."""
        process = event.get("process")
        kind = event.get("type")
        if kind == "invoke" or process is None:
            return self
        state = self
        if process in self.writing:
            proven = self.proven
            written = self.writing[process][1]
            if kind == "ok" and not written <= proven:
                active = {self.key(n) for n in self.active}
                proven = proven | (written & active)
            state = state._with(proven=proven, writing={p: k for p, k in self.writing.items()
                                                        if p != process})
        if kind == "fail" and event.get("f") == "send":
            mops = event.get("value") or ()
            state = state._refund(mops)._rest(mops, ctx.time)
        failed_join = kind == "fail" and event.get("f") in ("assign", "subscribe")
        if (failed_join or kind == "info") and process in self.joined:
            state = state._with(joined={p: e for p, e in self.joined.items() if p != process})
        if failed_join and self.opts.rejoin_ns:
            state = state._with(rejoin_at={**state.rejoin_at,
                                           process: ctx.time + self.opts.rejoin_ns})
        elif kind == "info" and process in self.rejoin_at:  # retired: never joins again
            state = state._with(rejoin_at={p: t for p, t in self.rejoin_at.items()
                                           if p != process})
        return state
