"""Reading one history file on several cores: split it by lines, scan the pieces, merge.

Why: reading (parse + fold into per-key tables) is most of a check, and a
machine running insync has spare cores while the check runs. Every per-key
table of ``checkers._collect`` merges exactly, because each is either "first
wins" (the log, writers), "last wins" (readers) or an append-only stream. Only
what crosses a chunk edge needs care, and each crossing is made explicit:

* a process whose invoke lies before the edge completes after it: the later
  chunk records the completion as an *orphan* and the merge checks it against
  the earlier chunk's pending invokes (with the same errors a single pass gives);
* a process's position in a key (its last read or send) carries over the edge:
  the later chunk leaves a *stub* where the pair would go, and the merge fills
  it in from the earlier chunk's end state, at the same place in the stream;
* an offset that the two sides filled with different values: the merge records
  the divergence and looks up, in the later chunk's lines, the op that wrote it;
* time may not go backwards: a later chunk keeps its first timed line, which the
  merge checks against the time the earlier chunks ended on. (``index`` needs
  no edge: every chunk knows its first line number, so it checks it alone.)

The merged state is the one a single pass builds, so the verdict is identical
(the tests check exactly that on generated histories cut at every edge). A
chunk that cannot be judged alone (a ``fail``/``info`` without a value whose
invoke lies across the edge) makes the whole file be read in one pass instead.

The first chunk is scanned in this process while forked children scan the
rest and send back their pickled state through a pipe. Forking is only done
when this process runs a single thread, so no lock can be inherited held.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from itertools import islice, pairwise
from pathlib import Path
from typing import Any

import orjson

from checkers._collect import Collector
from checkers._fork import Child, can_fork, fork_call, result
from checkers._history import TIME_UNSEEN, NeedsWholeFile, Scanner
from checkers._input import count_lines, open_history
from checkers._key_state import STREAM, KeyState
from checkers._malformed import (
    f_mismatch_error,
    no_invoke_error,
    second_invoke_error,
    time_backwards_error,
)
from checkers._recorders import find_recorders
from harness.base.errors import HistoryError

#: Below this size a single pass wins: forking and merging cost more than they save.
MIN_PARALLEL_BYTES = 4 * 2**20
#: At most this many chunks, whatever the core count (the merge is sequential).
MAX_CHUNKS = 8

Pending = dict[int, tuple[int, str, Any, int]]


@dataclass
class ChunkScan:
    """The state one chunk of lines left behind, ready to merge."""

    start: int
    end: int
    first_line: int
    collector: Collector
    lines: int = 0
    nemesis_ops: int = 0
    waits_not_held: list[str] = field(default_factory=list)
    meta: array[int] = field(default_factory=lambda: array("q"))
    pending: Pending = field(default_factory=dict)
    orphans: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    first_invoke: dict[int, int] = field(default_factory=dict)
    #: (line, time) of its first timed line, and its last time (TIME_UNSEEN: none)
    first_time: tuple[int, int] | None = None
    last_time: int = TIME_UNSEEN
    #: (line, message, hint) of the HistoryError that stopped this chunk
    error: tuple[int, str, str | None] | None = None


def chunk_count(size: int, *, jobs: int | None = None, cores: int | None = None) -> int:
    """How many chunks to read a file of ``size`` bytes in.

    ``jobs`` asks for a number (1: a single pass); None decides by size and
    cores. Always 1 when this process runs other threads (see the module doc).
    """
    if jobs is not None and jobs <= 1:
        return 1
    if not can_fork():
        return 1
    if jobs is not None:
        return min(jobs, MAX_CHUNKS)
    if cores is None:
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_CHUNKS, size // MIN_PARALLEL_BYTES))


def plan(path: Path, chunks: int, size: int | None = None) -> list[tuple[int, int]]:
    """Byte ranges of the first ``size`` bytes (all: None), each at a line start.

    Equal shares: this process and each child scan a megabyte in the same CPU
    time (0.073-0.075 s on the ``insync bench check`` history), and a child's
    pickle costs this process nothing while it scans, because the pickle streams
    through the pipe only once this process reads it, loading as the child dumps.
    So all chunks finish together, and nothing waits before the merge.
    """
    size = path.stat().st_size if size is None else size
    cuts = [0]
    with path.open("rb") as f:
        for i in range(1, chunks):
            f.seek(max(size * i // chunks, cuts[-1]))
            if f.tell() > 0:
                f.readline()  # to the start of the next line
            cut = f.tell()
            if cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return list(pairwise(cuts))


def scan_chunk(path: Path, start: int, end: int, first_line: int | None = None) -> ChunkScan:
    """Scan the lines in ``[start, end)``; an error is kept in the result, not raised.

    ``NeedsWholeFile`` is raised: the caller must then read the file in one pass.
    """
    if first_line is None:
        first_line = count_lines(path, 0, start)
    collector = Collector()
    collector.inherits = start > 0
    scanner = Scanner(collector, follows=start > 0, first_line=first_line)
    scan = ChunkScan(start, end, first_line, collector)
    try:
        with open_history(path) as handle:
            handle.seek(start)
            # a C iterator: no Python frame per line, as in checkers._history.parse_lines
            lines = (
                handle
                if end >= path.stat().st_size
                else islice(handle, count_lines(path, start, end))
            )
            scanner.feed_all(map(orjson.loads, lines), finish=False)
            collector.saw_groups = collector.saw_groups or scanner.saw_groups
    except HistoryError as err:
        scan.error = (scanner.lines if err.line is None else err.line, str(err), err.hint)
    scan.lines = scanner.lines
    scan.nemesis_ops = scanner.nemesis_ops
    scan.waits_not_held = scanner.waits_not_held
    scan.meta = scanner.meta
    scan.first_time = scanner.first_time
    scan.last_time = scanner.last_time
    scan.pending = scanner.pending
    scan.orphans = scanner.orphans
    scan.first_invoke = scanner.first_invoke
    return scan


def read_parallel(path: Path, chunks: int, size: int | None = None) -> tuple[Collector, Scanner]:
    """Scan ``path`` (its first ``size`` bytes) in pieces: one here, the rest in children."""
    ranges = plan(path, chunks, size)
    children = [
        fork_call(scan_chunk, path, start, end, passes=(NeedsWholeFile,))
        for start, end in ranges[1:]
    ]
    try:
        scans = [scan_chunk(path, *ranges[0], first_line=0)]
    finally:
        collected = _results(children)
    for (start, end), scan in zip(ranges[1:], collected, strict=True):
        scans.append(scan if isinstance(scan, ChunkScan) else scan_chunk(path, start, end))
    return merge(path, scans)


def _results(children: list[Child]) -> list[Any]:
    """Every child's result, each reaped even when one asks for a single pass."""
    collected: list[Any] = []
    whole_file = False
    for child in children:
        try:
            collected.append(result(child))
        except NeedsWholeFile:
            whole_file = True
            collected.append(None)
    if whole_file:
        raise NeedsWholeFile("a chunk edge splits a value-less completion from its invoke")
    return collected


