"""Keys a consumer group did not read: nobody owned them, or their owner read nothing of
them while records were there to read (docs/HISTORY-GROUPS.md, "Unread keys", has the
exact rules).

The read stall (``checkers._stalls``) proves nothing about a key its reader has not
read since it gained it (a member may not be fetching it yet), so a rebalance that
never gives a key to anyone, or a member that returns nothing of a key it was given for
a minute although committed records wait beyond what its group has read, escapes every
rule and every other measure. This pass measures both, per group and key, for the
members of a group (processes whose latest ``subscribe`` named it) that record their
rebalances (``assigned``/``revoked`` micro-ops):

- *unowned*: a live member lists the key and none holds it, from the op that left it so
  until a member is assigned it or reads it, none lists it, or the group's last poll;
- *owned-unread*: its holder's polls hand over nothing at all (empty polls) while a
  record of the key at or beyond ``max(H + 1, C)`` was readable at each poll's invoke
  (``H``: the highest offset the group's polls returned, ``C``: the highest it committed
  or read back; a member starts at the group's committed offset, never above both);
  from the assignment (or that write's completion) to the last such poll.

Liveness, not safety: it goes in the verdict's ``stats`` and never changes ``valid``.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field
from typing import Any

from checkers._unread_spans import block
from harness.base import contract

#: Intervals shorter than this are not reported: an eager rebalance in which every member
#: answers revokes every key and gives them out again within a few seconds (3 s at the
#: start of an eos run on the test VM), and a member's first fetch of a key it was given
#: takes a round trip or a few. A rebalance that waits for a gone member's session to
#: time out (10 s in the workloads) is reported, as it should be: its keys went unread.
MIN_S = 5.0
#: how many records beyond the start a poll looks at for a readable one: records are
#: written in offset order, so past the first few, later ones are no more readable
_SCAN = 32
_INF = 2**63
#: a key's transaction entries are pruned once there are more than this many
_PRUNE_AT = 256
_ASSIGNS = contract.reset_fs()
#: ops whose value is micro-ops: reads and writes, and commits and committed reads
_MOPS = contract.mop_fs() | contract.group_fs()


@dataclass(slots=True)
class _Held:
    """One member's holding of one key, from its ``assigned`` micro-op on."""

    by: int  # the assigning op (completion index)
    at: int  # its completion time
    start: int = 0  # when the interval starts (the assignment, or the held-back write)
    held_back: tuple[int, int, int, int] | None = None  # offset, value, writer, its end
    polls: int = 0
    first: int = 0
    last: int = 0
    last_at: int = 0
    read: bool = False  # the member has returned a record of the key since


@dataclass(slots=True)
class _Member:
    """A process that subscribed to a group and has not left it."""

    group: Any
    keys: frozenset[str]
    earliest: bool
    held: dict[str, _Held] = field(default_factory=dict)


