"""G0 and G1c: which edges count, which cycles make a run invalid, and the time budget."""

from __future__ import annotations

from typing import Any

import pytest
from history_builder import Hist

from checkers import check_history


def _wr_cycle() -> tuple[Hist, int, int]:
    """T1 sends x=1 and reads y=2; T2 sends y=2 and reads x=1."""
    h = Hist()
    h.invoke(0, "txn", [["send", "x", 1], ["poll"]])
    h.invoke(1, "txn", [["send", "y", 2], ["poll"]])
    t1 = h.done(0, "ok", "txn", [["send", "x", [0, 1]], ["poll", {"y": [[0, 2]]}]])
    t2 = h.done(1, "ok", "txn", [["send", "y", [0, 2]], ["poll", {"x": [[0, 1]]}]])
    return h, t1, t2


@pytest.mark.parametrize("ww_deps", [False, True], ids=["wr-edges", "wr-and-ww-edges"])
def test_g1c_through_write_read_edges_alone_is_invalid(ww_deps: bool) -> None:
    h, t1, t2 = _wr_cycle()
    v = check_history(h.ops, ww_deps=ww_deps)
    assert v["valid"] is False
    assert v["bad-anomaly-types"] == ["G1c"]
    (cycle,) = v["anomalies"]["G1c"]
    assert cycle["cycle"] == [t1, t2, t1]
    assert cycle["steps"] == [
        {"from": t1, "to": t2, "type": "wr", "key": "x", "value": 1},
        {"from": t2, "to": t1, "type": "wr", "key": "y", "value": 2},
    ]


def test_failed_ops_take_no_part_in_cycles() -> None:
    h, _, t2 = _wr_cycle()
    h.ops[t2]["type"] = "fail"
    v = check_history(h.ops)
    assert "G1c" not in v["anomaly-types"]


def _mixed_cycle() -> tuple[Hist, int, int]:
    """T2 read T1's x; T1's y comes right after T2's y in y's order: a wr + ww cycle."""
    h = Hist()
    t1 = h.op(0, "send", [["send", "x", 1], ["send", "y", 3]],
              [["send", "x", [0, 1]], ["send", "y", [1, 3]]])
    t2 = h.op(1, "txn", [["poll"], ["send", "y", 2]],
              [["poll", {"x": [[0, 1]]}], ["send", "y", [0, 2]]])
    h.poll(2, {"x": [[0, 1]], "y": [[0, 2], [1, 3]]})
    return h, t1, t2


def test_cycle_through_ww_order_needs_ww_deps_and_is_informational() -> None:
    h, t1, t2 = _mixed_cycle()
    assert check_history(h.ops)["anomaly-types"] == []
    v = check_history(h.ops, ww_deps=True)
    assert v["valid"] is True
    assert v["anomaly-types"] == ["G1c"]
    (cycle,) = v["anomalies"]["G1c"]
    assert cycle["cycle"] == [t1, t2, t1]
    assert [s["type"] for s in cycle["steps"]] == ["wr", "ww"]
    assert cycle["steps"][1] == {"from": t2, "to": t1, "type": "ww", "key": "y", "values": [2, 3]}


def test_g0_write_cycle_is_informational() -> None:
    h = Hist()
    t1 = h.op(0, "send", [["send", "x", 1], ["send", "y", 2]],
              [["send", "x", [0, 1]], ["send", "y", [1, 2]]])
    t2 = h.op(1, "send", [["send", "x", 3], ["send", "y", 4]],
              [["send", "x", [1, 3]], ["send", "y", [0, 4]]])
    h.poll(2, {"x": [[0, 1], [1, 3]], "y": [[0, 4], [1, 2]]})
    v = check_history(h.ops, ww_deps=True)
    assert v["valid"] is True
    assert v["anomalies"]["G0"] == [
        {
            "cycle": [t1, t2, t1],
            "steps": [
                {"from": t1, "to": t2, "type": "ww", "key": "x", "values": [1, 3]},
                {"from": t2, "to": t1, "type": "ww", "key": "y", "values": [4, 2]},
            ],
        }
    ]


def _ring(n: int) -> list[dict[str, Any]]:
    """n transactions, each reading the previous one's write: one long wr cycle."""
    h = Hist()
    for i in range(n):
        h.invoke(i, "txn", [["send", f"k{i}", i], ["poll"]])
    for i in range(n):
        prev = (i - 1) % n
        h.done(i, "ok", "txn", [["send", f"k{i}", [0, i]], ["poll", {f"k{prev}": [[0, prev]]}]])
    return h.ops


def test_shortest_cycle_in_a_long_ring() -> None:
    v = check_history(_ring(50))
    (cycle,) = v["anomalies"]["G1c"]
    assert len(cycle["cycle"]) == 51
    assert v["valid"] is False


def test_out_of_time_is_unknown_and_says_so() -> None:
    v = check_history(_ring(50), cycle_time_budget_s=0.0)
    assert v["valid"] == "unknown"
    assert "time budget" in v["error"]
    assert v["stats"]["cycle-search"]["complete"] is False
