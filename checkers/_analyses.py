"""The per-key anomaly analyses of docs/HISTORY.md, run once orders are known.

Each function looks at one key and reports into an ``Anomalies`` sink. They are
ordered from "the log itself is wrong" (divergence, duplicates) to "a reader saw
something it should not have" (G1a, garbage) to "someone missed data" (lost,
unseen) and finally "positions went the wrong way" (the order analyses).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from operator import sub

from checkers._key_state import KeyState
from checkers._verdict import Anomalies
from checkers._versions import VersionOrder
from harness.base.contract import FAIL, INFO

#: A difference of offsets this large involves ``NO_OFFSET``: an unknown offset.
SUSPECT = 2**62


def analyse_key(
    key: str, ks: KeyState, vo: VersionOrder, proven: set[int], out: Anomalies
) -> None:
    """Every per-key analysis, in a stable order."""
    inconsistent_offsets(key, ks, vo, out)
    duplicates(key, ks, vo, out)
    garbage_reads(key, ks, out)
    aborted_reads(key, ks, out)
    lost_and_unseen(key, ks, vo, proven, out)
    internal_orders(key, ks, vo, out)
    process_orders(key, ks, vo, out)


def _witness(ks: KeyState, value: int) -> int | None:
    """An op that shows ``value`` exists: its sender, else a reader."""
    for table in (ks.writers, ks.ok_reads, ks.other_reads):
        op = table.get(value)
        if op is not None:
            return op
    return None


def inconsistent_offsets(key: str, ks: KeyState, vo: VersionOrder, out: Anomalies) -> None:
    """One offset holding more than one value: replicas diverged.

    ``witnesses`` (optional field) maps each value to an op that recorded it
    there; for the value recorded first, an op that sent or read it.
    """
    for offset in sorted(vo.extra):
        if out.counted("inconsistent-offsets"):
            values = sorted([vo.log[offset], *vo.extra[offset]])
            witnesses = {
                str(v): ks.extra_ops.get((offset, v), _witness(ks, v)) for v in values
            }
            out.keep(
                "inconsistent-offsets",
                {
                    "key": key,
                    "offset": offset,
                    "index": vo.position_of_offset(offset),
                    "values": values,
                    "witnesses": witnesses,
                },
            )


def duplicates(key: str, ks: KeyState, vo: VersionOrder, out: Anomalies) -> None:
    """One value found at more than one offset (optional fields: its writer and a reader)."""
    for value in sorted(vo.dup_offsets):
        if out.counted("duplicate"):
            offsets = sorted(set(vo.dup_offsets[value]))
            out.keep(
                "duplicate",
                {
                    "key": key,
                    "value": value,
                    "count": len(offsets),
                    "offsets": offsets,
                    "writer": ks.writers.get(value),
                    "reader": ks.ok_reads.get(value, ks.other_reads.get(value)),
                },
            )


def garbage_reads(key: str, ks: KeyState, out: Anomalies) -> None:
    """Values read (by an op of any outcome) that no op in the history sent."""
    writers = ks.writers.keys()
    if ks.ok_reads.keys() <= writers and ks.other_reads.keys() <= writers:
        return  # the usual case, decided without building a set
    garbage = ks.ok_reads.keys() - writers
    if ks.other_reads:
        garbage |= ks.other_reads.keys() - writers
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
    if ks.writers.keys() <= ok_reads.keys():
        return  # everything sent was read: decided without building a set
    unread = ks.writers.keys() - ok_reads.keys()
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
        shown = unseen[:cap]
        out.keep(
            "unseen",
            {
                "key": key,
                "count": len(unseen),
                "values": shown,
                "writers": [writers[v] for v in shown],
            },
        )


def _max_read(ks: KeyState, vo: VersionOrder) -> tuple[int, int | None]:
    """The largest first position any ok read reached, and an ok op that read there.

    Scans down from the top of the log: in a healthy history the last records
    were read, so this stops at once instead of looking up every value read.
    """
    ok_reads = ks.ok_reads
    offsets = vo.offsets
    log = vo.log
    extra = vo.extra
    for p in range(len(offsets) - 1, -1, -1):
        o = offsets[p]
        for value in [log[o], *extra[o]] if o in extra else (log[o],):
            if value in ok_reads and vo.first_position(value) == p:
                return p, ok_reads[value]
    return -1, None


def internal_orders(key: str, ks: KeyState, vo: VersionOrder, out: Anomalies) -> None:
    """Inside one op: reads and sends of a key must follow the version order one by one."""
    cap = max(out.cap, 1)
    for kinds, vals, offs, groups in (
        (("int-poll-skip", "int-nonmonotonic-poll"), ks.rvals, ks.roffs, ks.rgroups),
        (("int-send-skip", "int-nonmonotonic-send"), ks.svals, ks.soffs, ks.sgroups),
    ):
        for op, p1, p2, v1, v2 in _group_deltas(vals, offs, groups, vo):
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
    for v1, v2, op1, op2, p1, p2 in _pair_deltas(ks.proc_send, vo, backwards_only=True):
        delta = p2 - p1
        if out.counted("nonmonotonic-send"):
            out.keep(
                "nonmonotonic-send",
                {"key": key, "values": [v1, v2], "delta": delta, "ops": [op1, op2]},
            )


def _clean(vo: VersionOrder) -> bool:
    """One value per offset and one offset per value: positions follow offsets."""
    return not vo.extra and not vo.first_pos


def _group_deltas(
    vals: array[int], offs: array[int], groups: array[int], vo: VersionOrder
) -> Iterator[tuple[int, int, int, int, int]]:
    """Consecutive pairs inside each run whose positions are known and not one apart.

    ``groups`` holds (start, end, op) per run of two or more values (single
    values sit unused in ``vals``). On a clean key, a pair at offsets o and
    o + 1 is one position apart, so only pairs whose offsets are not
    consecutive need their positions looked up. Yields (op, p1, p2, v1, v2).
    """
    if not groups:
        return
    starts = groups[0::3]
    ends = groups[1::3]
    ops = groups[2::3]
    pairs: list[tuple[int, int]] = []  # (first index of the pair, op)
    if _clean(vo):
        deltas = list(map(sub, offs[1:], offs[:-1]))
        across = vo.across_holes()
        for start, end, op in zip(starts, ends, ops, strict=True):
            run = deltas[start : end - 1]
            if run.count(1) != len(run):
                for j in range(start, end - 1):
                    if deltas[j] != 1 and across.get(offs[j]) != offs[j + 1]:
                        pairs.append((j, op))
        if not pairs:
            return
    else:
        for start, end, op in zip(starts, ends, ops, strict=True):
            pairs.extend((j, op) for j in range(start, end - 1))
    pos = vo.pos
    for j, op in pairs:
        p1 = pos.get(vals[j])
        p2 = pos.get(vals[j + 1])
        if p1 is not None and p2 is not None and p2 - p1 != 1:
            yield op, p1, p2, vals[j], vals[j + 1]


def _pair_deltas(
    six: array[int], vo: VersionOrder, *, backwards_only: bool = False
) -> Iterator[tuple[int, int, int, int, int, int]]:
    """(v1, v2, o1, o2, op1, op2) records whose positions are known and not one apart.

    With ``backwards_only``, only those whose second value does not come later.
    Offsets clear most records on a clean key without any lookup (an unknown
    offset, ``NO_OFFSET``, makes a difference beyond ``SUSPECT``: looked up).
    Yields (v1, v2, op1, op2, p1, p2).
    """
    if not six:
        return
    v1s = six[0::6]
    v2s = six[1::6]
    suspects: Iterable[int]
    if _clean(vo):
        deltas = list(map(sub, six[3::6], six[2::6]))
        if backwards_only:
            if min(deltas) >= 1 and max(deltas) <= SUSPECT:
                return
            suspects = [j for j, d in enumerate(deltas) if d < 1 or d > SUSPECT]
        else:
            if deltas.count(1) == len(deltas):
                return
            across = vo.across_holes()
            o1s = six[2::6]
            o2s = six[3::6]
            suspects = [
                j for j, d in enumerate(deltas) if d != 1 and across.get(o1s[j]) != o2s[j]
            ]
    else:
        suspects = range(len(v1s))
    pos = vo.pos
    for j in suspects:
        p1 = pos.get(v1s[j])
        p2 = pos.get(v2s[j])
        if p1 is None or p2 is None:
            continue
        if p2 - p1 < 1 or (p2 - p1 > 1 and not backwards_only):
            i = 6 * j
            yield v1s[j], v2s[j], six[i + 4], six[i + 5], p1, p2
