"""The read_committed stall: how long the readers of a partition that had read all they
could made no progress while committed writes beyond it existed (docs/HISTORY.md,
"Read stalls").

A transaction that is never ended (KAFKA-12671's hanging transaction) holds the
partition's last stable offset below it for good, and read_committed consumers
read nothing past it; the history shows it only as later committed writes that no
read returns. This is a liveness measure, not an anomaly: it goes in the verdict's
``stats`` and never changes ``valid``. It is taken only on a history that holds a
``txn`` op, because only a transactional run's readers are read_committed
(``workloads/queue/config.py``); a read_uncommitted reader is held by the high
watermark, not by a transaction.

Per key, with ``P`` the highest offset any poll of the key has returned:

- a *committed write* is a send of an ``ok`` op, with its offset, from its completion on;
- a *caught-up poll* is a poll (any outcome) by a process that reads the key (its latest
  ``assign``/``subscribe`` lists it, or it never assigned; a group member's ``assigned``
  and ``revoked`` micro-ops add and remove keys, HISTORY-GROUPS.md) and had itself read
  the key up to ``P`` since it last gained it. A poll op in which the process gained or
  lost the key proves nothing of it. A process still reading older records (a fresh
  assignment starts at the beginning) or one that left the key is busy elsewhere and
  proves nothing; so does every poll of a key that no poll has read yet, because a
  reader that has returned nothing of a key may not be fetching it yet (a fresh
  assignment waits for its start offset: the queue workload's ``Reader.assign``);
- a caught-up poll that returns nothing past ``P``, invoked after a committed write
  beyond ``P`` completed, is a *stalled poll*. A stall is the run of stalled polls
  between two reads that move ``P``. It starts at the later of the first committed
  write it held back (the lowest offset beyond ``P``) and the read that last moved
  ``P``; its length runs to its last stalled poll (what the history proves); it was
  ended by the next read past ``P``, or by nothing: "until the end of the run".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checkers._input import open_history, open_source, parse_lines
from harness.base import contract

#: ns per second (history times are ns)
_NS = 1_000_000_000
#: ops whose value is micro-ops, and ops that set a process's keys (the contract's)
_READS = contract.mop_fs()
_ASSIGNS = contract.reset_fs()


@dataclass
class _Key:
    """One key's reading state during the pass."""

    #: highest offset any poll has returned (-1: none yet)
    read_to: int = -1
    #: committed writes beyond ``read_to``: offset -> (value, op, commit time)
    beyond: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    #: time of the last read that moved ``read_to``, and its op
    moved_at: int = 0
    moved_by: int | None = None
    #: the stall in progress: (start, held-back example, first, last stalled poll, polls)
    open: dict[str, Any] | None = None
    longest: dict[str, Any] | None = None
    count: int = 0


@dataclass
class Stalls:
    """The pass that measures stalls, fed one line at a time (file order), so that one
    pass over a history can feed it beside other measures (``checkers._measures``)."""

    keys: dict[str, _Key] = field(default_factory=dict)
    #: process -> keys its latest assign/subscribe listed (absent: never assigned)
    assigned: dict[int, set[str]] = field(default_factory=dict)
    #: process -> key -> the highest offset it has read there since it was assigned it
    position: dict[int, dict[str, int]] = field(default_factory=dict)
    #: process -> the time its pending op was invoked
    invoked: dict[int, int] = field(default_factory=dict)

    def feed(self, op: dict[str, Any]) -> None:
        """The next line of the history (file order)."""
        process, kind, f = op.get("process"), op.get("type"), op.get("f")
        if type(process) is not int:
            return
        if kind == "invoke":
            self.invoked[process] = op["time"]
            return
        value = op.get("value")
        if f in _ASSIGNS and kind in ("ok", "info") and isinstance(value, list):
            keep = set(value)
            self.assigned[process] = keep
            held = self.position.get(process, {})
            self.position[process] = {k: o for k, o in held.items() if k in keep}
        elif f in _READS and isinstance(value, list):
            _op(self, op, value, kind == "ok")

    def result(self) -> dict[str, Any]:
        """The ``read-committed-stalls`` block of the lines fed so far; it closes the stalls
        still open (they lasted until the end of the run), so it is taken once, at the end.

        ``longest-s`` is the longest stall of any key; ``stalls`` has each stalled key's
        longest stall, longest first (with ``stalls``, how many that key had). Never
        raises on a well-formed history (the caller has already judged the format).
        """
        stalls = []
        for k, state in self.keys.items():
            if state.open is not None:
                _close(state, None, None)
            if state.longest is not None:
                stalls.append({"key": k, **state.longest, "stalls": state.count})
        stalls.sort(key=lambda s: (-s["seconds"], s["key"]))
        return {"longest-s": stalls[0]["seconds"] if stalls else 0.0, "stalls": stalls}


