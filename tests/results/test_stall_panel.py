"""The report's read_committed stall panel: the longest stalls with the ops that prove
them; "None." for a transactional run without one; no panel for a run not measured;
everything escaped."""

from __future__ import annotations

from typing import Any

from results.report.stall_panel import panel_html

STALL = {"key": "t0-<0>", "seconds": 88.3, "start-s": 10.7, "end-s": 99.0, "until-end": True,
         "held-back": {"offset": 234, "value": 1145, "op": 230}, "last-progress": 220,
         "polls": 57, "first-poll": 232, "last-poll": 5120, "ended-by": None, "ended-s": None,
         "stalls": 9}


def test_a_stall_shows_its_length_held_back_write_and_proving_ops() -> None:
    verdict: dict[str, Any] = {"valid": True, "stats": {"read-committed-stalls": {
        "longest-s": 88.3, "stalls": [STALL]}}}
    page = panel_html(verdict)
    assert "Longest: 88.3 s." in page and "t0-&lt;0&gt;" in page
    assert "until the end of the run" in page and "offset 234" in page
    assert '<a class="op" data-op="230">op 230</a>' in page
    assert '<a class="op" data-op="5120">op 5120</a>' in page


def test_a_transactional_run_without_a_stall_says_none_and_a_plain_run_has_no_panel() -> None:
    none = {"stats": {"read-committed-stalls": {"longest-s": 0.0, "stalls": []}}}
    assert "None." in panel_html(none)
    assert panel_html({"valid": True, "stats": {"ops": 3}}) == ""
