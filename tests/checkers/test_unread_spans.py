"""The one reading of a ``group-unread-keys`` block (``checkers.unread_intervals``): every
interval of every group and both parts, longest first, ties in the block's order, and
nothing that is no mapping. The sentences and the report's panel both read it, so a
property holds it to exactly that order for any block."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from checkers import unread_intervals
from checkers._unread_spans import block


def interval(key: str, seconds: Any) -> dict[str, Any]:
    return {"key": key, "seconds": seconds}


def test_longest_first_across_groups_and_parts_ties_in_block_order() -> None:
    a = interval("a", 6.0)
    b = interval("b", 60.0)
    c = interval("c", 6.0)
    d = interval("d", 7.5)
    e = interval("e", 6.0)
    got = unread_intervals({"groups": [{"group": "g1", "owned-unread": [b, e], "unowned": [a]},
                                       {"group": "g2", "unowned": [d], "owned-unread": [c]}]})
    assert got == [("g1", "owned-unread", b), ("g2", "unowned", d), ("g1", "unowned", a),
                   ("g1", "owned-unread", e), ("g2", "owned-unread", c)]
    assert [i for _, _, i in got][2:] == [a, e, c]


def test_what_is_no_mapping_is_skipped_and_a_missing_length_counts_as_none() -> None:
    kept = interval("k", 9.0)
    lengthless = {"key": "z"}
    got = unread_intervals({"groups": [None, "g", {"group": "g", "unowned": [1, "x", lengthless,
                                                                            kept],
                                                   "owned-unread": None}]})
    assert got == [("g", "unowned", kept), ("g", "unowned", lengthless)]
    assert unread_intervals({}) == [] == unread_intervals({"groups": None})


def test_the_block_is_none_without_a_group_and_its_longest_is_zero_without_an_interval() -> None:
    assert block([], 5.0) is None
    short = {"key": "k", "start": 0, "end": 10**9, "ended-at": 10**9, "ended": "read",
             "ended-by": 3}
    assert block([("g", [short], [], 2 * 10**9)], 5.0) == {
        "longest-s": 0.0, "groups": [{"group": "g", "unowned": [], "owned-unread": []}]}


SECONDS = st.one_of(st.sampled_from([0.0, 5.0, 5.5, 60.0]),
                    st.floats(min_value=0, max_value=1e6, allow_nan=False))
GROUP = st.fixed_dictionaries({
    "group": st.sampled_from(["g1", "g2", None]),
    "unowned": st.lists(st.builds(interval, st.sampled_from("abc"), SECONDS), max_size=4),
    "owned-unread": st.lists(st.builds(interval, st.sampled_from("abc"), SECONDS), max_size=4),
})


@given(st.lists(GROUP, max_size=5))
def test_every_interval_once_longest_first_ties_in_block_order(groups: list[dict[str, Any]]
                                                               ) -> None:
    """Each interval of the block comes out exactly once, with its own group and part;
    lengths never grow; of two equally long, the one the block lists first comes first.
    These three pin the order completely, whatever the helper's own way of sorting."""
    rank = {}  # id(interval) -> (its place in block order, group, part)
    for g in groups:
        for part in ("unowned", "owned-unread"):
            for i in g[part]:
                rank[id(i)] = (len(rank), g["group"], part)
    got = unread_intervals({"groups": groups})
    assert sorted(id(i) for _, _, i in got) == sorted(rank)
    for group, part, i in got:
        assert rank[id(i)][1:] == (group, part)
    for (_, _, first), (_, _, then) in pairwise(got):
        assert first["seconds"] >= then["seconds"]
        if first["seconds"] == then["seconds"]:
            assert rank[id(first)][0] < rank[id(then)][0]
