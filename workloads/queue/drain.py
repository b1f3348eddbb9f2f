"""The queue workload's final drain, and how the runner knows it is done.

:class:`Drain` re-assigns every key that ever appeared, from the beginning, and
polls; the runner stops it when the :class:`DrainTracker` it feeds every
completion says every acknowledged value has been read again, or at
``--final-time-limit``. Pure, like the generator: tested by simulation.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.base.contract import mop_fs
from harness.base.history import Op, Process
from harness.gen.core import PENDING, Context, Gen, Step
from workloads.queue.shape import keys_of


@dataclass(frozen=True, slots=True)
class Drain(Gen):
    """The final drain: every key ever seen is re-read from the start, by one client.

    The keys are dealt out over the client threads (sorted keys, every n-th to
    the same thread), so each is read once: when every client re-read every
    key, twelve consumers parsed each record twelve times on a 2-core machine,
    and a 150 s scenario's drain left 378,884 acknowledged values unread after
    60 s. A lost write is lost to all of them alike, so one reader per key
    decides the same verdict.

    A process that did anything before the drain first crashes (a ``crash`` op): its
    consumer is closed and its thread goes on as a fresh process, which
    assigns its share of the keys with ``"seek": "beginning"`` (a hint for the
    runner) and polls. A thread whose share is empty (more threads than keys)
    does nothing. Re-reading under the *old* process number would make the checker see
    its polls jump backwards (``nonmonotonic-poll``), since an assign keeps the
    positions of the keys it lists.

    Before any of that, a run whose members commit (``groups``, docs/HISTORY-GROUPS.md)
    reads each group's committed offsets of every key once: a ``committed`` op per
    group, on whichever client threads are free, and the re-read starts only once all
    of them have completed. The contract wants these reads after the heal and before
    the drain, since reads after an observation never justify it.

    It learns keys and processes from the events of earlier phases (``phases``
    passes them on). Endless by itself: bound it with ``time_limit``; the runner
    stops earlier once :func:`drain_complete` holds.
    """

    keys: frozenset[str] = frozenset()
    joined: Mapping[Process, frozenset[str]] = field(default_factory=dict)
    old: frozenset[Process] = frozenset()
    started: bool = False
    groups: tuple[str, ...] = ()
    asked: int = 0  # how many of ``groups`` have had their committed read invoked
    reading: frozenset[Process] = frozenset()  # processes whose committed read is out

    def op(self, ctx: Context) -> Step:
        if not self.keys:
            return None  # nothing was ever written or read: nothing to drain
        state = self if self.started else replace(self, started=True)
        shares = state.shares(ctx)
        if state.asked < len(state.groups) or state.reading:
            return state._committed_read(ctx, shares)
        free = [t for t in ctx.free_threads()
                if t in shares and (shares[t] or ctx.workers[t] in state.old)]
        if not free:
            return PENDING, state
        i, _ = ctx.rng.below(len(free))
        process = ctx.workers[free[i]]
        share = shares[free[i]]
        base = {"process": process, "time": ctx.time, "type": "invoke"}
        if process in state.old:
            return {**base, "f": "crash", "value": None}, replace(state, old=state.old - {process})
        if state.joined.get(process) != share:
            op = {**base, "f": "assign", "value": sorted(share), "seek": "beginning"}
            return op, replace(state, joined={**state.joined, process: share})
        return {**base, "f": "poll", "value": [["poll"]]}, state

    def _committed_read(self, ctx: Context, shares: Mapping[Any, frozenset[str]]) -> Step:
        """The next group's ``committed`` op on a free client thread, or wait for them all."""
        free = [t for t in ctx.free_threads() if t in shares]
        if self.asked >= len(self.groups) or not free:
            return PENDING, self
        process = ctx.workers[free[ctx.rng.below(len(free))[0]]]
        group = self.groups[self.asked]
        op = {"process": process, "time": ctx.time, "type": "invoke", "f": "committed",
              "value": [["committed", sorted(self.keys)]], "group": group}
        return op, replace(self, asked=self.asked + 1, reading=self.reading | {process})

    def shares(self, ctx: Context) -> dict[Any, frozenset[str]]:
        """Client thread → the keys it re-reads: every n-th of the sorted keys."""
        clients = sorted(t for t in ctx.threads if isinstance(t, int))
        keys = sorted(self.keys)
        return {t: frozenset(keys[i::len(clients)]) for i, t in enumerate(clients)}

    def update(self, ctx: Context, event: Op) -> Gen:
        state = self
        # A send's completion names the keys its invoke named: only invokes and reads count.
        sent = event.get("f") == "send" and event.get("type") != "invoke"
        new = () if sent else keys_of(event) - self.keys
        if new:
            state = replace(state, keys=self.keys | new)
        process = event.get("process")
        if process in self.reading and event.get("type") != "invoke":
            state = replace(state, reading=state.reading - {process})
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


