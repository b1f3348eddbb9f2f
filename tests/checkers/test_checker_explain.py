"""The verdict rendered for a person: every anomaly type gets sentences naming its ops."""

from __future__ import annotations

from typing import Any

import pytest
from history_builder import Hist

from checkers import ANOMALY_TYPES, check_history, render_verdict


def test_cycle_is_explained_step_by_step() -> None:
    h = Hist()
    h.invoke(0, "txn", [["send", "x", 5], ["poll"]])
    h.invoke(1, "txn", [["send", "y", 6], ["poll"]])
    h.done(0, "ok", "txn", [["send", "x", [0, 5]], ["poll", {"y": [[0, 6]]}]])
    h.done(1, "ok", "txn", [["send", "y", [0, 6]], ["poll", {"x": [[0, 5]]}]])
    text = render_verdict(check_history(h.ops))
    assert "T1 = op 2 (process 0), T2 = op 3 (process 1)" in text
    assert "T1 < T2 because T2 read T1's write of 5 to x" in text
    assert "T2 < T1 because T1 read T2's write of 6 to y" in text


def test_output_is_bounded_and_says_how_many_more() -> None:
    h = Hist()
    for value in range(30):
        h.send(0, "x", value, value)
    h.poll(1, {"x": [[29, 29]]})
    text = render_verdict(check_history(h.ops))
    assert "lost-write: 29 found (makes the run invalid)." in text
    assert "... and 19 more" in text
    assert text.count("\n  - ") == 10 + 1  # ten lost writes, one unseen line


# A minimal example of every type, as the checker would report it.
EXAMPLES: dict[str, dict[str, Any]] = {
    "lost-write": {"key": "x", "value": 1, "index": 0, "max-read-index": 1, "writer": 1,
                   "max-read": 3},
    "unseen": {"key": "x", "count": 1, "values": [1]},
    "duplicate": {"key": "x", "value": 1, "count": 2, "offsets": [0, 4]},
    "inconsistent-offsets": {"key": "x", "offset": 4, "index": 2, "values": [1, 2]},
    "nonmonotonic-send": {"key": "x", "values": [2, 1], "delta": -1, "ops": [1, 3]},
    "int-nonmonotonic-send": {"key": "x", "values": [2, 1], "delta": -1, "op": 1},
    "int-send-skip": {"key": "x", "values": [1, 3], "delta": 2, "skipped": [2], "op": 1},
    "poll-skip": {"key": "x", "delta": 2, "skipped": [2], "ops": [1, 3]},
    "nonmonotonic-poll": {"key": "x", "values": [2, 2], "delta": 0, "ops": [1, 3]},
    "int-poll-skip": {"key": "x", "values": [1, 3], "delta": 2, "skipped": [2], "op": 1},
    "int-nonmonotonic-poll": {"key": "x", "values": [2, 1], "delta": -1, "op": 1},
    "G1a": {"key": "x", "value": 1, "writer": 1, "reader": 3},
    "precommitted-read": {"op": 1, "key": "x", "value": 1},
    "garbage-read": {"key": "x", "value": 99, "op": 1},
    "G0": {"cycle": [1, 3, 1], "steps": [
        {"from": 1, "to": 3, "type": "ww", "key": "x", "values": [1, 2]},
        {"from": 3, "to": 1, "type": "ww", "key": "y", "values": [3, 4]}]},
    "G1c": {"cycle": [1, 3, 1], "steps": [
        {"from": 1, "to": 3, "type": "wr", "key": "x", "value": 1},
        {"from": 3, "to": 1, "type": "wr", "key": "y", "value": 2}]},
    "lost-commit": {"key": "x", "group": "g1", "via": "committed", "offset": 5, "writer": 1,
                    "read": 2, "op": 3, "values": [7, 8, 9]},
    "commit-skip": {"key": "x", "group": None, "via": "commit", "offset": 5, "op": 1,
                    "skipped": [4], "count": 1},
    "garbage-commit": {"key": "x", "group": "g1", "offset": 9, "op": 1, "writer": None},
    "duplicate-output": {"key": "x", "group": "g1", "value": 4, "outputs": [["y", 7], ["y", 8]],
                         "writers": [1, 1], "count": 2},
    "missing-output": {"key": "x", "group": "g1", "offset": 9, "op": 1, "missing": [4],
                       "count": 1},
}


@pytest.mark.parametrize("kind", ANOMALY_TYPES)
def test_every_type_is_explained_in_words_naming_its_ops(kind: str) -> None:
    verdict = {
        "valid": False,
        "anomaly-types": [kind],
        "bad-anomaly-types": [kind],
        "anomalies": {kind: [EXAMPLES[kind]]},
        "stats": {"ops": 4},
        "ops": {"1": {"process": 7, "f": "send", "type": "ok"}},
    }
    text = render_verdict(verdict)
    (line,) = [x for x in text.splitlines() if x.startswith("  - ")]
    if kind in ("unseen", "duplicate", "inconsistent-offsets"):
        assert " of x " in line  # these name the key and values, not an op
    else:
        assert "op 1 (process 7)" in line
    assert "key=" not in line  # a sentence, not the generic field dump
