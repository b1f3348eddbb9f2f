"""The per-key anomaly analyses of shared/HISTORY.md, run once orders are known.

Each function looks at one key and reports into an ``Anomalies`` sink. They are
ordered from "the log itself is wrong" (divergence, duplicates) to "a reader saw
something it should not have" (G1a, garbage) to "someone missed data" (lost,
unseen) and finally "positions went the wrong way" (the order analyses).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from operator import sub

from checkers._collect import KeyState
from checkers._history import FAIL, INFO
from checkers._verdict import Anomalies
from checkers._versions import VersionOrder


def analyse_key(
    key: str, ks: KeyState, vo: VersionOrder, proven: set[int], out: Anomalies
) -> None:
    """Every per-key analysis, in a stable order."""
    inconsistent_offsets(key, vo, out)
    duplicates(key, vo, out)
    garbage_reads(key, ks, out)
    aborted_reads(key, ks, out)
    lost_and_unseen(key, ks, vo, proven, out)
    internal_orders(key, ks, vo, out)
    process_orders(key, ks, vo, out)


def inconsistent_offsets(key: str, vo: VersionOrder, out: Anomalies) -> None:
    """One offset holding more than one value: replicas diverged."""
    for offset in sorted(vo.extra):
        if out.counted("inconsistent-offsets"):
            values = sorted([vo.log[offset], *vo.extra[offset]])
            out.keep(
                "inconsistent-offsets",
                {
                    "key": key,
                    "offset": offset,
                    "index": vo.position_of_offset(offset),
                    "values": values,
                },
            )


def duplicates(key: str, vo: VersionOrder, out: Anomalies) -> None:
    """One value found at more than one offset."""
    for value in sorted(vo.dup_offsets):
        if out.counted("duplicate"):
            offsets = sorted(set(vo.dup_offsets[value]))
            out.keep(
                "duplicate",
                {"key": key, "value": value, "count": len(offsets), "offsets": offsets},
            )


def garbage_reads(key: str, ks: KeyState, out: Anomalies) -> None:
    """Values read (by an op of any outcome) that no op in the history sent."""
    writers = ks.writers.keys()
    garbage = (ks.ok_reads.keys() | ks.other_reads.keys()) - writers
    for value in sorted(garbage):
        if out.counted("garbage-read"):
            reader = ks.ok_reads.get(value, ks.other_reads.get(value))
            out.keep("garbage-read", {"key": key, "value": value, "op": reader})


def aborted_reads(key: str, ks: KeyState, out: Anomalies) -> None:
    """G1a: an ok read saw a value whose sender failed."""
    ok_reads = ks.ok_reads
    for value in sorted(v for v, kind in ks.writer_kind.items() if kind == FAIL):
        reader = ok_reads.get(value)
        if reader is not None and out.counted("G1a"):
            out.keep(
                "G1a",
                {"key": key, "value": value, "writer": ks.writers[value], "reader": reader},
            )


def lost_and_unseen(
    key: str, ks: KeyState, vo: VersionOrder, proven: set[int], out: Anomalies
) -> None:
    """Committed values below what readers reached but never read; acked values never read."""
    ok_reads = ks.ok_reads
    unread = ks.writers.keys() - ok_reads.keys()
    if not unread:
        return
    writers = ks.writers
    kinds = ks.writer_kind
    bound, max_read = _max_read(ks, vo)
    for value in sorted(unread, key=lambda v: (vo.pos.get(v, -1), v)):
        writer = writers[value]
        kind = kinds.get(value)
        if kind is not None and not (kind == INFO and writer in proven):
            continue
        p = vo.pos.get(value)
        if p is not None and p <= bound and out.counted("lost-write"):
            out.keep(
                "lost-write",
                {
                    "key": key,
                    "value": value,
                    "index": p,
                    "max-read-index": bound,
                    "writer": writer,
                    "max-read": max_read,
                    "offset": vo.offsets[p],
                    "max-read-offset": vo.offsets[bound],
                },
            )
    unseen = sorted(v for v in unread if v not in kinds)
    if unseen and out.counted("unseen"):
        cap = max(out.cap, 1)
        out.keep("unseen", {"key": key, "count": len(unseen), "values": unseen[:cap]})


def _max_read(ks: KeyState, vo: VersionOrder) -> tuple[int, int | None]:
    """The largest first position any ok read reached, and an ok op that read there."""
    ok_reads = ks.ok_reads
    if not ok_reads:
        return -1, None
    if vo.first_pos:
        firsts = [vo.first_position(v) for v in ok_reads]
        bound = max(p for p in firsts if p is not None)
    else:
        bound = max(map(vo.pos.__getitem__, ok_reads))
    offset = vo.offsets[bound]
    for value in [vo.log[offset], *vo.extra.get(offset, ())]:
        if value in ok_reads and vo.first_position(value) == bound:
            return bound, ok_reads[value]
    return bound, None  # pragma: no cover - bound comes from an ok read at that offset


def internal_orders(key: str, ks: KeyState, vo: VersionOrder, out: Anomalies) -> None:
    """Inside one op: reads and sends of a key must follow the version order one by one."""
    cap = max(out.cap, 1)
    for kinds, vals, groups in (
        (("int-poll-skip", "int-nonmonotonic-poll"), ks.rvals, ks.rgroups),
        (("int-send-skip", "int-nonmonotonic-send"), ks.svals, ks.sgroups),
    ):
        for op, p1, p2, v1, v2 in _group_deltas(vals, groups, vo):
            delta = p2 - p1
            if delta > 1:
                if out.counted(kinds[0]):
                    out.keep(
                        kinds[0],
                        {
                            "key": key,
                            "values": [v1, v2],
                            "delta": delta,
                            "skipped": vo.values_between(p1, p2, cap),
                            "op": op,
                        },
                    )
            elif out.counted(kinds[1]):
                out.keep(kinds[1], {"key": key, "values": [v1, v2], "delta": delta, "op": op})


def process_orders(key: str, ks: KeyState, vo: VersionOrder, out: Anomalies) -> None:
    """Between one process's ops: polls resume right after, sends move forward."""
    cap = max(out.cap, 1)
    for v1, v2, op1, op2, p1, p2 in _pair_deltas(ks.proc_poll, vo):
        delta = p2 - p1
        if delta > 1:
            if out.counted("poll-skip"):
                out.keep(
                    "poll-skip",
                    {
                        "key": key,
                        "delta": delta,
                        "skipped": vo.values_between(p1, p2, cap),
                        "ops": [op1, op2],
                    },
                )
        elif out.counted("nonmonotonic-poll"):
            out.keep(
                "nonmonotonic-poll",
                {"key": key, "values": [v1, v2], "delta": delta, "ops": [op1, op2]},
            )
    for v1, v2, op1, op2, p1, p2 in _pair_deltas(ks.proc_send, vo):
        delta = p2 - p1
        if delta < 1 and out.counted("nonmonotonic-send"):
            out.keep(
                "nonmonotonic-send",
                {"key": key, "values": [v1, v2], "delta": delta, "ops": [op1, op2]},
            )


