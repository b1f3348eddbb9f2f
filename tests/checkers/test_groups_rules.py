"""The edge cases of docs/HISTORY-GROUPS.md, one small history each, and its malformed input."""

from __future__ import annotations

from typing import Any

import pytest
from history_builder import Hist

from checkers import check_history
from harness.base.errors import HistoryError

PC = [["poll"], ["commit"]]


def _sent(h: Hist, key: str, n: int) -> None:
    for o in range(n):
        h.send(0, key, o, 100 + o)


def _recs(key: str, first: int, last: int) -> dict[str, list[list[int]]]:
    return {key: [[o, 100 + o] for o in range(first, last)]}


def _join(h: Hist, p: int, group: str = "g", **extra: Any) -> None:
    h.invoke(p, "subscribe", ["x"])
    h.ops[-1].update(group=group, **extra)
    h.done(p, "ok", "subscribe", ["x"], group=group, **extra)


def _read(h: Hist, p: int, found: dict[str, int | None], group: str = "g",
          type_: str = "ok") -> int:
    h.invoke(p, "committed", [["committed", sorted(found)]])
    h.ops[-1]["group"] = group
    return h.done(p, type_, "committed", [["committed", found]], group=group)


def _verdict(h: Hist) -> dict[str, Any]:
    return check_history(h.ops)


def _types(h: Hist) -> list[str]:
    return [t for t in _verdict(h)["anomaly-types"] if t in
            ("lost-commit", "commit-skip", "garbage-commit")]


def _drain(h: Hist, n: int) -> None:
    """A default-group reader that reads everything, so every record is required."""
    h.op(9, "assign", ["x"], ["x"])
    h.ops[-1]["seek"] = h.ops[-2]["seek"] = "beginning"
    h.poll(9, _recs("x", 0, n))


def test_the_contract_example_is_valid() -> None:
    h = Hist()
    _sent(h, "x", 2)
    _join(h, 3, reset="earliest")
    h.op(3, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    _read(h, 4, {"x": 2, "y": None})
    h.op(5, "assign", ["y"], ["y"])
    h.ops[-2].update(group="g", seek="committed")
    h.ops[-1].update(group="g", seek="committed", committed={"y": None})
    v = _verdict(h)
    assert v["valid"] is True
    assert v["stats"]["commits"] == 1 and v["stats"]["committed-reads"] == 3


def test_a_commit_past_an_unread_record_is_a_commit_skip_once() -> None:
    h = Hist()
    _sent(h, "x", 3)
    _join(h, 1)
    y = h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 1)],
                             ["commit", {"x": 3}]])
    _read(h, 4, {"x": 3})
    _drain(h, 3)
    v = _verdict(h)
    assert v["anomalies"]["commit-skip"] == [
        {"key": "x", "group": "g", "via": "commit", "offset": 3, "op": y,
         "skipped": [101, 102], "count": 2}]  # the read of 3 later reports nothing new


def test_a_read_lower_than_an_ok_commit_is_a_lost_commit_unless_a_commit_explains_it() -> None:
    h = Hist()
    _sent(h, "x", 3)
    _join(h, 1)
    s = h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 3)],
                             ["commit", {"x": 3}]])
    o = _read(h, 4, {"x": 1})
    v = _verdict(h)
    assert v["anomalies"]["lost-commit"] == [
        {"key": "x", "group": "g", "via": "committed", "offset": 3, "writer": s, "read": 1,
         "op": o, "values": [101, 102]}]
    # an info commit of 1, invoked before the read ended, may have landed after: explained
    h2 = Hist()
    _sent(h2, "x", 3)
    _join(h2, 1)
    h2.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 3)], ["commit", {"x": 3}]])
    h2.op(2, "commit", [["commit", {"x": 1}]], None, type_="info")
    h2.ops[-2]["group"] = "g"
    _read(h2, 4, {"x": 1})
    assert _types(h2) == []


def test_a_null_read_after_a_commit_is_a_lost_commit_with_every_value_below() -> None:
    h = Hist()
    _sent(h, "x", 2)
    _join(h, 1)
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    _read(h, 4, {"x": None})
    (a,) = _verdict(h)["anomalies"]["lost-commit"]
    assert a["read"] is None and a["values"] == [100, 101]


