"""One pass over the ops, folding each into compact per-key state.

Why this layout: every analysis of HISTORY.md needs the *final* version order
(a later read can fill a hole or reveal a divergence), so nothing can be judged
while reading. Keeping each op as a dict would cost ~1 KB per op; instead each
op is dissolved into per-key tables as soon as it completes:

* ``log``: offset -> first value recorded there, ``extra`` for divergent values;
* ``writers``: value -> the op that sent it (its outcome in ``writer_kind`` when
  not ``ok``); ``ok_reads``/``other_reads``: value -> an op that read it;
* ``array('Q')`` streams of the value *pairs* that the order analyses will
  compare once positions are known: consecutive reads/sends inside one op
  (``rvals``/``svals`` with their offsets, split into groups) and each
  process's hand-over from one op to the next (``proc_poll``/``proc_send``:
  v1, v2, o1, o2, op1, op2). Offsets ride along because on a key whose log is
  clean (one value per offset, one offset per value) a pair at offsets o, o+1
  is provably one position apart: the analyses can then clear almost every
  pair with C-level arithmetic instead of a dict lookup per value. Several
  numbers go in with ``fromlist([...])``: one resize, where ``extend((...))``
  grows the array once per item (a third of the cost for six).

Micro-ops of completions are validated here, while they are walked anyway; what one
poll result or send stores in its key's tables is ``checkers._records``'.
"""

from __future__ import annotations

from typing import Any

from checkers._history import check_key_list
from checkers._key_state import KeyState
from checkers._malformed import malformed_mop
from checkers._records import read_records, write_send
from checkers.groups._shape import ALLOWED_IN, check_group_op, check_mop
from harness.base import contract
from harness.base.contract import FAIL, INFO, OK, TYPE_NAMES

#: micro-ops that name the keys a rebalance moved
REBALANCE = frozenset({"assigned", "revoked"})
#: the keys an op without a rebalance moved
NOT_MOVED: frozenset[str] = frozenset()


