"""The three rules of HISTORY-GROUPS.md: lost-commit, commit-skip, garbage-commit.

Each function reads ``GroupFacts`` and hands anomalies to ``Anomalies`` in the
contract's fields; the words a person reads are ``checkers._explain``'s.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator

from checkers._verdict import Anomalies
from checkers.groups._model import (
    GK,
    NEVER,
    Commit,
    Establishment,
    Group,
    GroupFacts,
    Start,
)

Excluded = Callable[[Commit], bool]


def _never(_: Commit) -> bool:
    return False


def _explained(
    facts: GroupFacts, gk: GK, s: Establishment, window_end: int, excluded: Excluded
) -> bool:
    """A commit not in a fail op, below e or unknown, invoked before T, not certainly
    in effect before S was invoked (``Commit.landed_by``): it could have lowered the
    offset in between."""
    for c in facts.commits.get(gk, ()):
        op = c.op
        if (
            op.kind != "fail"
            and c.offset is not None
            and c.offset < s.offset
            and op.inv < window_end
            and c.landed_by > s.op.inv
            and not excluded(c)
        ):
            return True
    for c in facts.unknown_commits.get(gk[0], ()):
        if c.op.inv < window_end and c.landed_by > s.op.inv and not excluded(c):
            return True
    return False


def _lost_against(  # noqa: PLR0917
    facts: GroupFacts, gk: GK, began: int, read: int | None, window_end: int,
    excluded: Excluded,
) -> Establishment | None:
    """The unexplained establishment, completed before ``began``, that ``read`` falls below:
    the one with the largest offset (the earliest to complete on a tie)."""
    lost = [
        s for s in facts.establishments.get(gk, ())
        if s.op.end < began and (read is None or read < s.offset)
    ]
    lost.sort(key=lambda s: (-s.offset, s.op.end))
    for s in lost:
        if not _explained(facts, gk, s, window_end, excluded):
            return s
    return None


def lost_commits(facts: GroupFacts, required: dict[str, list[tuple[int, int]]],
                 out: Anomalies) -> None:
    """lost-commit, via committed reads and via starts, in recorded groups."""
    found: list[tuple[int, int, dict[str, object]]] = []
    for gk, reads in facts.reads.items():
        if not facts.recorded(gk[0]):
            continue
        for r in reads:
            s = _lost_against(facts, gk, r.op.inv, r.offset, r.op.end, _never)
            if s is not None:
                found.append((r.op.end, r.mi, _lost(gk, "committed", s, r.offset,
                                                    r.op.index, required)))
    for e in facts.starts:
        gk = (e.group, e.key)
        if e.first is None or not facts.recorded(e.group):
            continue
        o, f_op, f_mi = e.first
        s = _lost_against(facts, gk, e.op.inv, o, f_op.end, _own_after(e))
        if s is not None:
            found.append((f_op.end, f_mi, _lost(gk, "start", s, o, f_op.index, required)))
    found.sort(key=lambda item: (item[0], item[1], str(item[2]["key"])))
    for _, _, anomaly in found:
        if out.counted("lost-commit"):
            out.keep("lost-commit", anomaly)


def _own_after(e: Start) -> Excluded:
    """P's own commits after its start: they cannot move where P started."""
    process, seq, mi = e.op.process, e.op.seq, e.mi
    return lambda c: c.follows(process, seq, mi)


def _lost(  # noqa: PLR0917
    gk: GK, via: str, s: Establishment, read: int | None, op: int,
    required: dict[str, list[tuple[int, int]]],
) -> dict[str, object]:
    low = -1 if read is None else read
    values = [v for o, v in required.get(gk[1], ()) if low <= o < s.offset]
    return {"key": gk[1], "group": gk[0], "via": via, "offset": s.offset,
            "writer": s.op.index, "read": read, "op": op, "values": values}


def garbage_commits(facts: GroupFacts, out: Anomalies) -> None:
    """garbage-commit: a committed read of an offset no commit of the group could write."""
    found = []
    for gk, reads in facts.reads.items():
        if not facts.recorded(gk[0]):
            continue
        commits = facts.commits.get(gk, [])
        unknown = facts.unknown_commits.get(gk[0], [])
        for r in reads:
            if r.offset is None:
                continue
            end = r.op.end
            if any(c.op.inv < end for c in unknown) or any(
                c.offset == r.offset and c.op.kind != "fail" and c.op.inv < end
                for c in commits
            ):
                continue
            aborted = [c.op for c in commits
                       if c.offset == r.offset and c.op.kind == "fail" and c.op.inv < end]
            writer = min(aborted, key=lambda op: op.inv).index if aborted else None
            found.append((end, r.mi, {"key": gk[1], "group": gk[0], "offset": r.offset,
                                      "op": r.op.index, "writer": writer}))
    found.sort(key=lambda item: (item[0], item[1], str(item[2]["key"])))
    for _, _, anomaly in found:
        if out.counted("garbage-commit"):
            out.keep("garbage-commit", anomaly)


