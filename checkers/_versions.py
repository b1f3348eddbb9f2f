"""Per-key version orders: where each value sits in the log.

HISTORY.md defines positions as *dense*: offsets nobody saw (transaction
markers, aborted records) are holes and do not count. A value's position is the
last dense position at which it appears; its first position decides how far a
reader got (``max-read-index``). Both are computed once, after the whole history
is read, because any later read may add offsets.

The common case (every offset one value, every value one offset) is built with
C-level ``zip``/``dict``; only a key that has divergent offsets or duplicate
values takes the slower exact walk.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import pairwise

from checkers._key_state import KeyState


@dataclass(slots=True)
class VersionOrder:
    """The version order of one key."""

    #: occupied offsets, ascending: dense position p is ``offsets[p]``
    offsets: list[int]
    #: offset -> first value recorded there
    log: dict[int, int]
    #: offset -> further values recorded there (replicas diverged)
    extra: dict[int, list[int]]
    #: value -> last dense position at which it appears
    pos: dict[int, int]
    #: value -> first dense position, only for values found at several offsets
    first_pos: dict[int, int] = field(default_factory=dict)
    #: value -> every offset holding it, only for values found at several offsets
    dup_offsets: dict[int, list[int]] = field(default_factory=dict)
    _across: dict[int, int] | None = None

    def across_holes(self) -> dict[int, int]:
        """offset -> the next occupied offset, where offsets nobody saw lie between them.

        Transaction markers and aborted records leave such holes all the time;
        where each offset holds one value, a read or send that jumps a hole to
        the next occupied offset moved exactly one position, which this
        answers without looking up a value.
        """
        if self._across is None:
            offsets = self.offsets
            self._across = {a: b for a, b in pairwise(offsets) if b - a > 1}
        return self._across

    def first_position(self, value: int) -> int | None:
        """The first dense position of ``value``, None if it is not in the order."""
        first = self.first_pos.get(value)
        return first if first is not None else self.pos.get(value)

    def value_at(self, position: int) -> int:
        """The first value recorded at a dense position."""
        return self.log[self.offsets[position]]

    def position_of_offset(self, offset: int) -> int:
        """The dense position of an occupied offset."""
        return bisect_left(self.offsets, offset)

    def offset_of(self, value: int) -> int | None:
        """The offset of the last position of ``value``."""
        p = self.pos.get(value)
        return None if p is None else self.offsets[p]

    def values_between(self, low: int, high: int, limit: int) -> list[int]:
        """First values at positions strictly between two positions (at most ``limit``)."""
        stop = min(high, low + 1 + limit)
        return [self.value_at(p) for p in range(low + 1, stop)]


def build(ks: KeyState, proven: list[tuple[int, int, int]]) -> VersionOrder:
    """The version order of a key from its log plus proven info sends (offset, value, op)."""
    log = ks.log
    for offset, value, op in proven:
        if log.setdefault(offset, value) != value:
            ks.diverge(offset, value, op)
    offsets = sorted(log)
    extra = ks.extra
    pos = dict(zip(map(log.__getitem__, offsets), range(len(offsets)), strict=True))
    order = VersionOrder(offsets=offsets, log=log, extra=extra, pos=pos)
    if extra or len(pos) != len(offsets):
        _exact(order)
    return order


def _exact(order: VersionOrder) -> None:
    """Positions when an offset holds several values or a value several offsets."""
    pos: dict[int, int] = {}
    first_pos = order.first_pos
    dup_offsets = order.dup_offsets
    offsets = order.offsets
    log = order.log
    extra = order.extra
    for p, o in enumerate(offsets):
        more = extra.get(o)
        values = [log[o], *more] if more else [log[o]]
        for v in values:
            old = pos.get(v)
            if old is not None and old != p:
                first_pos.setdefault(v, old)
                dup_offsets.setdefault(v, [offsets[old]]).append(o)
            pos[v] = p
    order.pos = pos