#: Completions a :class:`DrainTracker` holds before folding them into its sets.
FOLD_EVERY = 256

#: What one ``ok`` completion adds: values acknowledged and values read, per key, and the
#: highest offset read per key.
_Seen = tuple[dict[str, set[Any]], dict[str, set[Any]], dict[str, int]]
#: Per key, values as a sorted ``int64`` array: 8 bytes a value, where a ``frozenset`` of
#: ints took about 120 (and the run's memory grew by 860 bytes per history line with it).
_Arrays = Mapping[str, "npt.NDArray[np.int64]"]
_Sets = Mapping[str, frozenset[Any]]
_Tops = Mapping[str, int]
_EMPTY: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)


def _ints(values: set[Any]) -> npt.NDArray[np.int64]:
    return np.fromiter(values, dtype=np.int64, count=len(values))


def _seen(op: Op) -> _Seen | None:
    """The values an ``ok`` send, poll or txn acknowledged and read; None if nothing."""
    if op.get("type") != "ok" or op.get("f") not in mop_fs():
        return None
    if op["f"] == "send" and op.get("value"):  # the common op: one key, kept cheap
        mops = op["value"]
        key = mops[0][1]
        if all(mop[1] == key for mop in mops):
            return {key: {v[1] if isinstance(v, list) else v for _, _, v in mops}}, {}, {}
    sent: dict[str, set[Any]] = {}
    got: dict[str, set[Any]] = {}
    tops: dict[str, int] = {}
    for mop in op.get("value") or ():
        if mop[0] == "send":
            v = mop[2][1] if isinstance(mop[2], list) else mop[2]
            sent.setdefault(mop[1], set()).add(v)
        elif mop[0] == "poll" and len(mop) > 1:
            for key, records in mop[1].items():
                if records:
                    got.setdefault(key, set()).update(value for _, value in records)
                    top = max(offset for offset, _ in records)
                    tops[key] = max(top, tops.get(key, top))
    return (sent, got, tops) if sent or got else None


_Folded = tuple[_Arrays, _Arrays, _Arrays, _Tops]


def _fold(acked: _Arrays, read: _Arrays, missing: _Arrays, reached: _Tops,
          batch: tuple[_Seen, ...]) -> _Folded:
    """``acked``, ``read``, ``missing`` and ``reached`` after ``batch`` (oldest first), each
    touched key's arrays made once for the whole batch (never changed in place: a
    tracker stays a value)."""
    sent: dict[str, set[Any]] = {}
    got: dict[str, set[Any]] = {}
    new_reached = dict(reached)
    for s, g, tops in batch:
        for key, vs in s.items():
            sent.setdefault(key, set()).update(vs)
        for key, vs in g.items():
            got.setdefault(key, set()).update(vs)
        for key, top in tops.items():
            new_reached[key] = max(top, new_reached.get(key, top))
    new_acked, new_read, new_missing = dict(acked), dict(read), dict(missing)
    for key, vs in got.items():
        new_read[key] = np.union1d(new_read.get(key, _EMPTY), _ints(vs))
    for key, vs in sent.items():
        new_acked[key] = np.union1d(new_acked.get(key, _EMPTY), _ints(vs))
    for key in sent.keys() | got.keys():
        # (acked | sent) - (read | got) = (missing - got) | (sent - every read):
        # read covers reads before and after the ack
        left = new_missing.get(key, _EMPTY)
        if key in got and left.size:
            left = np.setdiff1d(left, _ints(got[key]), assume_unique=True)
        if key in sent:
            fresh = _ints(sent[key])
            if key in new_read:
                fresh = np.setdiff1d(fresh, new_read[key], assume_unique=True)
            left = np.union1d(left, fresh)
        if left.size:
            new_missing[key] = left
        else:
            new_missing.pop(key, None)
    return new_acked, new_read, new_missing, new_reached


