"""The report's scenario panel: bug, sources, expected vs observed, proving ops; none
for a run that is no scenario's; everything escaped."""

from __future__ import annotations

from typing import Any

from results.report.scenario_panel import panel_html

BLOCK = {"name": "hw-truncation", "variant": None, "version": "0.10.2", "bug": "KIP-101 <b>",
         "story": "a follower truncates", "sources": ["https://issues.apache.org/jira/KAFKA-1211",
                                                     "javascript:alert(1)"],
         "expected": {"text": "invalid: lost-write"}}


def test_a_scenario_run_shows_its_bug_sources_and_proving_ops() -> None:
    verdict: dict[str, Any] = {"valid": False, "anomaly-counts": {"lost-write": 2},
                               "anomalies": {"lost-write": [{"op": 17, "value": 5}]}}
    page = panel_html({"scenario": BLOCK}, verdict)
    assert '<a href="https://issues.apache.org/jira/KAFKA-1211">' in page
    assert "javascript:alert(1)" in page and 'href="javascript' not in page
    assert "KIP-101 &lt;b&gt;" in page and "observed: <b>invalid: lost-write (2)</b>" in page
    assert "proving ops of lost-write" in page and "&quot;op&quot;: 17" in page


def test_a_plain_run_has_no_panel() -> None:
    assert panel_html({"name": "x"}, {"valid": True}) == ""