class Collector:
    """The sink of ``checkers._history.Scanner``: builds the per-key tables."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        #: process -> key -> (op, last value, its offset) of its last ok read / ok-info send
        self.last_read: dict[int, dict[str, tuple[int, int, int]]] = {}
        self.last_send: dict[int, dict[str, tuple[int, int, int]]] = {}
        #: info ops that sent something: (index, [(key, value)], [(key, offset, value)])
        self.info_ops: list[tuple[int, list[tuple[str, int]], list[tuple[str, int, int]]]] = []
        #: ok/info ops that both read and sent: (index, [(key, value read)])
        self.cycle_readers: list[tuple[int, list[tuple[str, int]]]] = []
        #: (op index, key, value) of ops that read their own send
        self.precommitted: list[tuple[int, str, int]] = []
        self.outcomes = [0, 0, 0, 0]
        self.judged = 0
        #: the history has an op that rebalances groups (``subscribe``): positions per
        #: process are then informational
        self.saw_rebalance = False
        #: True once the history uses docs/HISTORY-GROUPS.md (a group micro-op or op, or
        #: an assign's ``committed`` lookup): only then are the group rules judged
        self.saw_groups = False
        self._reset_fs = contract.reset_fs()
        self._rebalance_fs = contract.rebalance_fs()
        self._group_fs = contract.group_fs()
        #: True for a chunk that follows other lines (``checkers._parallel``): each
        #: process then starts with the positions it had at the chunk's start, unknown
        #: here. A first read/send of a key that would pair with such a position leaves
        #: a stub (table: 0 poll / 1 send, key, process, value, offset, op, where in
        #: ``proc_poll``/``proc_send``) that the merge turns into the pair.
        self.inherits = False
        #: False routes every op through the general path (a test compares the two)
        self.fast_paths = True
        self.stubs: list[tuple[int, str, int, int, int, int, int]] = []
        #: process -> the keys whose inherited positions survived its assigns so far
        #: (absent: all of them)
        self.inherit_filter: dict[int, set[str]] = {}
        #: process -> the keys whose inherited read positions an op of this chunk made
        #: unknown (``forget``): they survive no filter
        self.inherit_drop: dict[int, set[str]] = {}

    def other(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, f: str, kind: int, value: Any, line: int
    ) -> None:
        """assign/subscribe reset positions; commit/committed are judged by ``checkers.groups``;
        crash only counts."""
        self.outcomes[kind] += 1
        if f in self._group_fs:
            check_group_op(f, value, line, kind=TYPE_NAMES[kind])
            self.judged += 1
            self.saw_groups = True
            return
        if f in self._rebalance_fs:
            self.saw_rebalance = True
        if f in self._reset_fs and kind in (OK, INFO):
            self._reset(process, check_key_list(f, value, line))

    def _reset(self, process: int, keys: list[str]) -> None:
        """assign/subscribe: forget positions of every key not listed."""
        for table in (self.last_read, self.last_send):
            old = table.get(process)
            if old:
                table[process] = {k: old[k] for k in keys if k in old}
        if self.inherits:
            kept = self.inherit_filter.get(process)
            self.inherit_filter[process] = set(keys) if kept is None else kept & set(keys)

    def forget(self, process: int, value: Any) -> None:
        """A ``fail`` op whose reads the client kept (``"reads-kept": true``): the process's
        read position of each key its polls returned is unknown, as after an assign that
        does not list the key (docs/HISTORY.md, "Positions per process")."""
        keys = {k for mop in value if type(mop) is list and len(mop) == 2 and mop[0] == "poll"
                and type(mop[1]) is dict for k, records in mop[1].items() if records}
        last = self.last_read.get(process)
        if last:
            for k in keys:
                last.pop(k, None)
        if self.inherits and keys:
            self.inherit_drop.setdefault(process, set()).update(keys)

    def _stub(  # noqa: PLR0917 - rare: a process's first touch of a key in a chunk
        self, table: int, ks: KeyState, k: str, process: int, v: int, o: int, index: int
    ) -> None:
        """Where a pair with a position inherited from before the chunk would go."""
        kept = self.inherit_filter.get(process)
        if (kept is None or k in kept) and (table or k not in self.inherit_drop.get(process, ())):
            at = len(ks.proc_send if table else ks.proc_poll)
            self.stubs.append((table, k, process, v, o, index, at))

    def txn(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, kind: int, value: Any, line: int, f: str
    ) -> None:
        """A send/poll/txn: walk its micro-ops once, streaming records into the key tables.

        The records of one op and key land contiguously in ``rvals``/``roffs``
        (``svals``/``soffs`` for sends); ``read_at``/``sent_at`` remember where
        each key's run started, which is all the folding below needs.
        """
        self.outcomes[kind] += 1
        self.judged += 1
        if type(value) is not list:
            raise malformed_mop(value, line)
        ok = kind == OK
        if len(value) == 1 and self.fast_paths:
            mop = value[0]
            if type(mop) is list:
                if len(mop) == 2 and mop[0] == "poll" and type(mop[1]) is dict:
                    self._poll(index, process, ok, mop, line)
                    return
                if len(mop) == 3 and mop[0] == "send":
                    self._send(index, process, kind, mop, line)
                    return
        read_at: dict[str, tuple[KeyState, int]] = {}
        sent_at: dict[str, tuple[KeyState, int]] = {}
        info_offsets: list[tuple[str, int, int]] = []
        moved: set[str] | frozenset[str] = NOT_MOVED
        for mop in value:
            if type(mop) is not list or not mop:
                raise malformed_mop(mop, line)
            tag = mop[0]
            if tag == "send":  # the commonest here; no group tag is "send" or "poll"
                k, ks, _, _, at = write_send(self.keys, mop, kind, index, line, info_offsets)
                if k not in sent_at:
                    sent_at[k] = (ks, at)
            elif tag == "poll":
                if len(mop) == 1:
                    continue
                result = mop[1]
                if len(mop) != 2 or type(result) is not dict:
                    raise malformed_mop(mop, line)
                for k, records in result.items():
                    taken = read_records(self.keys, k, records, ok, index, mop, line)
                    if taken is not None and k not in read_at:
                        read_at[k] = taken
            elif type(tag) is str and tag in ALLOWED_IN:
                check_mop(f, mop, line, kind=TYPE_NAMES[kind])
                self.saw_groups = True
                if tag in REBALANCE:
                    moved = {*moved, *mop[1]}
            else:
                raise malformed_mop(mop, line)
        if read_at and sent_at:
            self._own_reads(index, kind, read_at, sent_at)
        if read_at:
            self._fold_reads(index, process, ok, read_at, moved)
        if sent_at:
            self._fold_sends(index, process, kind, sent_at, info_offsets)

    def _poll(self, index: int, process: int, ok: bool, mop: list[Any], line: int) -> None:
        """The most common op: one poll. ``txn`` and ``_fold_reads`` in one loop, no tables.

        It must build exactly what the general path builds (a test compares the two).
        The run-closing lines repeat ``_fold_reads`` on purpose: a shared helper
        cost about 5% of a check's instructions (callgrind), in its hottest loop.
        """
        last = self.last_read.get(process)
        if ok and last is None:
            last = self.last_read[process] = {}
        keys = self.keys
        for k, records in mop[1].items():
            taken = read_records(keys, k, records, ok, index, mop, line)
            if taken is None:
                continue
            ks, start = taken
            # the records were just validated and appended: read them, not the streams back
            first_o, first_v = records[0]
            if len(records) > 1:
                ks.rgroups.fromlist([start, start + len(records), index])
            if last is not None:
                prev = last.get(k)
                if prev is not None:
                    ks.proc_poll.fromlist([prev[1], first_v, prev[2], first_o, prev[0], index])
                elif self.inherits:
                    self._stub(0, ks, k, process, first_v, first_o, index)
                if ok:
                    last_o, last_v = records[-1]
                    last[k] = (index, last_v, last_o)
            elif self.inherits:
                self._stub(0, ks, k, process, first_v, first_o, index)

    def _send(self, index: int, process: int, kind: int, mop: list[Any], line: int) -> None:
        """The other common op: one send. ``txn`` and ``_fold_sends`` for a single value."""
        info_offsets: list[tuple[str, int, int]] = []
        k, ks, v, known, _ = write_send(self.keys, mop, kind, index, line, info_offsets)
        if kind == INFO:
            self.info_ops.append((index, [(k, v)], info_offsets))
        if kind != FAIL:
            last = self.last_send.get(process)
            if last is None:
                last = self.last_send[process] = {}
            prev = last.get(k)
            if prev is not None:
                ks.proc_send.fromlist([prev[1], v, prev[2], known, prev[0], index])
            elif self.inherits:
                self._stub(1, ks, k, process, v, known, index)
            last[k] = (index, v, known)

    def _fold_reads(
        self,
        index: int,
        process: int,
        ok: bool,
        read_at: dict[str, tuple[KeyState, int]],
        moved: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Close this op's runs of reads; hand over positions to the process's next op.

        A key that a rebalance of this op moved (``moved``) makes no pairs inside the op:
        the consumer legitimately jumped (HISTORY-GROUPS.md, rebalances).
        """
        last = self.last_read.get(process)
        if ok and last is None:
            last = self.last_read[process] = {}
        for k, (ks, start) in read_at.items():
            vals = ks.rvals
            offs = ks.roffs
            end = len(vals)
            first_v = vals[start]
            first_o = offs[start]
            if end - start > 1 and k not in moved:  # a single record makes no pair
                ks.rgroups.fromlist([start, end, index])
            if last is not None:
                prev = last.get(k)
                if prev is not None:
                    ks.proc_poll.fromlist([prev[1], first_v, prev[2], first_o, prev[0], index])
                elif self.inherits:
                    self._stub(0, ks, k, process, first_v, first_o, index)
                if ok:
                    last[k] = (index, vals[end - 1], offs[end - 1])
            elif self.inherits:
                self._stub(0, ks, k, process, first_v, first_o, index)

    def _fold_sends(
        self,
        index: int,
        process: int,
        kind: int,
        sent_at: dict[str, tuple[KeyState, int]],
        info_offsets: list[tuple[str, int, int]],
    ) -> None:
        """Close this op's runs of sends; ok/info sends set the process's send position."""
        if kind == INFO:
            sent = [(k, v) for k, (ks, start) in sent_at.items() for v in ks.svals[start:]]
            self.info_ops.append((index, sent, info_offsets))
        last = None
        if kind != FAIL:
            last = self.last_send.get(process)
            if last is None:
                last = self.last_send[process] = {}
        for k, (ks, start) in sent_at.items():
            vals = ks.svals
            offs = ks.soffs
            end = len(vals)
            if last is not None:
                prev = last.get(k)
                if prev is not None:
                    ks.proc_send.fromlist(
                        [prev[1], vals[start], prev[2], offs[start], prev[0], index]
                    )
                elif self.inherits:
                    self._stub(1, ks, k, process, vals[start], offs[start], index)
                last[k] = (index, vals[end - 1], offs[end - 1])
            if end - start > 1:
                ks.sgroups.fromlist([start, end, index])

    def _own_reads(
        self,
        index: int,
        kind: int,
        read_at: dict[str, tuple[KeyState, int]],
        sent_at: dict[str, tuple[KeyState, int]],
    ) -> None:
        """An op that read and sent: check for precommitted reads, keep it for cycles."""
        for k, (ks, start) in sent_at.items():
            if k in read_at:
                mine = set(ks.svals[start:])
                for v in ks.rvals[read_at[k][1] :]:
                    if v in mine:
                        self.precommitted.append((index, k, v))
        if kind != FAIL:
            self.cycle_readers.append(
                (index, [(k, v) for k, (ks, start) in read_at.items() for v in ks.rvals[start:]])
            )