def test_an_aborted_transactions_offset_read_back_is_garbage_with_its_writer() -> None:
    h = Hist()
    _sent(h, "x", 2)
    h.op(1, "assign", ["x"], ["x"])
    h.ops[-2]["group"] = h.ops[-1]["group"] = "g"
    txn = h.op(1, "txn", [["poll"], ["commit", {"x": 2}]],
               [["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]], type_="fail")
    _read(h, 4, {"x": 2})
    assert _verdict(h)["anomalies"]["garbage-commit"] == [
        {"key": "x", "group": "g", "offset": 2, "op": 9, "writer": txn}]


def test_an_ok_transaction_establishes_nothing_until_read() -> None:
    h = Hist()
    _sent(h, "x", 2)
    h.op(1, "assign", ["x"], ["x"])
    h.ops[-2]["group"] = h.ops[-1]["group"] = "g"
    h.op(1, "txn", [["poll"], ["commit", {"x": 2}]],
         [["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    _read(h, 4, {"x": None})  # a pre-KIP-447 read may miss it: not a loss
    assert _types(h) == []
    _read(h, 4, {"x": 2})
    _read(h, 4, {"x": None})  # once read back, it is established
    assert _types(h) == ["lost-commit"]


def _txn_member(h: Hist, p: int) -> None:
    h.op(p, "assign", ["x"], ["x"])
    h.ops[-2]["group"] = h.ops[-1]["group"] = "g"


#: what process 1 does after its ok txn committed x=2 and before the first read is invoked
BETWEEN: dict[str, tuple[list[Any], list[Any], str]] = {
    "nothing": ([], [], "ok"),
    "an empty ok txn": ([["poll"], ["commit"]], [["poll", {}], ["commit", {}]], "ok"),
    "an aborted txn that sent": ([["send", "y", 7]], [["send", "y", [0, 7]]], "fail"),
    "an ok txn that sent": ([["send", "y", 7]], [["send", "y", [0, 7]]], "ok"),
    "an ok txn that committed offsets": ([["poll"], ["commit"]],
                                         [["poll", {}], ["commit", {"z": 0}]], "ok"),
}


def _two_txn_commits() -> Hist:
    """Process 2's ok txn commits x at 5, then process 1's commits x at 2: the group's
    offset for x ends at 2 once both transactions' markers are written."""
    h = Hist()
    _sent(h, "x", 5)
    _txn_member(h, 2)
    h.op(2, "txn", [["poll"], ["commit"]], [["poll", _recs("x", 0, 5)], ["commit", {"x": 5}]])
    _txn_member(h, 1)
    h.op(1, "txn", [["poll"], ["commit"]], [["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    return h


@pytest.mark.parametrize(("between", "lost"), [
    ("nothing", False), ("an empty ok txn", False), ("an aborted txn that sent", False),
    ("an ok txn that sent", True), ("an ok txn that committed offsets", True)])
def test_an_ok_transactions_offsets_may_land_until_its_process_next_transaction_ends(
        between: str, lost: bool) -> None:
    """Before Kafka 2.5 a read after an ok txn may still return the older offset (its
    markers are written after EndTxn returned), and a later read the txn's own: no loss.
    The process's next ok txn that sent or committed offsets ran after those markers were
    written (CONCURRENT_TRANSACTIONS until then); a drop seen after it is unexplained."""
    h = _two_txn_commits()
    invoke, done, type_ = BETWEEN[between]
    if invoke:
        h.op(1, "txn", invoke, done, type_=type_)
    s = _read(h, 4, {"x": 5})  # invoked after the txn of 2 ended: the markers were not written
    o = _read(h, 5, {"x": 2})
    if not lost:
        assert _types(h) == []
        return
    assert _verdict(h)["anomalies"]["lost-commit"] == [
        {"key": "x", "group": "g", "via": "committed", "offset": 5, "writer": s, "read": 2,
         "op": o, "values": [102, 103, 104]}]


def test_a_transaction_settled_while_the_establishing_read_ran_still_explains() -> None:
    """end(L) is the end of the next transaction, not its invoke: one that ends after the
    establishing read was invoked leaves the drop explained."""
    h = _two_txn_commits()
    h.invoke(4, "committed", [["committed", ["x"]]])
    h.ops[-1]["group"] = "g"
    h.op(1, "txn", [["send", "y", 7]], [["send", "y", [0, 7]]])
    h.done(4, "ok", "committed", [["committed", {"x": 5}]], group="g")
    _read(h, 5, {"x": 2})
    assert _types(h) == []


def test_a_fresh_start_at_latest_excuses_what_lies_below_it_and_earliest_does_not() -> None:
    for reset, expected in (("latest", []), ("earliest", ["commit-skip"])):
        h = Hist()
        _sent(h, "x", 3)
        _join(h, 1, reset=reset)
        h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 2, 3)],
                             ["commit", {"x": 3}]])
        _drain(h, 3)
        assert _types(h) == expected, reset


def test_a_restart_above_the_last_commit_is_a_commit_skip_via_start() -> None:
    h = Hist()
    _sent(h, "x", 4)
    _join(h, 1)
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 1)], ["commit", {"x": 1}]])
    h.op(1, "crash", None, None, type_="info")
    _join(h, 2)
    y = h.op(2, "poll", [["poll"]], [["assigned", ["x"]], ["poll", _recs("x", 3, 4)]])
    _drain(h, 4)
    v = _verdict(h)
    assert v["anomalies"]["commit-skip"] == [
        {"key": "x", "group": "g", "via": "start", "offset": 3, "op": y,
         "skipped": [101, 102], "count": 2}]


def test_a_restart_below_the_last_commit_is_a_lost_commit_via_start() -> None:
    h = Hist()
    _sent(h, "x", 4)
    _join(h, 1)
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 3)], ["commit", {"x": 3}]])
    _join(h, 2)
    f_op = h.op(2, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 1, 4)],
                                ["commit", {"x": 1}]])  # its own later commit explains nothing
    (a,) = _verdict(h)["anomalies"]["lost-commit"]
    assert (a["via"], a["offset"], a["read"], a["op"], a["values"]) == (
        "start", 3, 1, f_op, [101, 102])


