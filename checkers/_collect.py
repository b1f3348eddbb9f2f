"""One pass over the ops, folding each into compact per-key state.

Why this layout: every analysis of HISTORY.md needs the *final* version order
(a later read can fill a hole or reveal a divergence), so nothing can be judged
while reading. Keeping each op as a dict would cost ~1 KB per op; instead each
op is dissolved into per-key tables as soon as it completes:

* ``log``: offset -> first value recorded there, ``extra`` for divergent values;
* ``writers``: value -> the op that sent it (its outcome in ``writer_kind`` when
  not ``ok``); ``ok_reads``/``other_reads``: value -> an op that read it;
* ``array('q')`` streams of the value *pairs* that the order analyses will
  compare once positions are known: consecutive reads/sends inside one op
  (``rvals``/``svals`` split into groups) and each process's hand-over from one
  op to the next (``proc_poll``/``proc_send``: v1, v2, op1, op2).

Micro-ops of completions are validated here, while they are walked anyway.
"""

from __future__ import annotations

from array import array
from itertools import repeat
from typing import Any

from checkers._history import (
    ASSIGN_FS,
    F_CODES,
    FAIL,
    INFO,
    OK,
    OTHER_F,
    TXN_FS,
    check_key_list,
    malformed_mop,
)

#: f code recorded for nemesis lines in ``Collector.meta``.
NEMESIS_F = 7


class KeyState:
    """Everything the history said about one key (topic-partition)."""

    __slots__ = (
        "extra",
        "log",
        "ok_reads",
        "other_reads",
        "proc_poll",
        "proc_send",
        "rgroups",
        "rvals",
        "sgroups",
        "svals",
        "writer_kind",
        "writers",
    )

    def __init__(self) -> None:
        self.log: dict[int, int] = {}
        self.extra: dict[int, list[int]] = {}
        self.writers: dict[int, int] = {}
        self.writer_kind: dict[int, int] = {}
        self.ok_reads: dict[int, int] = {}
        self.other_reads: dict[int, int] = {}
        self.rvals = array("q")
        self.rgroups = array("q")
        self.svals = array("q")
        self.sgroups = array("q")
        self.proc_poll = array("q")
        self.proc_send = array("q")

    def diverge(self, offset: int, value: int) -> None:
        """A second, different value recorded at ``offset``."""
        seen = self.extra.setdefault(offset, [])
        if value not in seen:
            seen.append(value)


