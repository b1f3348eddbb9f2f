"""Where a consumer reads next after an aborted transaction that read (docs/HISTORY.md,
"After an abort").

Kafka leaves a consumer's position alone when a transaction that consumed records
is aborted: seeking back is the application's job (KAFKA-17582), and Jepsen's
Redpanda and Bufstream analyses classify what consumers did instead. This pass
classifies, for each ``fail`` ``txn`` op that read records and each key it read,
the same process's next read of that key: an informational measure in the
verdict's ``stats``, which never changes ``valid``. Aborts whose completion says
``"reads-kept": true`` show the consumer's own behaviour; the others show the
client's seek back.

Offsets are sparse (transaction markers take offsets), so "the next record" is
judged on the records the history shows exist: every offset some poll returned
(any outcome, the drain included) and every offset an ``ok`` send was given.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.base import contract

#: ops whose value is micro-ops, and ops that set a process's keys (the contract's)
_MOPS = contract.mop_fs()
_ASSIGNS = contract.reset_fs()
_REBALANCE = frozenset({"assigned", "revoked"})
#: the classes, in the order the verdict lists them
CLASSES = ("rewinds-to-committed", "rewinds-to-abort-start", "rewinds-within",
           "rewinds-further", "carries-on", "skips", "unobserved")


@dataclass
class _Watch:
    """One (aborted op, key) waiting for its process's next read of the key."""

    key: str
    abort: int  # completion index of the aborted op
    kept: bool  # its completion said reads-kept
    first: int  # A: the first offset it read of the key
    last: int  # L: the last offset it read of the key
    group: Any
    own: int | None  # the process's last committed offset of the key, at the abort
    committed: set[int] = field(default_factory=set)  # candidates for "the committed offset"
    next: int | None = None  # F: the first offset of the next read
    poll: int | None = None  # the op that made it
    why: str = ""  # for an unobserved one: what ended the watch


@dataclass
class _Proc:
    """One process's state during the pass."""

    held: set[str] | None = None  # keys of its latest assign/subscribe (None: never)
    group: Any = None  # the group of its latest assign/subscribe
    position: dict[str, int] = field(default_factory=dict)  # key -> next offset, if known
    own: dict[str, int] = field(default_factory=dict)  # key -> its last committed offset
    watching: dict[str, _Watch] = field(default_factory=dict)
    invoke_group: Any = None  # the ``group`` field of its pending invoke
    #: watched key -> its group's latest committed offset when the pending op was invoked
    at_invoke: dict[str, int] = field(default_factory=dict)


@dataclass
class Rewinds:
    """The pass that classifies the next reads after aborts, fed one line at a time (file
    order), so that one pass over a history can feed it beside other measures
    (``checkers._measures``)."""

    procs: dict[int, _Proc] = field(default_factory=dict)
    #: (group, key) -> the latest committed offset (commits in completion order)
    group_last: dict[tuple[Any, str], int] = field(default_factory=dict)
    #: key -> every offset the history shows holding a record
    records: dict[str, set[int]] = field(default_factory=dict)
    done: list[_Watch] = field(default_factory=list)

    def feed(self, op: dict[str, Any]) -> None:
        """The next line of the history (file order)."""
        process = op.get("process")
        if type(process) is not int:
            return
        proc = self.procs.setdefault(process, _Proc())
        if op.get("type") == "invoke":
            proc.invoke_group = op.get("group")
            proc.at_invoke = {k: self.group_last[(w.group, k)] for k, w in proc.watching.items()
                              if (w.group, k) in self.group_last}
            return
        _completion(self, proc, op)

    def result(self) -> dict[str, Any]:
        """The ``abort-rewinds`` block of the lines fed so far: counts per class for aborts
        whose reads were kept (``kept``) and for the others (``sought``), and the first
        example of each. It ends the watches still open (the history ended), so it is
        taken once, at the end. Never raises on a well-formed history."""
        for proc in self.procs.values():
            for watch in proc.watching.values():
                _end(self, watch, "the process read the key no more")
        return _summary(self)


def _group(proc: _Proc, op: dict[str, Any]) -> Any:
    """The group of an op (docs/HISTORY-GROUPS.md): its own, else for assign/subscribe the
    default, else its process's latest assign/subscribe's."""
    own = op.get("group", proc.invoke_group)
    if own is not None or op.get("f") in _ASSIGNS:
        return own
    return proc.group