@dataclass
class _Group:
    """One group's state during the pass."""

    members: set[int] = field(default_factory=set)
    listing: dict[str, int] = field(default_factory=dict)  # key -> live members listing it
    holders: dict[str, set[int]] = field(default_factory=dict)
    read_to: dict[str, int] = field(default_factory=dict)  # H
    committed: dict[str, int] = field(default_factory=dict)  # C
    #: key -> the open unowned interval: start time, op, how, process, member polls then
    unowned: dict[str, tuple[int, int, str, int | None, int]] = field(default_factory=dict)
    polls: int = 0  # member poll ops so far
    last_poll: int = -1  # the latest member poll's completion time
    recorded: bool = False  # a member recorded a rebalance
    done_unowned: list[dict[str, Any]] = field(default_factory=list)
    done_unread: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Unread:
    """The pass that measures unread keys, fed one line at a time (file order), so that one
    pass over a history can feed it beside other measures (``checkers._measures``)."""

    groups: dict[Any, _Group] = field(default_factory=dict)
    members: dict[int, _Member] = field(default_factory=dict)
    #: process -> its pending invoke
    invoked: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: process -> the entry (in ``txns``) of its pending transaction
    pending_txn: dict[int, list[int]] = field(default_factory=dict)
    #: key -> its ``ok`` sends, in offset order: (offset, value, op, completion time)
    writes: dict[str, list[tuple[int, int, int, int]]] = field(default_factory=dict)
    #: key -> [invoke time, end time] of each transaction that sent to it; the end is
    #: infinite while it may be open (pending, or ``info`` and not proven committed)
    txns: dict[str, list[list[int]]] = field(default_factory=dict)
    #: (key, value) of an ``info`` transaction's sends -> its entries, until a read proves it
    unproven: dict[tuple[str, int], list[int]] = field(default_factory=dict)

    def feed(self, op: dict[str, Any]) -> None:
        """The next line of the history."""
        process = op.get("process")
        if type(process) is not int:
            return
        if op["type"] == "invoke":
            self.invoked[process] = op
            if op["f"] == "txn" and isinstance(op.get("value"), list):
                self.pending_txn[process] = _open_txn(self, op)
            return
        invoke = self.invoked.pop(process, op)
        f, kind = op["f"], op["type"]
        value = op.get("value")
        if f == "send" and kind == "ok":  # most lines: the writes alone, without a call each
            index, time, writes = op["index"], op["time"], self.writes
            for _, k, sent in value or ():
                if type(sent) is list:  # an offset not known is no write to find
                    _write(writes, k, (sent[0], sent[1], index, time))
            return
        if value is None:
            value = invoke.get("value")
        member = self.members.get(process)
        if f in _ASSIGNS and kind in ("ok", "info") and isinstance(value, list):
            _subscribe(self, process, op, invoke, value)
        elif f in _MOPS and isinstance(value, list):
            entry = self.pending_txn.pop(process, None) if f == "txn" else None
            _micro_ops(self, member, op, invoke, value, entry)
        if kind == "info" and process in self.members:
            _leave(self, process, op)  # a process whose op ended info is retired

    def result(self) -> dict[str, Any] | None:
        """The ``group-unread-keys`` block, or None when no group recorded its rebalances (nothing
        to measure). It closes the intervals still open at the group's last poll, so it is
        taken once, at the end."""
        closed = []
        for name, g in self.groups.items():
            if not g.recorded:
                continue
            for process in sorted(g.members):
                for k, held in self.members[process].held.items():
                    _close_unread(g, k, process, held, None, None, None)
            for k in list(g.unowned):
                _close_unowned(g, k, None, g.last_poll, None, None)
            closed.append((name, g.done_unowned, g.done_unread, g.last_poll))
        return block(closed, MIN_S)


def _open_txn(run: Unread, op: dict[str, Any]) -> list[int]:
    """A transaction may hold its keys' last stable offset from its invoke on: its entry."""
    entry = [op["time"], _INF]
    for k in {m[1] for m in op["value"] if isinstance(m, list) and len(m) == 3
              and m[0] == "send" and isinstance(m[1], str)}:
        txns = run.txns.setdefault(k, [])
        if len(txns) > _PRUNE_AT and run.invoked:  # drop those ended before any pending op
            oldest = min(pending["time"] for pending in run.invoked.values())
            txns[:] = [t for t in txns if t[1] >= oldest]
        txns.append(entry)
    return entry


def _subscribe(run: Unread, process: int, op: dict[str, Any], invoke: dict[str, Any],
               value: list[Any]) -> None:
    """An ``ok``/``info`` subscribe or assign: the process leaves its group, or (a subscribe
    to the same group) keeps the keys it holds that the new list names, as Kafka keeps
    them until the next rebalance revokes them."""
    group = invoke.get("group", op.get("group"))
    keys = frozenset(k for k in value if isinstance(k, str))
    old = run.members.get(process)
    stays = op["f"] == "subscribe" and op["type"] == "ok"
    if old is not None and not (stays and old.group == group):
        _leave(run, process, op)
        old = None
    if not stays:
        return
    g = run.groups.setdefault(group, _Group())
    member = run.members[process] = _Member(group, keys,
                                            invoke.get("reset", op.get("reset")) == "earliest")
    g.members.add(process)
    touched = set(keys)
    if old is not None:
        touched |= old.keys
        for k in old.keys:
            g.listing[k] -= 1
        for k in [k for k in old.held if k not in keys]:
            _release(g, k, process, old.held.pop(k), op, "unsubscribed")
        member.held = old.held
    for k in keys:
        g.listing[k] = g.listing.get(k, 0) + 1
    for k in touched:
        _settle(g, k, op, "subscribed", None)