def read_chunked(path: Path, ranges: list[tuple[int, int]]) -> tuple[Collector, Scanner]:
    """The same as ``read_parallel`` with given ranges, all in this process (for tests)."""
    return merge(path, [scan_chunk(path, start, end) for start, end in ranges])


def merge(path: Path, scans: list[ChunkScan]) -> tuple[Collector, Scanner]:
    """Fold the chunks, in file order, into the collector and scanner a single pass leaves.

    Raises the ``HistoryError`` a single pass would raise first.
    """
    head = scans[0]
    _raise_first([], head.error)
    collector = head.collector
    pending = head.pending
    last_time = head.last_time
    for scan in scans[1:]:
        _raise_first(_edge_errors(pending, last_time, scan), scan.error)
        conflicts = _join(collector, scan.collector)
        if conflicts:
            find_recorders(path, scan.start, scan.lines - scan.first_line, collector, conflicts)
        pending = {
            p: inv
            for p, inv in pending.items()
            if p not in scan.orphans and p not in scan.first_invoke
        }
        pending.update(scan.pending)
        last_time = last_time if scan.last_time == TIME_UNSEEN else scan.last_time
        head.meta.extend(scan.meta)
        head.nemesis_ops += scan.nemesis_ops
        head.waits_not_held += scan.waits_not_held
    collector.inherits = False
    scanner = Scanner(collector)
    scanner.pending = pending
    scanner.lines = scans[-1].lines
    scanner.nemesis_ops = head.nemesis_ops
    scanner.waits_not_held = head.waits_not_held
    scanner.meta = head.meta
    scanner.finish()
    return collector, scanner


def _edge_errors(
    pending: Pending, last_time: int, scan: ChunkScan
) -> list[tuple[int, int, HistoryError]]:
    """What a single pass would have said at the edge: (line, rank, error).

    A line's time is checked before its pairing, so a time error ranks first.
    """
    errors = []
    if scan.first_time is not None and scan.first_time[1] < last_time:
        line, time = scan.first_time
        errors.append((line, -1, time_backwards_error(time, last_time, line)))
    for process, (line, f, type_name) in scan.orphans.items():
        invoke = pending.get(process)
        if invoke is None:
            errors.append((line, 0, no_invoke_error(type_name, process, line)))
        elif invoke[1] != f:
            errors.append((line, 0, f_mismatch_error(f, invoke, line)))
    for process, line in scan.first_invoke.items():
        if process in pending and process not in scan.orphans:
            errors.append((line, 0, second_invoke_error(process, pending[process], line)))
    return errors