# commit-skip ---------------------------------------------------------------

#: (end(Y), position in Y, key, via, group, low, high, offset, op index)
Claim = tuple[int, int, str, str, Group, int, int, int, int]


def _claims(facts: GroupFacts) -> Iterator[Claim]:
    """Every observation of a consumed range [low, high), unordered."""
    for (g, k), commits in facts.commits.items():
        for c in commits:
            if c.op.kind == "ok" and c.offset is not None:
                yield (c.op.end, c.mi, k, "commit", g, 0, c.offset, c.offset, c.op.index)
    for (g, k), reads in facts.reads.items():
        for r in reads:
            if r.offset is not None:
                yield (r.op.end, r.mi, k, "committed", g, 0, r.offset, r.offset, r.op.index)
    for e in facts.starts:
        if e.fresh or e.first is None or not facts.recorded(e.group):
            continue
        o, y, y_mi = e.first
        m = _start_floor(facts, e, y.end)
        if m is not None and m < o:
            yield (y.end, y_mi, e.key, "start", e.group, m, o, o, y.index)


def _start_floor(facts: GroupFacts, e: Start, y_end: int) -> int | None:
    """The highest commit of (g, k) invoked before end(Y) in an op not fail, leaving out
    P's own commits after the start; None when there is none or an unknown commit."""
    own = _own_after(e)
    if any(c.op.inv < y_end and not own(c) for c in facts.unknown_commits.get(e.group, ())):
        return None
    offsets = [
        c.offset for c in facts.commits.get((e.group, e.key), ())
        if c.offset is not None and c.op.kind != "fail" and c.op.inv < y_end and not own(c)
    ]
    return max(offsets) if offsets else None


def commit_skips(facts: GroupFacts, required: dict[str, list[tuple[int, int]]],
                 out: Anomalies) -> None:
    """commit-skip: a claimed range passes over a required record nobody in the group got.

    Every excuse holds for every later observation once it holds (each needs something
    invoked before end(Y), and observations go by end(Y)), so each record in a claimed
    range leaves the live list for good: skipped once, or excused for the rest.
    """
    live: dict[GK, list[tuple[int, int]]] = {}
    fresh = _fresh_positions(facts)
    for claim in sorted(_claims(facts), key=lambda c: (c[0], c[8], c[1], c[2], c[3])):
        y_end, _, k, via, g, low, high, offset, op = claim
        rows = live.get((g, k))
        if rows is None:
            rows = live[g, k] = list(required.get(k, ()))
        i = bisect_left(rows, (low, -1))
        j = bisect_left(rows, (high, -1))
        if i == j:
            continue
        taken = rows[i:j]
        del rows[i:j]
        skipped = [v for o, v in taken
                   if not _excused(facts, fresh.get((g, k), ()), g, k, o, v, y_end)]
        if skipped and out.counted("commit-skip"):
            out.keep("commit-skip", {"key": k, "group": g, "via": via, "offset": offset,
                                     "op": op, "skipped": skipped, "count": len(skipped)})


def _fresh_positions(facts: GroupFacts) -> dict[GK, list[tuple[int, int]]]:
    """Fresh starts whose reset is not earliest: (inv, first position) per (g, k).
    Marks every fresh start on the way (``Start.fresh``)."""
    out: dict[GK, list[tuple[int, int]]] = {}
    for e in facts.starts:
        gk = (e.group, e.key)
        e.fresh = not any(s.op.end < e.op.inv for s in facts.establishments.get(gk, ()))
        position = e.first_position
        if e.fresh and not e.earliest and position is not None:
            out.setdefault(gk, []).append((e.op.inv, position))
    return out


def _excused(  # noqa: PLR0917
    facts: GroupFacts, fresh: Iterable[tuple[int, int]] | tuple[()], g: Group, k: str,
    o: int, v: int, y_end: int,
) -> bool:
    """(a) delivered to g before Y completed; (b) an unknown read of g may have handed it
    over; (c) a fresh start at latest began above it."""
    at = facts.delivered.get((g, k, v))
    if at is not None and at < y_end:
        return True
    if any(u.op.inv < y_end and u.bounds.get(k, -1) < o for u in facts.unknown_reads.get(g, ())):
        return True
    return any(inv < y_end and position > o for inv, position in fresh)


__all__ = ["NEVER", "commit_skips", "garbage_commits", "lost_commits"]