def _leave(run: Unread, process: int, op: dict[str, Any]) -> None:
    """The process is no member any more (its op ended ``info``, it crashed, or it
    subscribed elsewhere): its keys are released."""
    member = run.members.pop(process)
    g = run.groups[member.group]
    g.members.discard(process)
    for k in member.keys:
        g.listing[k] -= 1
    for k, held in member.held.items():
        _release(g, k, process, held, op, "left")
    for k in member.keys | member.held.keys():
        _settle(g, k, op, "left", process)


def _release(g: _Group, k: str, process: int, held: _Held, op: dict[str, Any],  # noqa: PLR0917
             how: str) -> None:
    """``process`` no longer holds ``k`` (the caller settles the key)."""
    _close_unread(g, k, process, held, op["index"], op["time"], how)
    holders = g.holders.get(k)
    if holders is not None:
        holders.discard(process)


def _settle(g: _Group, k: str, op: dict[str, Any], how: str, process: int | None) -> None:
    """Open or close ``k``'s unowned interval after ``op`` changed who lists or holds it;
    ``process`` is the member it concerns (None: a subscribe)."""
    wanted = g.listing.get(k, 0) > 0 and not g.holders.get(k)
    if wanted and k not in g.unowned:
        g.unowned[k] = (op["time"], op["index"], how, process, g.polls)
    elif not wanted and k in g.unowned:
        owned = bool(g.holders.get(k))
        _close_unowned(g, k, op["index"], op["time"], "assigned" if owned else "unlisted",
                       process if owned else None)


def _micro_ops(run: Unread, member: _Member | None, op: dict[str, Any],  # noqa: PLR0917
               invoke: dict[str, Any], value: list[Any], entry: list[int] | None) -> None:
    """A completion of an op with micro-ops: its writes, then its polls, rebalances and
    commits in the order they ran (a member's, or a committed read of any group)."""
    kind, time = op["type"], op["time"]
    if entry is not None and kind in ("ok", "fail"):
        entry[1] = time  # the transaction ended: it holds nothing back from now on
    name = invoke.get("group", op.get("group"))
    if name is None and member is not None:
        name = member.group
    g = run.groups.get(name)
    moved, returned, polled = set[str](), set[str](), False
    for mop in value:
        if not isinstance(mop, list) or not mop:
            continue
        tag = mop[0]
        if tag == "send" and len(mop) == 3:
            _sent(run, op, mop[1], mop[2], entry)
        elif tag == "poll" and len(mop) == 2 and isinstance(mop[1], dict):
            polled = True
            for k, records in mop[1].items():
                top = _records(run, k, records, time)
                if top >= 0 and g is not None and member is not None:
                    returned.add(k)
                    _returned(g, k, top, member, op)
        elif tag in ("assigned", "revoked") and g is not None and member is not None:
            g.recorded = True
            for k in mop[1]:
                moved.add(k)
                _rebalance(g, k, member, op, tag)
        elif (tag in ("commit", "committed") and g is not None and len(mop) == 2
              and isinstance(mop[1], dict) and (kind != "fail" or tag == "committed")):
            for k, c in mop[1].items():
                if type(c) is int and c > g.committed.get(k, -1):
                    g.committed[k] = c
    if g is not None and member is not None and polled:
        g.polls += 1
        g.last_poll = time
        if returned:
            return  # the consumer had records to hand over: it may have been busy with them
        for k, held in member.held.items():
            if k not in moved and not held.read:
                _empty_poll(run, g, k, member, held, invoke["time"], op)


def _sent(run: Unread, op: dict[str, Any], k: Any, sent: Any, entry: list[int] | None) -> None:
    """A send micro-op of a completion: an ``ok`` one is a write, an ``info`` transaction's
    stays open until a read returns one of its values."""
    if op["type"] == "ok" and isinstance(sent, list) and len(sent) == 2:
        _write(run.writes, k, (sent[0], sent[1], op["index"], op["time"]))
    elif op["type"] == "info" and entry is not None:
        run.unproven[(k, sent[1] if isinstance(sent, list) else sent)] = entry


def _write(writes: dict[str, list[tuple[int, int, int, int]]], k: str,
           w: tuple[int, int, int, int]) -> None:
    """File an ``ok`` write in its key's offset order: nearly always at the end."""
    filed = writes.get(k)
    if filed is None:
        writes[k] = [w]
    elif filed[-1] <= w:
        filed.append(w)
    else:
        insort(filed, w)