def _completion(run: Rewinds, proc: _Proc, op: dict[str, Any]) -> None:
    kind, f, value = op.get("type"), op.get("f"), op.get("value")
    if f in _ASSIGNS and kind in ("ok", "info") and isinstance(value, list):
        keys = {k for k in value if isinstance(k, str)}
        for k in [k for k in proc.watching if k not in keys]:
            _end(run, proc.watching.pop(k), f"an {f} without the key")
        before = proc.held
        proc.position = {k: o for k, o in proc.position.items()
                         if k in keys and (before is None or k in before)}
        proc.held, proc.group = keys, _group(proc, op)
        return
    if f not in _MOPS or not isinstance(value, list):
        return
    group = _group(proc, op)
    read: dict[str, tuple[int, int]] = {}  # key -> (first, last) offset this op read
    polled = committed = False
    for mop in value:
        if not isinstance(mop, list) or not mop:
            continue
        tag = mop[0]
        if tag == "poll" and len(mop) == 2 and isinstance(mop[1], dict):
            polled = True
            _poll(run, proc, op, mop[1], read)
        elif tag in _REBALANCE and len(mop) == 2 and isinstance(mop[1], list):
            for k in mop[1]:
                proc.position.pop(k, None)
                if k in proc.watching:
                    _end(run, proc.watching.pop(k), f"a {tag} micro-op")
        elif tag == "send" and kind == "ok" and len(mop) == 3 and isinstance(mop[2], list):
            run.records.setdefault(mop[1], set()).add(mop[2][0])
        elif tag == "commit" and len(mop) == 2 and isinstance(mop[1], dict):
            committed = True
            if kind == "ok":
                _commit(run, proc, group, mop[1])
    _positions(proc, op, read)
    if f == "txn" and kind == "ok" and polled and not committed:
        # the queue's transactions send the consumer's positions, unrecorded
        _commit(run, proc, group, dict(proc.position))
    if f == "txn" and kind == "fail":
        kept = op.get("reads-kept") is True
        for k, (first, last) in read.items():
            proc.watching[k] = _Watch(k, op["index"], kept, first, last, group,
                                      proc.own.get(k))


def _poll(run: Rewinds, proc: _Proc, op: dict[str, Any], result: dict[str, Any],
          read: dict[str, tuple[int, int]]) -> None:
    """One poll micro-op: it ends the watches of keys it returned, and adds its records."""
    for k, records in result.items():
        offsets = [r[0] for r in records if isinstance(r, list) and len(r) == 2
                   and isinstance(r[0], int)] if isinstance(records, list) else []
        if not offsets:
            continue
        run.records.setdefault(k, set()).update(offsets)
        watch = proc.watching.pop(k, None)
        if watch is not None:
            watch.next, watch.poll = offsets[0], op["index"]
            watch.committed = {c for c in (watch.own, proc.at_invoke.get(k)) if c is not None}
            run.done.append(watch)
        first = read[k][0] if k in read else offsets[0]
        read[k] = (first, offsets[-1])


def _positions(proc: _Proc, op: dict[str, Any], read: dict[str, tuple[int, int]]) -> None:
    """Where the consumer stands after the op: past what it read; after an abort, back at
    the first record it read (the client seeks there), or unknown if the reads were kept."""
    kind = op.get("type")
    for k, (first, last) in read.items():
        if kind != "fail":
            proc.position[k] = last + 1
        elif op.get("reads-kept") is True:
            proc.position.pop(k, None)
        else:
            proc.position[k] = first


def _commit(run: Rewinds, proc: _Proc, group: Any, offsets: dict[str, Any]) -> None:
    for k, c in offsets.items():
        if isinstance(k, str) and isinstance(c, int):
            proc.own[k] = c
            run.group_last[(group, k)] = c


def _end(run: Rewinds, watch: _Watch, why: str) -> None:
    watch.why = why
    run.done.append(watch)


def classify(watch: _Watch, records: list[int]) -> str:
    """The class of one observed watch; ``records``: the key's record offsets, sorted."""
    f = watch.next
    if f is None:
        return "unobserved"
    if f > watch.last:  # f is among the records: the first record past L is at most f
        i = bisect_left(records, watch.last + 1)
        return "carries-on" if i == len(records) or records[i] >= f else "skips"
    at = {records[i] for c in watch.committed
          if (i := bisect_left(records, c)) < len(records)}
    if f in at:
        return "rewinds-to-committed"
    if f == watch.first:
        return "rewinds-to-abort-start"
    return "rewinds-further" if f < watch.first else "rewinds-within"


def _summary(run: Rewinds) -> dict[str, Any]:
    out: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    sorted_records = {k: sorted(v) for k, v in run.records.items()}
    for watch in sorted(run.done, key=lambda w: (w.abort, w.key)):
        cls = classify(watch, sorted_records.get(watch.key, []))
        part = out.setdefault("kept" if watch.kept else "sought",
                              {"aborts": set(), "observations": 0})
        part["aborts"].add(watch.abort)
        part["observations"] += 1
        part[cls] = part.get(cls, 0) + 1
        if part[cls] == 1:
            examples.append(_example(watch, cls))
    for part in out.values():
        part["aborts"] = len(part["aborts"])
    return {**{name: out[name] for name in ("kept", "sought") if name in out},
            "examples": examples}


def _example(watch: _Watch, cls: str) -> dict[str, Any]:
    example: dict[str, Any] = {
        "class": cls, "kept": watch.kept, "key": watch.key, "abort": watch.abort,
        "first-read": watch.first, "last-read": watch.last}
    if watch.next is None:
        example["why"] = watch.why
    else:
        example |= {"poll": watch.poll, "next-read": watch.next,
                    "committed": sorted(watch.committed)}
    return example


def describe_rewinds(block: Mapping[str, Any]) -> str:
    """``after kept aborts (212): carries-on 230; after sought aborts (3): ...``: the
    classes an ``abort-rewinds`` block counts, in words; empty when it counts none."""
    parts = []
    for part in ("kept", "sought"):
        counts = block.get(part)
        if isinstance(counts, Mapping):
            named = ", ".join(f"{c} {counts[c]}" for c in CLASSES if counts.get(c))
            parts.append(f"after {part} aborts ({counts.get('aborts', 0)}): {named}")
    return "; ".join(parts)
