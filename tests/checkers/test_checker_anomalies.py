"""One small hand-made history per anomaly type of docs/HISTORY.md, plus its edge cases."""

from __future__ import annotations

from typing import Any

import pytest
from history_builder import POLL, Hist

from checkers import check_history


def anomalies(verdict: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return list(verdict["anomalies"].get(kind, []))


# --- lost-write and unseen --------------------------------------------------------------


def test_lost_write_below_what_a_reader_reached() -> None:
    h = Hist()
    a = h.op(0, "send", [["send", "x", 1], ["send", "x", 2]],
             [["send", "x", [1, 1]], ["send", "x", [2, 2]]])
    h.send(1, "x", 3, 3)
    p = h.poll(2, {"x": [[1, 1], [3, 3]]})
    v = check_history(h.ops)
    assert v["valid"] is False
    assert "lost-write" in v["bad-anomaly-types"]
    lost = anomalies(v, "lost-write")
    assert [(x["key"], x["value"], x["index"], x["max-read-index"], x["writer"], x["max-read"])
            for x in lost] == [("x", 2, 1, 2, a, p)]
    assert anomalies(v, "unseen") == [{"key": "x", "count": 1, "values": [2], "writers": [a]}]


def test_value_above_every_read_is_unseen_but_not_lost() -> None:
    h = Hist()
    h.send(0, "x", 0, 1)
    writer = h.send(0, "x", 1, 2)
    h.poll(1, {"x": [[0, 1]]})
    v = check_history(h.ops)
    assert v["anomaly-types"] == ["unseen"]
    assert anomalies(v, "unseen") == [
        {"key": "x", "count": 1, "values": [2], "writers": [writer]}
    ]


@pytest.mark.parametrize(
    ("read_other_info_value", "lost_values", "max_read_index"),
    [
        pytest.param(False, [9], 1, id="unproven-info-send-stays-out-of-the-order"),
        pytest.param(True, [9, 10], 3, id="info-send-proven-by-a-read-is-committed"),
    ],
)
def test_info_sends_count_only_when_a_read_proves_them(
    read_other_info_value: bool, lost_values: list[int], max_read_index: int
) -> None:
    h = Hist()
    h.send(0, "x", 0, 9)  # ok, never read: lost
    h.op(1, "send", [["send", "x", 10], ["send", "x", 12]],
         [["send", "x", [1, 10]], ["send", "x", [3, 12]]], type_="info")
    h.send(2, "x", 2, 11)
    h.poll(3, {"x": [[2, 11], [3, 12]]} if read_other_info_value else {"x": [[2, 11]]})
    lost = anomalies(check_history(h.ops), "lost-write")
    assert [x["value"] for x in lost] == lost_values
    assert {x["max-read-index"] for x in lost} == {max_read_index}


def test_info_values_are_never_unseen() -> None:
    h = Hist()
    h.send(0, "x", None, 1, type_="info")
    h.send(1, "x", 0, 2)
    h.poll(2, {"x": [[0, 2]]})
    assert check_history(h.ops)["valid"] is True


# --- the log itself -----------------------------------------------------------------------


def test_duplicate_value_at_two_offsets() -> None:
    h = Hist()
    writer = h.send(0, "x", 0, 1)
    h.send(0, "x", 1, 2)
    reader = h.poll(1, {"x": [[0, 1], [1, 2], [2, 1]]})
    v = check_history(h.ops)
    assert anomalies(v, "duplicate") == [
        {"key": "x", "value": 1, "count": 2, "offsets": [0, 2], "writer": writer,
         "reader": reader}
    ]
    assert "duplicate" in v["bad-anomaly-types"]


def test_inconsistent_offsets_when_readers_disagree() -> None:
    h = Hist()
    first = h.send(0, "x", 0, 1)
    second = h.send(1, "x", 0, 2)
    h.poll(2, {"x": [[0, 1]]})
    h.poll(3, {"x": [[0, 2]]})
    v = check_history(h.ops)
    assert anomalies(v, "inconsistent-offsets") == [
        {"key": "x", "offset": 0, "index": 0, "values": [1, 2],
         "witnesses": {"1": first, "2": second}}
    ]
    assert v["bad-anomaly-types"] == ["inconsistent-offsets"]


def test_offset_holes_are_not_skips() -> None:
    h = Hist()
    h.op(0, "send", [["send", "x", 1], ["send", "x", 2]],
         [["send", "x", [0, 1]], ["send", "x", [5, 2]]])
    h.poll(1, {"x": [[0, 1], [5, 2]]})
    v = check_history(h.ops)
    assert v["valid"] is True
    assert v["anomaly-types"] == []


# --- sends ------------------------------------------------------------------------------


def _reordered_sends(between: list[tuple[str, Any, str]]) -> tuple[Hist, int, int]:
    h = Hist()
    a = h.send(0, "x", 1, 2)
    for f, value, type_ in between:
        h.op(0, f, value, value if type_ == "ok" else None, type_=type_)
    b = h.send(0, "x", 0, 1)
    h.poll(1, {"x": [[0, 1], [1, 2]]})
    return h, a, b


@pytest.mark.parametrize(
    ("between", "reported"),
    [
        pytest.param([], True, id="back-to-back"),
        pytest.param([("assign", ["y"], "ok")], False, id="assign-without-the-key-resets"),
        pytest.param([("subscribe", ["y"], "ok")], False, id="subscribe-without-the-key-resets"),
        pytest.param([("assign", ["x"], "ok")], True, id="assign-keeping-the-key"),
        pytest.param([("assign", ["y"], "fail")], True, id="failed-assign-changes-nothing"),
    ],
)
def test_nonmonotonic_send(between: list[tuple[str, Any, str]], reported: bool) -> None:
    h, a, b = _reordered_sends(between)
    found = anomalies(check_history(h.ops), "nonmonotonic-send")
    expected = [{"key": "x", "values": [2, 1], "delta": -1, "ops": [a, b]}]
    assert found == (expected if reported else [])


def test_failed_sends_take_no_part_in_send_order() -> None:
    h = Hist()
    h.send(0, "x", 1, 2)
    h.send(0, "x", None, 1, type_="fail")
    h.poll(1, {"x": [[1, 2]]})
    assert anomalies(check_history(h.ops), "nonmonotonic-send") == []


def test_int_nonmonotonic_send() -> None:
    h = Hist()
    op = h.op(0, "send", [["send", "x", 1], ["send", "x", 2]],
              [["send", "x", [1, 1]], ["send", "x", [0, 2]]])
    h.poll(1, {"x": [[0, 2], [1, 1]]})
    v = check_history(h.ops)
    assert anomalies(v, "int-nonmonotonic-send") == [
        {"key": "x", "values": [1, 2], "delta": -1, "op": op}
    ]
    assert v["valid"] is False


def test_int_send_skip_is_informational() -> None:
    h = Hist()
    op = h.op(0, "send", [["send", "x", 1], ["send", "x", 2]],
              [["send", "x", [0, 1]], ["send", "x", [2, 2]]])
    h.send(1, "x", 1, 3)
    h.poll(2, {"x": [[0, 1], [1, 3], [2, 2]]})
    v = check_history(h.ops)
    assert anomalies(v, "int-send-skip") == [
        {"key": "x", "values": [1, 2], "delta": 2, "skipped": [3], "op": op}
    ]
    assert v["valid"] is True
    assert v["bad-anomaly-types"] == []


# --- polls ------------------------------------------------------------------------------


def _three_records() -> Hist:
    h = Hist()
    for offset, value in ((0, 1), (1, 2), (2, 3)):
        h.send(0, "x", offset, value)
    h.poll(9, {"x": [[0, 1], [1, 2], [2, 3]]})
    return h


def test_poll_skip() -> None:
    h = _three_records()
    a = h.poll(1, {"x": [[0, 1]]})
    b = h.poll(1, {"x": [[2, 3]]})
    v = check_history(h.ops)
    assert anomalies(v, "poll-skip") == [{"key": "x", "delta": 2, "skipped": [2], "ops": [a, b]}]
    assert v["bad-anomaly-types"] == ["poll-skip"]


def test_poll_skip_is_informational_with_subscribe() -> None:
    h = _three_records()
    h.op(5, "subscribe", ["x"], ["x"])
    h.poll(1, {"x": [[0, 1]]})
    h.poll(1, {"x": [[2, 3]]})
    v = check_history(h.ops)
    assert v["anomaly-types"] == ["poll-skip"]
    assert v["valid"] is True


@pytest.mark.parametrize(
    ("middle", "expected"),
    [
        pytest.param("fail", [], id="failed-poll-does-not-advance"),
        pytest.param("ok", [{"key": "x", "values": [2, 2], "delta": 0}], id="ok-poll-advances"),
    ],
)
def test_nonmonotonic_poll_and_failed_polls(middle: str, expected: list[dict[str, Any]]) -> None:
    h = _three_records()
    h.poll(1, {"x": [[0, 1]]})
    h.poll(1, {"x": [[1, 2]]}, type_=middle)
    h.poll(1, {"x": [[1, 2], [2, 3]]})
    found = anomalies(check_history(h.ops), "nonmonotonic-poll")
    assert [{k: a[k] for k in ("key", "values", "delta")} for a in found] == expected


@pytest.mark.parametrize(
    ("reassign", "expected_skips"),
    [
        pytest.param([], 1, id="no-reassign"),
        pytest.param([["y"], ["x"]], 0, id="dropping-the-key-forgets-its-position"),
        pytest.param([["x", "y"]], 1, id="keeping-the-key-keeps-its-position"),
    ],
)
def test_assign_resets_read_positions(reassign: list[list[str]], expected_skips: int) -> None:
    h = _three_records()
    h.poll(1, {"x": [[0, 1]]})
    for keys in reassign:
        h.op(1, "assign", keys, keys)
    h.poll(1, {"x": [[2, 3]]})
    assert len(anomalies(check_history(h.ops), "poll-skip")) == expected_skips


def test_int_poll_skip() -> None:
    h = _three_records()
    op = h.poll(1, {"x": [[0, 1], [2, 3]]})
    assert anomalies(check_history(h.ops), "int-poll-skip") == [
        {"key": "x", "values": [1, 3], "delta": 2, "skipped": [2], "op": op}
    ]


@pytest.mark.parametrize(
    ("records", "values", "delta"),
    [
        pytest.param([[1, 2], [0, 1]], [2, 1], -1, id="backwards"),
        pytest.param([[0, 1], [0, 1]], [1, 1], 0, id="repeat"),
    ],
)
def test_int_nonmonotonic_poll(records: list[list[int]], values: list[int], delta: int) -> None:
    h = _three_records()
    op = h.poll(1, {"x": records}, type_="fail")  # applies to ops of any outcome
    assert anomalies(check_history(h.ops), "int-nonmonotonic-poll") == [
        {"key": "x", "values": values, "delta": delta, "op": op}
    ]


def test_empty_record_list_is_not_a_read() -> None:
    h = _three_records()
    h.poll(1, {"x": [[0, 1]]})
    h.poll(1, {"x": []})
    h.poll(1, {"x": [[1, 2]]})
    assert check_history(h.ops)["anomaly-types"] == []


# --- reads of things that should not be visible -------------------------------------------


@pytest.mark.parametrize(
    ("reader_outcome", "reported"),
    [pytest.param("ok", True, id="ok-read"), pytest.param("fail", False, id="failed-read")],
)
def test_g1a_aborted_read(reader_outcome: str, reported: bool) -> None:
    h = Hist()
    writer = h.send(0, "x", None, 1, type_="fail")
    reader = h.poll(1, {"x": [[0, 1]]}, type_=reader_outcome)
    found = anomalies(check_history(h.ops), "G1a")
    expected = [{"key": "x", "value": 1, "writer": writer, "reader": reader}]
    assert found == (expected if reported else [])


def test_precommitted_read() -> None:
    h = Hist()
    op = h.op(0, "txn", [["send", "x", 1], ["poll"]],
              [["send", "x", [0, 1]], ["poll", {"x": [[0, 1]]}]])
    v = check_history(h.ops)
    assert anomalies(v, "precommitted-read") == [{"op": op, "key": "x", "value": 1}]
    assert v["valid"] is False


def test_garbage_read() -> None:
    h = Hist()
    h.send(0, "x", 0, 1)
    op = h.poll(1, {"x": [[0, 1], [1, 99]]})
    v = check_history(h.ops)
    assert anomalies(v, "garbage-read") == [{"key": "x", "value": 99, "op": op}]
    assert "garbage-read" in v["bad-anomaly-types"]


# --- runs that end badly, or prove nothing -------------------------------------------------


def test_run_cut_off_mid_operation_counts_the_pending_op_as_info() -> None:
    h = Hist()
    h.invoke(0, "send", [["send", "x", 1]])
    h.poll(1, {"x": [[0, 1]]})
    h.invoke(1, "poll", POLL)
    v = check_history(h.ops)
    assert v["valid"] is True
    assert v["stats"]["never-completed"] == 2


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda h: h.nemesis("kill", {"node": "n1"}), id="only-nemesis"),
        pytest.param(lambda h: h.op(0, "assign", ["x"], ["x"]), id="only-assign"),
    ],
)
def test_nothing_to_judge_is_unknown(build: Any) -> None:
    h = Hist()
    build(h)
    v = check_history(h.ops)
    assert v["valid"] == "unknown"
    assert "nothing to judge" in v["error"]


def test_an_internal_failure_becomes_unknown_not_an_exception() -> None:
    h = Hist()
    huge = 2**70  # beyond the checker's 64-bit tables
    h.poll(0, {"x": [[0, huge], [1, huge + 1]]})
    v = check_history(h.ops)
    assert v["valid"] == "unknown"
    assert "internal error" in v["error"]


def test_max_anomalies_bounds_examples_but_not_counts() -> None:
    h = Hist()
    for value in range(5):
        h.send(0, "x", value, value)
    h.poll(1, {"x": [[4, 4]]})
    v = check_history(h.ops, max_anomalies=2)
    assert len(v["anomalies"]["lost-write"]) == 2
    assert v["anomaly-counts"]["lost-write"] == 4