def _raise_first(
    errors: list[tuple[int, int, HistoryError]], own: tuple[int, str, str | None] | None
) -> None:
    """Raise the error of the earliest line; at one line, the edge's error comes first."""
    if own is not None:
        line, message, hint = own
        err = HistoryError(message, hint=hint)
        err.line = line
        errors = [*errors, (line, 1, err)]
    if errors:
        raise min(errors, key=lambda e: (e[0], e[1]))[2]


def _join(into: Collector, other: Collector) -> list[tuple[str, int, int]]:
    """Append a later chunk's collector to ``into``; returns offsets whose writer is unknown."""
    _fill_stubs(into, other)
    conflicts: list[tuple[str, int, int]] = []
    for k, ks in other.keys.items():
        mine = into.keys.get(k)
        if mine is None:
            into.keys[k] = ks
        else:
            _join_key(k, mine, ks, conflicts)
    _carry_positions(into.last_read, other.last_read, other.inherit_filter, other.inherit_drop)
    _carry_positions(into.last_send, other.last_send, other.inherit_filter)
    into.info_ops.extend(other.info_ops)
    into.cycle_readers.extend(other.cycle_readers)
    into.precommitted.extend(other.precommitted)
    into.outcomes = [a + b for a, b in zip(into.outcomes, other.outcomes, strict=True)]
    into.judged += other.judged
    into.saw_rebalance = into.saw_rebalance or other.saw_rebalance
    into.saw_groups = into.saw_groups or other.saw_groups
    return conflicts


def _fill_stubs(into: Collector, other: Collector) -> None:
    """Turn the later chunk's stubs into the pairs a single pass would have made."""
    inserts: dict[tuple[str, int], list[tuple[int, tuple[int, ...]]]] = {}
    for table, k, process, v, o, index, at in other.stubs:
        last = (into.last_send if table else into.last_read).get(process)
        prev = last.get(k) if last else None
        if prev is not None:
            inserts.setdefault((k, table), []).append(
                (at, (prev[1], v, prev[2], o, prev[0], index))
            )
    for (k, table), items in inserts.items():
        ks = other.keys[k]
        stream = ks.proc_send if table else ks.proc_poll
        out = array(STREAM)
        done = 0
        for at, six in items:  # stubs were made in stream order
            out.extend(stream[done:at])
            out.extend(six)
            done = at
        out.extend(stream[done:])
        if table:
            ks.proc_send = out
        else:
            ks.proc_poll = out
    other.stubs = []


def _carry_positions(
    mine: dict[int, dict[str, tuple[int, int, int]]],
    theirs: dict[int, dict[str, tuple[int, int, int]]],
    kept: dict[int, set[str]],
    dropped: dict[int, set[str]] | None = None,
) -> None:
    """Each process's positions after the later chunk: its own, else what survived it
    (the keys it kept through its assigns, less those an op made unknown)."""
    for process in set(mine) | set(theirs) | set(kept) | set(dropped or ()):
        inherited = mine.get(process, {})
        keep = kept.get(process)
        gone = (dropped or {}).get(process, ())
        now = {k: v for k, v in inherited.items()
               if (keep is None or k in keep) and k not in gone}
        now.update(theirs.get(process, {}))
        if now or process in mine or process in theirs:
            mine[process] = now


def _join_key(
    key: str, mine: KeyState, later: KeyState, conflicts: list[tuple[str, int, int]]
) -> None:
    """Append one key's later tables to its earlier ones, as one pass would have built them."""
    log = mine.log
    for offset in log.keys() & later.log.keys():
        value = later.log[offset]
        if log[offset] != value and value not in mine.extra.get(offset, ()):
            conflicts.append((key, offset, value))
            mine.diverge(offset, value, -1)
    later.log.update(log)  # the earlier record at an offset wins
    mine.log = later.log
    log = mine.log
    for offset, values in later.extra.items():
        for value in values:
            if value != log[offset]:
                mine.diverge(offset, value, later.extra_ops[offset, value])
    earlier_writers = mine.writers
    for value, kind in later.writer_kind.items():
        if value not in earlier_writers:
            mine.writer_kind[value] = kind
    later.writers.update(earlier_writers)  # the first sender wins
    mine.writers = later.writers
    mine.ok_reads.update(later.ok_reads)  # the last reader wins
    mine.other_reads.update(later.other_reads)
    for vals, offs, groups, lvals, loffs, lgroups in (
        (mine.rvals, mine.roffs, mine.rgroups, later.rvals, later.roffs, later.rgroups),
        (mine.svals, mine.soffs, mine.sgroups, later.svals, later.soffs, later.sgroups),
    ):
        base = len(vals)
        vals.extend(lvals)
        offs.extend(loffs)
        if base and lgroups:
            lgroups[0::3] = array(STREAM, [s + base for s in lgroups[0::3]])
            lgroups[1::3] = array(STREAM, [e + base for e in lgroups[1::3]])
        groups.extend(lgroups)
    mine.proc_poll.extend(later.proc_poll)
    mine.proc_send.extend(later.proc_send)