def _records(run: Unread, k: str, records: Any, time: int) -> int:
    """The highest offset among a poll's records of ``k`` (-1: none); a record an ``info``
    transaction sent proves it committed, so it holds nothing back any more."""
    top = -1
    for r in records:
        if type(r) is list and len(r) == 2 and r[0] > top:
            top = r[0]
    if run.unproven:
        for r in records:
            proven = run.unproven.pop((k, r[1]), None) if type(r) is list else None
            if proven is not None:
                proven[1] = min(proven[1], time)
    return top


def _returned(g: _Group, k: str, top: int, member: _Member, op: dict[str, Any]) -> None:
    """A member's poll returned records of ``k`` up to offset ``top``."""
    g.read_to[k] = max(top, g.read_to.get(k, -1))
    held, process = member.held.get(k), op["process"]
    if held is not None and not held.read:
        _close_unread(g, k, process, held, op["index"], op["time"], "read")
        held.read = True
    if k in g.unowned:  # a member the history never saw assigned it read it
        _close_unowned(g, k, op["index"], op["time"], "read", process)


def _rebalance(g: _Group, k: str, member: _Member, op: dict[str, Any], tag: str) -> None:
    """An ``assigned`` or ``revoked`` micro-op of a member names ``k``."""
    process = op["process"]
    held = member.held.pop(k, None)
    if held is not None:
        _release(g, k, process, held, op, "revoked")
    if tag == "assigned":
        member.held[k] = _Held(op["index"], op["time"])
        g.holders.setdefault(k, set()).add(process)
    _settle(g, k, op, tag, process)


def _empty_poll(run: Unread, g: _Group, k: str, member: _Member, held: _Held,  # noqa: PLR0917
                invoked: int, op: dict[str, Any]) -> None:
    """A poll op of the holder that returned nothing of ``k``: it counts when a record of
    ``k`` beyond where the member can start was readable when the poll was invoked."""
    top, committed = g.read_to.get(k, -1), g.committed.get(k)
    if top < 0 and committed is None and not member.earliest:
        return  # a fresh start at "latest" begins at the log's end, wherever that was
    floor = max(top + 1, committed or 0)
    if held.held_back is None or held.held_back[0] < floor:
        found = _readable(run, k, floor, invoked)
        if found is None:
            return
        if held.polls == 0:
            held.start, held.first = max(held.at, found[3]), op["index"]
        held.held_back = found
    held.polls += 1
    held.last, held.last_at = op["index"], op["time"]


def _readable(run: Unread, k: str, floor: int, at: int) -> tuple[int, int, int, int] | None:
    """The lowest write of ``k`` at or beyond ``floor`` that a read_committed poll invoked
    at ``at`` could return: its op completed ``ok`` by then, and no transaction that sent
    to ``k`` and began before that write completed was still open then (it may hold the
    last stable offset below the write)."""
    writes = run.writes.get(k)
    if not writes:
        return None
    open_since = min((t[0] for t in run.txns.get(k, ()) if t[1] > at), default=_INF)
    i = bisect_left(writes, (floor,))
    for w in writes[i:i + _SCAN]:
        if w[3] <= at and w[3] <= open_since:
            return w
    return None


def _close_unread(g: _Group, k: str, process: int, held: _Held, index: int | None,  # noqa: PLR0917
                  time: int | None, how: str | None) -> None:
    """The owned-unread interval of ``held`` ends, at op ``index`` (None: the history
    ended); ``checkers._unread_spans.block`` judges it once the group's last poll is known."""
    if held.polls == 0 or held.held_back is None or held.read:
        return
    offset, value, writer, _ = held.held_back
    g.done_unread.append({
        "key": k, "process": process, "start": held.start, "end": held.last_at,
        "assigned-by": held.by, "held-back": {"offset": offset, "value": value, "op": writer},
        "empty-polls": held.polls, "first-poll": held.first, "last-poll": held.last,
        "ended": how, "ended-by": index, "ended-at": time})


def _close_unowned(g: _Group, k: str, index: int | None, time: int, how: str | None,  # noqa: PLR0917
                   process: int | None) -> None:
    """The unowned interval of ``k`` ends at op ``index`` (None: the history ended)."""
    start, by, released, owner, polls_then = g.unowned.pop(k)
    g.done_unowned.append({
        "key": k, "start": start, "end": time, "released": released, "released-by": by,
        "previous": owner, "next": process, "member-polls": g.polls - polls_then,
        "ended": how, "ended-by": index, "ended-at": None if index is None else time})