def test_an_unknown_read_excuses_records_above_its_bound() -> None:
    h = Hist()
    _sent(h, "x", 3)
    _join(h, 1)
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 1)], ["commit", {"x": 1}]])
    h.invoke(1, "poll", [["poll"]])
    h.done(1, "info", "poll")  # died inside a poll: it may have handed over 101, 102
    _read(h, 4, {"x": 3})
    _drain(h, 3)
    # the read of 3 claims 101, 102, excused; yet no commit of 3 exists: garbage
    assert _types(h) == ["garbage-commit"]


def test_auto_commit_groups_get_only_commit_skip() -> None:
    h = Hist()
    _sent(h, "x", 3)
    _join(h, 1, **{"auto-commit": True})
    h.op(1, "poll", [["poll"]], [["poll", _recs("x", 0, 1)]])
    _read(h, 4, {"x": 3})
    _drain(h, 3)
    assert _types(h) == ["commit-skip"]  # not garbage: its commits are not recorded


def test_groups_are_judged_apart() -> None:
    h = Hist()
    _sent(h, "x", 2)
    _join(h, 1, group="a")
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    _read(h, 4, {"x": 2}, group="b")  # b never committed, nor received anything
    _drain(h, 2)
    assert sorted(_types(h)) == ["commit-skip", "garbage-commit"]


def test_a_rebalance_inside_a_poll_is_not_an_internal_poll_skip() -> None:
    def run(mid: list[Any]) -> list[str]:
        h = Hist()
        _sent(h, "x", 6)
        _join(h, 1)
        h.op(1, "poll", [["poll"]], [["poll", _recs("x", 0, 1)], *mid,
                                     ["poll", _recs("x", 4, 5)]])
        return list(_verdict(h)["anomaly-types"])
    assert "int-poll-skip" in run([])
    assert "int-poll-skip" not in run([["revoked", ["x"]], ["assigned", ["x"]]])