def _deltas_fine(firsts: list[int | None], seconds: list[int | None]) -> bool:
    """True when every pair is known and exactly one position apart (the fast path)."""
    if None in firsts or None in seconds:
        return False
    deltas = list(map(sub, seconds, firsts))
    return deltas.count(1) == len(deltas)


def _group_deltas(
    vals: array[int], groups: array[int], vo: VersionOrder
) -> Iterator[tuple[int, int, int, int, int]]:
    """Consecutive pairs inside each group whose positions are known and not one apart.

    Yields (op, p1, p2, v1, v2).
    """
    n = len(vals)
    if n < 2:
        return
    positions = list(map(vo.pos.get, vals))
    starts = groups[0::2]
    ops = groups[1::2]
    ends = [*starts[1:], n]
    firsts: list[int | None] = []
    seconds: list[int | None] = []
    for s, e in zip(starts, ends, strict=True):
        firsts.extend(positions[s : e - 1])
        seconds.extend(positions[s + 1 : e])
    if _deltas_fine(firsts, seconds):
        return
    for s, e, op in zip(starts, ends, ops, strict=True):
        for i in range(s, e - 1):
            p1 = positions[i]
            p2 = positions[i + 1]
            if p1 is not None and p2 is not None and p2 - p1 != 1:
                yield op, p1, p2, vals[i], vals[i + 1]


def _pair_deltas(
    quads: array[int], vo: VersionOrder
) -> Iterator[tuple[int, int, int, int, int, int]]:
    """(v1, v2, op1, op2) records whose positions are known and not one apart.

    Yields (v1, v2, op1, op2, p1, p2).
    """
    if not quads:
        return
    get = vo.pos.get
    firsts = list(map(get, quads[0::4]))
    seconds = list(map(get, quads[1::4]))
    if _deltas_fine(firsts, seconds):
        return
    for j, (p1, p2) in enumerate(zip(firsts, seconds, strict=True)):
        if p1 is not None and p2 is not None and p2 - p1 != 1:
            i = 4 * j
            yield quads[i], quads[i + 1], quads[i + 2], quads[i + 3], p1, p2