def _op(run: Stalls, op: dict[str, Any], value: list[Any], ok: bool) -> None:
    """One completion: its reads (they ran before its commit), then its committed sends."""
    index, time, process = op["index"], op["time"], op["process"]
    read: dict[str, int] = {}
    polled = False
    for mop in value:
        if type(mop) is list and len(mop) == 2 and mop[0] == "poll" and type(mop[1]) is dict:
            polled = True
            for k, records in mop[1].items():
                tops = [r[0] for r in records if isinstance(r, list) and len(r) == 2]
                if tops:
                    read[k] = max(read.get(k, -1), *tops)
    moved = _rebalance(run, process, value)
    if polled:
        invoked = run.invoked.get(process, time)
        reads = run.assigned.get(process)
        position = run.position.setdefault(process, {})
        for k in (run.keys.keys() if reads is None else reads | read.keys()):
            state = run.keys.get(k)
            if state is not None and k not in moved:
                _poll(state, position.get(k, -1), read.get(k, -1), index, invoked, time)
        for k, top in read.items():
            run.keys.setdefault(k, _Key())
            if top > position.get(k, -1):
                position[k] = top
            if top > run.keys[k].read_to:
                _moved(run.keys[k], top, index, time)
    if ok:
        for mop in value:
            if isinstance(mop, list) and len(mop) == 3 and mop[0] == "send":
                sent = mop[2]
                if isinstance(sent, list) and len(sent) == 2:
                    state = run.keys.setdefault(mop[1], _Key())
                    if sent[0] > state.read_to:
                        state.beyond[sent[0]] = (sent[1], index, time)


def _rebalance(run: Stalls, process: int, value: list[Any]) -> set[str]:
    """Apply the op's ``assigned``/``revoked`` micro-ops to the process's keys, and return
    the keys they name. A member's ``subscribe`` lists every key of its topics, and only
    these micro-ops say which it holds: without them a member that lost a key would go on
    "proving" a stall of it with every later poll. A key gained starts with no position
    (the member starts it at the group's committed offset, which may be below ``P``)."""
    moved: set[str] = set()
    for mop in value:
        if (type(mop) is list and len(mop) == 2 and mop[0] in ("assigned", "revoked")
                and type(mop[1]) is list):
            keys = {k for k in mop[1] if isinstance(k, str)}
            moved |= keys
            held = run.assigned.setdefault(process, set())
            position = run.position.setdefault(process, {})
            for k in keys:
                position.pop(k, None)
            if mop[0] == "assigned":
                held |= keys
            else:
                held -= keys
    return moved


def _poll(  # noqa: PLR0917 - once per poll and key read: no kwargs
    state: _Key, position: int, top: int, index: int, invoked: int, time: int
) -> None:
    """A poll by a process reading this key, at ``position`` on it, returned up to ``top``."""
    if top > state.read_to or position < state.read_to or state.read_to < 0 or not state.beyond:
        return  # it moved the key on, was busy behind, or nothing waited (or nothing was read)
    offset = min(state.beyond)
    v, op, committed = state.beyond[offset]
    if committed > invoked:
        return  # the write was committed while this poll ran: no proof
    stall = state.open
    if stall is None:
        stall = state.open = {
            "start": max(committed, state.moved_at),
            "held-back": {"offset": offset, "value": v, "op": op},
            "last-progress": state.moved_by,
            "polls": 0,
            "first-poll": index,
        }
    stall["polls"] += 1
    stall["last-poll"], stall["last-poll-time"] = index, time


def _moved(state: _Key, top: int, index: int, time: int) -> None:
    """A read past ``read_to``: it ends the stall in progress."""
    if state.open is not None:
        _close(state, index, time)
    state.read_to = top
    state.moved_at, state.moved_by = time, index
    state.beyond = {o: w for o, w in state.beyond.items() if o > top}


def _close(state: _Key, index: int | None, time: int | None) -> None:
    """The stall in progress ends, at read ``index`` (None: at the end of the run)."""
    stall, state.open = state.open, None
    if stall is None:
        return
    start, proven = stall.pop("start"), stall.pop("last-poll-time")
    seconds = round(max(0, proven - start) / _NS, 3)
    state.count += 1
    if state.longest is not None and state.longest["seconds"] >= seconds:
        return
    state.longest = {
        "seconds": seconds,
        "start-s": round(start / _NS, 3),
        "end-s": round(proven / _NS, 3),
        "until-end": time is None,
        **stall,
        "ended-by": index,
        "ended-s": None if time is None else round(time / _NS, 3),
    }


def read_stalls_in(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``read-committed-stalls`` block of a history file or run directory, None when it
    holds no ``txn`` op (its readers are not read_committed): for a run judged before the
    checker took the measure (``insync analyze``). Raises ``HistoryError`` when the file is
    unreadable. One read: every line is fed, the result kept if one was a ``txn`` op."""
    source = open_source(path)
    run, txn = Stalls(), False
    with open_history(source.path) as handle:
        for op in parse_lines(handle, source):
            txn = txn or op.get("f") == "txn"
            run.feed(op)
    return run.result() if txn else None


def describe_stall(stall: Mapping[str, Any]) -> str:
    """One stall in words: ``t0-0: 12.7 s, from 13.3 s to 26.0 s (1 stalled poll, ops
    376..376), offset 315 (value 1924, op 333) held back; ended by op 446 at 27.9 s``."""
    polls = stall.get("polls", 0)
    end = ("until the end of the run" if stall.get("until-end")
           else f"ended by op {stall.get('ended-by')} at {stall.get('ended-s')} s")
    held = stall.get("held-back") or {}
    return (f"{stall.get('key')}: {stall.get('seconds')} s, from {stall.get('start-s')} s to "
            f"{stall.get('end-s')} s ({polls} stalled poll{'s' if polls != 1 else ''}, ops "
            f"{stall.get('first-poll')}..{stall.get('last-poll')}), offset "
            f"{held.get('offset')} (value {held.get('value')}, op {held.get('op')}) held "
            f"back; {end}")