class Collector:
    """The sink of ``checkers._history.Scanner``: builds the per-key tables."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        self.last_read: dict[int, dict[str, tuple[int, int]]] = {}
        self.last_send: dict[int, dict[str, tuple[int, int]]] = {}
        #: info ops that sent something: (index, [(key, value)], [(key, offset, value)])
        self.info_ops: list[tuple[int, list[tuple[str, int]], list[tuple[str, int, int]]]] = []
        #: ok/info ops that both read and sent: (index, [(key, value read)])
        self.cycle_readers: list[tuple[int, list[tuple[str, int]]]] = []
        #: (op index, key, value) of ops that read their own send
        self.precommitted: list[tuple[int, str, int]] = []
        #: per line: process * 64 + f code * 4 + type code
        self.meta = array("q")
        #: op index -> line - 1, only where they differ
        self.relocated: dict[int, int] = {}
        self.outcomes = [0, 0, 0, 0]
        self.judged = 0
        self.saw_subscribe = False

    def key(self, name: str) -> KeyState:
        """The state of key ``name``, created on first use."""
        ks = self.keys.get(name)
        if ks is None:
            ks = self.keys[name] = KeyState()
        return ks

    def note_line(self, index: int, line: int, process: int, f: str, kind: int) -> None:
        """Remember who issued each line, for explanations."""
        if index != line - 1:
            self.relocated[index] = line - 1
        self.meta.append(process * 64 + F_CODES.get(f, OTHER_F) * 4 + kind)

    def note_nemesis(self, line: int) -> None:
        """Keep ``meta`` aligned with line numbers."""
        self.meta.append(-64 + NEMESIS_F * 4)

    def completion(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, f: str, kind: int, value: Any, line: int
    ) -> None:
        """Fold one completed client op into the tables."""
        self.outcomes[kind] += 1
        if f in TXN_FS:
            self.judged += 1
            self._micro_ops(index, process, kind, value, line)
        elif f in ASSIGN_FS:
            if f == "subscribe":
                self.saw_subscribe = True
            if kind in (OK, INFO):
                self._reset(process, check_key_list(f, value, line))

    def _reset(self, process: int, keys: list[str]) -> None:
        """assign/subscribe: forget positions of every key not listed."""
        for table in (self.last_read, self.last_send):
            old = table.get(process)
            if old:
                table[process] = {k: old[k] for k in keys if k in old}

    def _micro_ops(self, index: int, process: int, kind: int, value: Any, line: int) -> None:
        if type(value) is not list:
            raise malformed_mop(value, line)
        ok = kind == OK
        reads: dict[str, list[int]] = {}
        sends: dict[str, list[int]] = {}
        info_offsets: list[tuple[str, int, int]] = []
        key = self.key
        o: int | None
        for mop in value:
            if type(mop) is not list or not mop:
                raise malformed_mop(mop, line)
            tag = mop[0]
            if tag == "poll":
                if len(mop) == 1:
                    continue
                result = mop[1]
                if len(mop) != 2 or type(result) is not dict:
                    raise malformed_mop(mop, line)
                for k, records in result.items():
                    if type(records) is not list:
                        raise malformed_mop(mop, line)
                    if not records:
                        continue
                    ks = key(k)
                    log = ks.log
                    vals = reads.get(k)
                    if vals is None:
                        vals = reads[k] = []
                    append = vals.append
                    for rec in records:
                        if type(rec) is not list or len(rec) != 2:
                            raise malformed_mop(mop, line)
                        o, v = rec
                        if type(o) is not int or type(v) is not int:
                            raise malformed_mop(mop, line)
                        if log.setdefault(o, v) != v:
                            ks.diverge(o, v)
                        append(v)
            elif tag == "send":
                if len(mop) != 3 or type(mop[1]) is not str:
                    raise malformed_mop(mop, line)
                k = mop[1]
                x = mop[2]
                if type(x) is int:
                    o, v = None, x
                elif type(x) is list and len(x) == 2:
                    o, v = x
                    if type(v) is not int or (o is not None and type(o) is not int):
                        raise malformed_mop(mop, line)
                else:
                    raise malformed_mop(mop, line)
                ks = key(k)
                writers = ks.writers
                if v not in writers:
                    writers[v] = index
                    if not ok:
                        ks.writer_kind[v] = kind
                if o is not None:
                    if ok:
                        if ks.log.setdefault(o, v) != v:
                            ks.diverge(o, v)
                    elif kind == INFO:
                        info_offsets.append((k, o, v))
                svals = sends.get(k)
                if svals is None:
                    sends[k] = [v]
                else:
                    svals.append(v)
            else:
                raise malformed_mop(mop, line)
        if reads:
            self._fold_reads(index, process, ok, reads)
        if sends:
            self._fold_sends(index, process, kind, sends, info_offsets)
            if reads:
                self._own_reads(index, kind, reads, sends)

    def _fold_reads(self, index: int, process: int, ok: bool, reads: dict[str, list[int]]) -> None:
        keys = self.keys
        last = self.last_read.get(process)
        for k, vals in reads.items():
            ks = keys[k]
            if len(vals) > 1:
                ks.rgroups.append(len(ks.rvals))
                ks.rgroups.append(index)
                ks.rvals.extend(vals)
            (ks.ok_reads if ok else ks.other_reads).update(zip(vals, repeat(index)))
            if last is not None:
                prev = last.get(k)
                if prev is not None:
                    ks.proc_poll.extend((prev[1], vals[0], prev[0], index))
        if ok:
            if last is None:
                last = self.last_read[process] = {}
            for k, vals in reads.items():
                last[k] = (index, vals[-1])

    def _fold_sends(
        self,
        index: int,
        process: int,
        kind: int,
        sends: dict[str, list[int]],
        info_offsets: list[tuple[str, int, int]],
    ) -> None:
        keys = self.keys
        for k, vals in sends.items():
            if len(vals) > 1:
                ks = keys[k]
                ks.sgroups.append(len(ks.svals))
                ks.sgroups.append(index)
                ks.svals.extend(vals)
        if kind == FAIL:
            return
        if kind == INFO:
            sent = [(k, v) for k, vals in sends.items() for v in vals]
            self.info_ops.append((index, sent, info_offsets))
        last = self.last_send.get(process)
        if last is None:
            last = self.last_send[process] = {}
        for k, vals in sends.items():
            prev = last.get(k)
            if prev is not None:
                keys[k].proc_send.extend((prev[1], vals[0], prev[0], index))
            last[k] = (index, vals[-1])

    def _own_reads(
        self, index: int, kind: int, reads: dict[str, list[int]], sends: dict[str, list[int]]
    ) -> None:
        """An op that read and sent: check for precommitted reads, keep it for cycles."""
        for k, vals in sends.items():
            read = reads.get(k)
            if read:
                mine = set(vals)
                for v in read:
                    if v in mine:
                        self.precommitted.append((index, k, v))
        if kind != FAIL:
            self.cycle_readers.append((index, [(k, v) for k, vals in reads.items() for v in vals]))