def _as_sets(arrays: _Arrays) -> _Sets:
    return {key: frozenset(values.tolist()) for key, values in arrays.items()}


@dataclass(frozen=True, slots=True)
class DrainTracker:
    """Acknowledged, read and still-unread values per key, fed every completion.

    Values are unique per key, so tracking values is tracking offsets, and also
    covers acknowledgements that came without an offset. Only ``ok`` ops count:
    the checker's ``unseen`` is judged on ``ok`` reads of ``ok`` sends.

    The runner calls ``observe`` on every completion, so it must cost the op, not
    the run: a key's sets hold thousands of values, and copying them for every op
    was a quarter of the interpreter's time per op. So ``observe`` only notes what
    the op acknowledged and read, and every :data:`FOLD_EVERY` completions (or when
    asked for ``acked``, ``read``, ``missing`` or ``complete``) the notes are folded
    into the sets, each key copied once per fold; once asked, the next tracker
    starts from that fold (the drain asks after every op). Still a value: a tracker
    never changes, what a fold computes is cached in it. ``reads`` counts the
    completions that returned records, without a fold: the runner's measure of
    whether the drain is still reading.

    A key's values are kept as one sorted ``int64`` array (the generator's values
    are ints), not a set: the tracker holds every value acknowledged since the
    start, so what it costs per value is what the run's memory grows by per op.
    """

    folded: _Folded = ({}, {}, {}, {})
    notes: tuple[_Seen, ...] = ()
    _cache: list[_Folded] = field(default_factory=list, compare=False, repr=False)
    reads: int = 0

    def observe(self, op: Op) -> DrainTracker:
        seen = _seen(op)
        if seen is None:
            return self
        reads = self.reads + 1 if seen[1] else self.reads
        if self._cache:  # folded already (someone asked): start from there
            return DrainTracker(self._cache[0], (seen,), reads=reads)
        notes = (*self.notes, seen)
        if len(notes) >= FOLD_EVERY:
            return DrainTracker(_fold(*self.folded, notes), reads=reads)
        return DrainTracker(self.folded, notes, reads=reads)

    def _sets(self) -> _Folded:
        if not self.notes:
            return self.folded
        if not self._cache:
            self._cache.append(_fold(*self.folded, self.notes))
        return self._cache[0]

    @property
    def acked(self) -> _Sets:
        """Per key, every value an ``ok`` send acknowledged (a copy as sets: for reading)."""
        return _as_sets(self._sets()[0])

    @property
    def read(self) -> _Sets:
        """Per key, every value an ``ok`` read returned."""
        return _as_sets(self._sets()[1])

    @property
    def missing(self) -> _Sets:
        """Per key, the acknowledged values no ``ok`` read has returned yet."""
        return _as_sets(self._sets()[2])

    @property
    def reached(self) -> _Tops:
        """Per key, the highest offset an ``ok`` read returned."""
        return self._sets()[3]

    @property
    def complete(self) -> bool:
        return not self._sets()[2]

    def unread_keys(self) -> frozenset[str]:
        """The keys with acknowledged values still to be read."""
        return frozenset(self._sets()[2])

    def read_to(self, ends: Mapping[str, int | None]) -> bool:
        """Whether every key with values still unread has been read to its end: an ``ok``
        read returned the offset just below ``ends[key]`` (the key's end offset; None:
        unknown). Reads go through a log in order, so such a key's log holds none of its
        unread values (``harness.run.drain_end`` decides when the ends are to be trusted).
        """
        reached = self.reached
        for key in self._sets()[2]:
            end = ends.get(key)
            if end is None or reached.get(key, -1) < end - 1:
                return False
        return True

    def unread_count(self) -> int:
        """How many acknowledged values are still to be read."""
        return sum(v.size for v in self._sets()[2].values())

    def reread(self) -> DrainTracker:
        """The tracker for the drain: every value acknowledged so far must be read *again*.

        The drain is a re-read from the beginning, so it must find everything
        itself, not merely what earlier polls happened to see.
        """
        acked = self._sets()[0]
        missing = {key: values for key, values in acked.items() if values.size}
        return DrainTracker((acked, {}, missing, {}))
