"""Fault band labels: the kind and the nodes it hit, short; the full value beside them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from results.report.fault_labels import MAX_FALLBACK, fault_label
from results.report.plot_data import nemesis_bands


@pytest.mark.parametrize(("kind", "value", "label"), [
    # the values below are completions as the nemesis kinds record them
    ("partition", {"shape": "one-way", "grudge": {"n2": ["n1", "n3"]}, "spread-ms": 3},
     "partition n2 | n1,n3 (one-way)"),
    ("partition", {"shape": "isolate n2", "isolated": [["n2"], ["n1", "n3"]]},
     "partition n2 | n1,n3"),
    ("partition", {"shape": "halves", "grudge": {"n1": ["n2", "n3"], "n2": ["n1"],
                                                 "n3": ["n1"]}},
     "partition n1 | n2,n3"),
    ("partition", {"shape": "bridge", "grudge": {"n1": ["n3"], "n3": ["n1"]}},
     "partition n1 | n3"),  # n2, the bridge, hears both: as_json leaves it out
    ("partition", {"shape": "x", "grudge": {"n1": ["n2"], "n3": ["n4"]}},
     "partition x (n1 drops n2; n3 drops n4)"),
    ("partition", {"shape": "majorities-ring", "withheld": True, "because": "quorum"},
     "partition withheld (majorities-ring)"),
    ("kill", {"killed": {"n1": 4242}, "target": "one"}, "kill n1"),
    ("kill", {"killed": {"n3": 1, "n1": 2}, "target": "minority"}, "kill n1,n3"),
    ("pause", {"paused": {"n2": 77}, "target": "leader:t0-3"}, "pause n2 (leader of t0-3)"),
    ("pause", {"paused": {"n2": 77}, "target": "leaders"}, "pause n2 (leaders)"),
    ("pause", {"paused": {}, "skipped": {"n3": "stopped"}, "target": "controller"},
     "pause none (controller)"),
    ("clock-bump", {"target": "one", "delta-ms": 5000, "offsets-ms": {"n3": 5000}},
     "clock-bump n3"),
    ("packet", {"target": "all", "nodes": ["n1", "n2"], "applied": {}}, "packet n1,n2"),
    ("power-loss", {"lost": {"n1": {"dropped": 3}}, "target": "all"}, "power-loss n1"),
    ("kill", {"target": "followers:t0-0"}, "kill followers of t0-0"),
    ("await-recovery", {"recovered": True, "seconds": 1.62, "waited-for": ["broker n3"]},
     "await-recovery held after 1.62 s"),
    ("await-recovery", {"recovered": False, "seconds": 2.11, "cut-short": True},
     "await-recovery did not hold after 2.11 s (cut short)"),
    ("await-state", {"held": True, "seconds": 4}, "await-state held after 4 s"),
    ("pause", {"paused": ["n3"]}, "pause n3"),
    ("clock-bump", {"n1": 250}, "clock-bump n1"),
    ("partition", "p", "partition p"),
    ("kill", None, "kill"),
])
def test_labels_name_the_kind_and_the_nodes(kind: str, value: Any, label: str) -> None:
    assert fault_label(kind, value) == label


@given(st.recursive(st.none() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20),
       st.sampled_from(["partition", "kill", "pause", "clock-freeze", "packet", "other"]))
def test_any_value_gets_a_short_label(value: Any, kind: str) -> None:
    label = fault_label(kind, value)
    assert label.startswith(kind)
    if not isinstance(value, str):  # a string value is the target as written
        assert len(label) <= len(kind) + 1 + MAX_FALLBACK + 64


def test_a_band_keeps_the_whole_value_for_its_details() -> None:
    value = {"shape": "one-way", "grudge": {"n2": ["n1", "n3"]}, "clients-cut": [], "x": "y" * 200}
    ops = [{"index": 0, "time": 1, "process": "nemesis", "type": "info",
            "f": "start-partition", "value": value},
           {"index": 1, "time": 9, "process": "nemesis", "type": "info",
            "f": "stop-partition", "value": None}]
    (band,) = nemesis_bands(ops, end_time=10)
    assert band.label == "partition n2 | n1,n3 (one-way)"
    assert '"y' + "y" * 199 + '"' in band.detail
