"""The intervals of the ``group-unread-keys`` block (docs/HISTORY-GROUPS.md, "Unread
keys"): which of the pass's closed intervals are reported and in what shape, and the one
way to read them back, every group's of both kinds longest first.

The pass (``checkers._unread``) writes the block; the sentences (``checkers._explain``)
and the report's panel read it. One reading keeps them agreeing on which interval is the
longest and how many there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: the two kinds of interval, in the order a group's block lists them
PARTS = ("unowned", "owned-unread")
#: ns per second (history times are ns)
_NS = 1_000_000_000

Interval = Mapping[str, Any]


def unread_intervals(block: Mapping[str, Any]) -> list[tuple[Any, str, Interval]]:
    """Every interval of a ``group-unread-keys`` block as (group, part, interval), longest
    first; equally long ones keep the block's order (groups, then ``unowned`` before
    ``owned-unread``, then each list's). A group or interval that is no mapping is
    skipped, so a stored verdict read back cannot make its reader raise."""
    found = [(g.get("group"), part, i) for g in block.get("groups") or ()
             if isinstance(g, Mapping) for part in PARTS
             for i in g.get(part) or () if isinstance(i, Mapping)]
    found.sort(key=lambda x: -float(x[2].get("seconds") or 0))
    return found


def block(groups: Iterable[tuple[Any, list[dict[str, Any]], list[dict[str, Any]], int]],
          min_s: float) -> dict[str, Any] | None:
    """The ``group-unread-keys`` block of each group's closed intervals, given as (name,
    unowned, owned-unread, its last poll's time), or None without a group: groups by name,
    intervals of at least ``min_s`` seconds."""
    blocks = [{"group": name, "unowned": _finish(unowned, last_poll, min_s),
               "owned-unread": _finish(unread, last_poll, min_s)}
              for name, unowned, unread, last_poll in groups]
    if not blocks:
        return None
    blocks.sort(key=lambda b: str(b["group"]))
    found = unread_intervals({"groups": blocks})
    return {"longest-s": found[0][2]["seconds"] if found else 0.0, "groups": blocks}


def _finish(intervals: list[dict[str, Any]], last_poll: int,
            min_s: float) -> list[dict[str, Any]]:
    """The intervals of at least ``min_s``, longest first, in the block's shape. One that
    ends after the group's last poll (its members stopping at the end of the run) lasted
    until the end: the history proves it up to that poll and says nothing after it."""
    out = []
    for raw in intervals:
        i = dict(raw)
        start, end, ended_at = i.pop("start"), min(i.pop("end"), last_poll), i.pop("ended-at")
        seconds = round(max(0, end - start) / _NS, 3)
        if seconds < min_s or i.get("member-polls") == 0:
            continue  # too short, or no member polled: the group was not reading at all
        until_end = ended_at is None or ended_at > last_poll
        if until_end:
            i.update({"ended": None, "ended-by": None, **({"next": None} if "next" in i else {})})
        out.append({"key": i.pop("key"), "seconds": seconds, "start-s": round(start / _NS, 3),
                    "end-s": round(end / _NS, 3), "until-end": until_end, **i,
                    "ended-s": None if until_end else round(ended_at / _NS, 3)})
    out.sort(key=lambda x: (-x["seconds"], x["key"], x["start-s"]))
    return out