BAD: list[tuple[str, dict[str, Any], dict[str, Any] | None, str]] = [
    ("an unknown f", {"f": "seek", "value": []}, None, "unknown client f"),
    ("commit in a send", {"f": "send", "value": [["commit"]]}, None, "not allowed in a send"),
    ("assigned in an invoke", {"f": "poll", "value": [["assigned", ["x"]]]}, None,
     "completions, not invokes"),
    ("committed offsets in an invoke", {"f": "committed", "value": [["committed", {"x": 1}]]},
     None, "names keys, not offsets"),
    ("an ok commit without offsets", {"f": "commit", "value": [["commit"]]},
     {"type": "ok", "value": [["commit"]]}, "must hold its offsets"),
    ("an ok committed without result", {"f": "committed", "value": [["committed", ["x"]]]},
     {"type": "ok", "value": [["committed", ["x"]]]}, "must hold its result"),
    ("a negative offset", {"f": "commit", "value": [["commit", {"x": -1}]]}, None,
     "is not an integer from 0"),
    ("a null commit offset", {"f": "commit", "value": [["commit", {"x": None}]]}, None,
     "is not an integer from 0"),
    ("a group that is a number", {"f": "poll", "value": [["poll"]], "group": 7}, None,
     "group must be a string"),
    ("auto-commit not a boolean", {"f": "subscribe", "value": ["x"], "auto-commit": "yes"},
     None, "auto-commit must be"),
    ("an unknown reset", {"f": "subscribe", "value": ["x"], "reset": "none"}, None,
     "reset must be"),
    ("an unknown seek", {"f": "assign", "value": ["x"], "seek": "end"}, None, "seek must be"),
    ("a committed field that is a list", {"f": "assign", "value": ["x"]},
     {"type": "ok", "value": ["x"], "committed": [1]}, "committed must map"),
    ("a commit op with a poll", {"f": "commit", "value": [["poll"]]}, None,
     "holds only commit"),
]


@pytest.mark.parametrize(("invoke", "completion", "words"),
                         [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_group_input_is_refused_at_its_line(
    invoke: dict[str, Any], completion: dict[str, Any] | None, words: str
) -> None:
    h = Hist()
    h.send(0, "x", 0, 1)
    h.add(1, "invoke", invoke["f"], invoke["value"],
          **{k: v for k, v in invoke.items() if k not in ("f", "value")})
    if completion is not None:
        h.add(1, completion["type"], invoke["f"], completion["value"],
              **{k: v for k, v in completion.items() if k not in ("type", "value")})
    with pytest.raises(HistoryError) as err:
        check_history(h.ops)
    assert words in str(err.value)
    assert err.value.line == (4 if completion is not None else 3)


def _evicted(h: Hist) -> int:
    """Member 1 commits 2, stalls past its poll interval and is refused its commit of 4
    (``fail``: the group had evicted it); member 2 takes x over from the committed 2."""
    _sent(h, "x", 4)
    _join(h, 1)
    h.op(1, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 0, 2)], ["commit", {"x": 2}]])
    refused = h.op(1, "poll", PC, [["poll", _recs("x", 2, 4)], ["commit", {"x": 4}]],
                   type_="fail")
    _join(h, 2)
    h.op(2, "poll", PC, [["assigned", ["x"]], ["poll", _recs("x", 2, 3)], ["commit", {"x": 3}]])
    h.op(1, "poll", PC, [["revoked", ["x"]], ["poll", {}], ["commit", {}]])
    return refused


def test_an_evicted_members_refused_commit_counts_for_nothing() -> None:
    h = Hist()
    _evicted(h)
    _read(h, 4, {"x": 3})
    assert _types(h) == []
    # had Kafka applied the refused commit after all, a read of 4 nobody else committed
    # is garbage, written by the refused op
    h2 = Hist()
    refused = _evicted(h2)
    o = _read(h2, 4, {"x": 4})
    assert _verdict(h2)["anomalies"]["garbage-commit"] == [
        {"key": "x", "group": "g", "offset": 4, "op": o, "writer": refused}]
