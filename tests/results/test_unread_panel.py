"""The report's panel of keys a consumer group left unread: the longest intervals with the
ops that prove them, longest first across groups; "None." for a measured group without
one; no panel for a run not measured; everything escaped."""

from __future__ import annotations

from typing import Any

from results.report.unread_panel import SHOWN, panel_html

UNOWNED = {"key": "t0-<2>", "seconds": 67.6, "start-s": 76.5, "end-s": 144.1, "until-end": True,
           "released": "revoked", "released-by": 16311, "previous": 19, "next": None,
           "member-polls": 5018, "ended": None, "ended-by": None, "ended-s": None}
UNREAD = {"key": "t0-6", "seconds": 57.5, "start-s": 55.4, "end-s": 112.9, "until-end": False,
          "process": 19, "assigned-by": 9247,
          "held-back": {"offset": 464, "value": 464, "op": 5696}, "empty-polls": 486,
          "first-poll": 9263, "last-poll": 23859, "ended": "revoked", "ended-by": 23900,
          "ended-s": 113.0}


def verdict(*groups: dict[str, Any]) -> dict[str, Any]:
    return {"valid": True, "stats": {"group-unread-keys": {"longest-s": 67.6,
                                                           "groups": list(groups)}}}


def test_intervals_show_their_length_and_proving_ops_longest_first() -> None:
    page = panel_html(verdict({"group": "g1", "unowned": [], "owned-unread": [UNREAD]},
                              {"group": "g2", "unowned": [UNOWNED], "owned-unread": []}))
    assert "Longest: 67.6 s." in page and "t0-&lt;2&gt;" in page
    assert page.index("t0-&lt;2&gt;") < page.index("t0-6")
    assert "until the end of the run" in page and "offset 464" in page
    assert "revoked: " + '<a class="op" data-op="23900">op 23900</a> at 113.0 s' in page
    for op in (16311, 9247, 5696, 9263, 23859):
        assert f'<a class="op" data-op="{op}">op {op}</a>' in page


def test_only_the_longest_are_shown() -> None:
    many = [{**UNOWNED, "key": f"k{n}", "seconds": float(n)} for n in range(SHOWN + 3)]
    page = panel_html(verdict({"group": "g", "unowned": many, "owned-unread": []}))
    assert f"k{SHOWN + 2}" in page and "<td>k2</td>" not in page
    assert "3 more intervals" in page


def test_a_measured_group_without_one_says_none_and_an_unmeasured_run_has_no_panel() -> None:
    assert "None." in panel_html(verdict({"group": "g", "unowned": [], "owned-unread": []}))
    assert panel_html({"valid": True, "stats": {"ops": 3}}) == ""
