"""The report's panel of reads after aborted transactions: each class counted, with its
first example's ops; no panel for a run without the measure; everything escaped."""

from __future__ import annotations

from typing import Any

from results.report.rewind_panel import panel_html

BLOCK = {
    "kept": {"aborts": 4, "observations": 5, "carries-on": 4, "unobserved": 1},
    "sought": {"aborts": 1, "observations": 1, "rewinds-to-abort-start": 1},
    "examples": [
        {"class": "carries-on", "kept": True, "key": "t0-<1>", "abort": 17, "first-read": 2,
         "last-read": 3, "poll": 19, "next-read": 4, "committed": [2]},
        {"class": "unobserved", "kept": True, "key": "t0-1", "abort": 40, "first-read": 9,
         "last-read": 9, "why": "an assign without the key"},
    ],
}


def test_each_class_shows_its_count_and_first_example() -> None:
    page = panel_html({"valid": True, "stats": {"abort-rewinds": BLOCK}})
    assert "<td>carries-on</td><td>4</td>" in page and "t0-&lt;1&gt;" in page
    assert '<a class="op" data-op="17">op 17</a>' in page
    assert '<a class="op" data-op="19">op 19</a>' in page
    assert "an assign without the key" in page
    assert "<td>rewinds-to-abort-start</td><td>1</td>" in page


def test_a_run_without_the_measure_has_no_panel() -> None:
    verdict: dict[str, Any] = {"valid": True, "stats": {"ops": 3}}
    assert panel_html(verdict) == ""
