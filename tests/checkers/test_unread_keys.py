"""Keys a consumer group left unread (``stats``' ``group-unread-keys``, docs/HISTORY-GROUPS.md
"Unread keys").

Each rule has a small history written out by hand: a line a second, so that times in
the block are line numbers. A property test drives the measure with random group-shaped
histories (members subscribing, rebalancing, polling, crashing; plain and transactional
writes that commit, abort or stay open) and holds its intervals to the history's span.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.history_builder import Hist

from checkers import check_file, check_history, render_verdict
from checkers._measures import HEAD_LINES, REWINDS, STALLS, UNREAD, fed
from checkers._rewinds import Rewinds
from checkers._stalls import Stalls
from checkers._unread import MIN_S, Unread

S = 1_000_000_000
A, B, WRITER = 0, 1, 9


def timed(h: Hist) -> list[dict[str, Any]]:
    """``h``'s ops, a line a second: line i at i s."""
    for op in h.ops:
        op["time"] = op["index"] * S
    return h.ops


def join(h: Hist, process: int, keys: list[str], group: str = "g", reset: str = "earliest"
         ) -> None:
    h.invoke(process, "subscribe", keys)
    h.ops[-1].update({"group": group, "reset": reset})
    h.done(process, "ok", "subscribe", keys)


def poll(h: Hist, process: int, *mops: Any) -> int:
    """A member's poll op whose completion holds ``mops`` (a bare dict is a poll's result)."""
    value = [["poll", m] if isinstance(m, dict) else m for m in mops]
    return h.op(process, "poll", [["poll"]], value)


def block(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The measure alone, and what the check reports: the same."""
    alone = fed(Unread(), ops)
    assert alone is not None
    assert check_history(ops)["stats"][UNREAD] == alone
    return alone


def only_group(ops: list[dict[str, Any]]) -> dict[str, Any]:
    groups = block(ops)["groups"]
    assert len(groups) == 1
    return groups[0]


def test_a_key_revoked_and_given_to_nobody_is_unowned_until_assigned() -> None:
    h = Hist()
    join(h, A, ["k"])
    join(h, B, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    revoke = poll(h, A, {}, ["revoked", ["k"]], {})
    for _ in range(4):
        poll(h, A, {})
        poll(h, B, {})
    assign = poll(h, B, {}, ["assigned", ["k"]], {})
    poll(h, B, {})
    g = only_group(timed(h))
    assert g["owned-unread"] == []
    assert g["unowned"] == [{
        "key": "k", "seconds": float(assign - revoke), "start-s": float(revoke),
        "end-s": float(assign), "until-end": False, "released": "revoked",
        "released-by": revoke, "previous": A, "next": B, "member-polls": 9,
        "ended": "assigned", "ended-by": assign, "ended-s": float(assign)}]


def test_a_key_nobody_is_ever_given_is_unowned_until_the_groups_last_poll() -> None:
    """From the first subscribe that lists it; the members' crashes after their last poll
    (the end of the run) do not end it."""
    h = Hist()
    join(h, A, ["k", "j"])
    poll(h, A, {}, ["assigned", ["j"]], {})
    for _ in range(6):
        last = poll(h, A, {})
    h.op(A, "crash", None, None, "info")
    g = only_group(timed(h))
    (interval,) = g["unowned"]
    assert interval["key"] == "k" and interval["released"] == "subscribed"
    assert interval["released-by"] == 1 and interval["until-end"] is True
    assert interval["end-s"] == float(last) and interval["seconds"] == float(last - 1)
    assert interval["ended"] is None and interval["next"] is None


def test_a_member_that_leaves_releases_its_keys() -> None:
    """Its op ended info: the process is retired, and nobody else holds the key."""
    h = Hist()
    join(h, A, ["k"])
    join(h, B, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    h.invoke(A, "txn", [])
    left = h.done(A, "info", "txn")
    for _ in range(6):
        poll(h, B, {})
    (interval,) = only_group(timed(h))["unowned"]
    assert (interval["released"], interval["released-by"], interval["previous"]) == (
        "left", left, A)


def test_a_key_revoked_and_at_once_assigned_again_reports_nothing() -> None:
    h = Hist()
    join(h, A, ["k"])
    join(h, B, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    poll(h, A, {}, ["revoked", ["k"]], {})
    poll(h, B, {}, ["assigned", ["k"]], {})
    for o in range(8):
        h.send(WRITER, "k", o, o)
        poll(h, B, {"k": [[o, o]]})
    assert only_group(timed(h)) == {"group": "g", "unowned": [], "owned-unread": []}


def test_a_member_that_reads_its_key_promptly_reports_nothing() -> None:
    """It reads the backlog at its first poll and each write as it comes; without that
    first read, its empty polls would count."""
    for prompt in (True, False):
        h = Hist()
        join(h, A, ["k"])
        for o in range(3):
            h.send(WRITER, "k", o, o)
        poll(h, A, {}, ["assigned", ["k"]], {})
        poll(h, A, {"k": [[0, 0], [1, 1], [2, 2]]} if prompt else {})
        for o in range(3, 9):
            poll(h, A, {})
            h.send(WRITER, "k", o, o)
            poll(h, A, {"k": [[o, o]]} if prompt else {})
        unread = only_group(timed(h))["owned-unread"]
        assert (unread == []) is prompt


def owner_with_a_backlog(h: Hist) -> int:
    """A holds k; offsets 0-2 of k were written (ok) before; returns the assigning op."""
    join(h, A, ["k"])
    for o in range(3):
        h.send(WRITER, "k", o, 10 + o)
    return poll(h, A, {}, ["assigned", ["k"]], {})


def test_an_owner_that_returns_nothing_while_a_record_is_readable_is_unread() -> None:
    h = Hist()
    assigned = owner_with_a_backlog(h)
    empties = [poll(h, A, {}) for _ in range(7)]
    read = poll(h, A, {"k": [[0, 10]]})
    (interval,) = only_group(timed(h))["owned-unread"]
    assert interval == {
        "key": "k", "seconds": float(empties[-1] - assigned), "start-s": float(assigned),
        "end-s": float(empties[-1]), "until-end": False, "process": A,
        "assigned-by": assigned, "held-back": {"offset": 0, "value": 10, "op": 3},
        "empty-polls": 7, "first-poll": empties[0], "last-poll": empties[-1],
        "ended": "read", "ended-by": read, "ended-s": float(read)}


def test_it_starts_when_the_first_readable_write_completes() -> None:
    h = Hist()
    join(h, A, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    for _ in range(3):
        poll(h, A, {})  # nothing to read yet
    write = h.send(WRITER, "k", 0, 5)
    empties = [poll(h, A, {}) for _ in range(6)]
    (interval,) = only_group(timed(h))["owned-unread"]
    assert (interval["start-s"], interval["empty-polls"], interval["until-end"]) == (
        float(write), 6, True)
    assert interval["seconds"] == float(empties[-1] - write)


def test_the_held_back_record_lies_beyond_what_the_group_read_and_committed() -> None:
    """Another member read up to 2 and committed 4: the new owner may start at 4, so only
    offset 4 on proves anything, and with nothing there nothing is reported."""
    h = Hist()
    join(h, A, ["k"])
    join(h, B, ["k"])
    for o in range(4):
        h.send(WRITER, "k", o, o)
    poll(h, B, {}, ["assigned", ["k"]], {"k": [[0, 0], [1, 1], [2, 2]]},
         ["commit", {"k": 4}])
    poll(h, B, {}, ["revoked", ["k"]], {})
    poll(h, A, {}, ["assigned", ["k"]], {})
    for _ in range(7):
        poll(h, A, {})
    assert only_group(timed(h))["owned-unread"] == []
    h.send(WRITER, "k", 4, 4)
    for _ in range(7):
        poll(h, A, {})
    (interval,) = only_group(timed(h))["owned-unread"]
    assert interval["held-back"]["offset"] == 4


def test_a_committed_read_of_the_group_raises_the_floor() -> None:
    """The group's committed offset read back as 3 (by a process that is no member):
    the new owner may start at 3, past every record written."""
    h = Hist()
    join(h, A, ["k"])
    for o in range(3):
        h.send(WRITER, "k", o, o)
    h.invoke(WRITER + 1, "committed", [["committed", ["k"]]])
    h.ops[-1]["group"] = "g"
    h.done(WRITER + 1, "ok", "committed", [["committed", {"k": 3}]])
    poll(h, A, {}, ["assigned", ["k"]], {})
    for _ in range(7):
        poll(h, A, {})
    assert only_group(timed(h))["owned-unread"] == []
    h.send(WRITER, "k", 3, 3)
    for _ in range(7):
        poll(h, A, {})
    (interval,) = only_group(timed(h))["owned-unread"]
    assert interval["held-back"]["offset"] == 3


def test_a_poll_that_hands_over_other_records_proves_nothing() -> None:
    h = Hist()
    join(h, A, ["k", "j"])
    owner_with_a_backlog(h)
    poll(h, A, {}, ["assigned", ["j"]], {})
    for o in range(8):
        h.send(WRITER, "j", o, 100 + o)
        poll(h, A, {"j": [[o, 100 + o]]})
    assert only_group(timed(h))["owned-unread"] == []


@pytest.mark.parametrize(("how", "reported"), [
    ("ok", True),  # a committed transaction's write is readable
    ("fail", False),  # an aborted one's never is
    ("open", False),  # nor one still open
])
def test_transactional_writes_count_once_committed(how: str, reported: bool) -> None:
    h = Hist()
    join(h, A, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    h.invoke(WRITER, "txn", [["send", "k", 7]])
    if how != "open":
        h.done(WRITER, how, "txn", [["send", "k", [0, 7]]])
    for _ in range(8):
        poll(h, A, {})
    assert bool(only_group(timed(h))["owned-unread"]) is reported


def test_an_open_transaction_holds_back_the_plain_writes_after_it() -> None:
    """A read_committed reader reads nothing past an open transaction: the plain write
    that completed after it began is not readable until it ends."""
    h = Hist()
    join(h, A, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    h.invoke(WRITER, "txn", [["send", "k", 7]])
    h.send(WRITER + 1, "k", 1, 8)
    for _ in range(8):
        poll(h, A, {})
    assert only_group(timed(h))["owned-unread"] == []
    end = h.done(WRITER, "fail", "txn", [["send", "k", [0, 7]]])
    empties = [poll(h, A, {}) for _ in range(7)]
    (interval,) = only_group(timed(h))["owned-unread"]
    assert interval["held-back"]["offset"] == 1 and interval["first-poll"] == empties[0]
    assert interval["empty-polls"] == 7 and empties[0] > end


def test_an_info_transaction_stops_holding_back_once_a_read_proves_it() -> None:
    h = Hist()
    join(h, A, ["k"])
    join(h, B, ["k"])
    poll(h, A, {}, ["assigned", ["k"]], {})
    h.invoke(WRITER, "txn", [["send", "k", 7]])
    h.done(WRITER, "info", "txn")
    h.send(WRITER + 1, "k", 1, 8)
    for _ in range(8):
        poll(h, B, {})
    assert only_group(timed(h))["owned-unread"] == []
    h.op(WRITER + 2, "poll", [["poll"]], [["poll", {"k": [[0, 7]]}]])  # not a member
    for _ in range(8):
        poll(h, B, {})
    poll(h, A, {}, ["revoked", ["k"]], {})
    poll(h, B, {}, ["assigned", ["k"]], {})
    for _ in range(7):
        poll(h, B, {})
    (interval,) = only_group(timed(h))["owned-unread"]
    assert interval["process"] == B and interval["held-back"]["offset"] == 1


def test_a_write_whose_offset_is_unknown_holds_nothing_back() -> None:
    h = Hist()
    join(h, A, ["k"])
    h.send(WRITER, "k", None, 0)
    poll(h, A, {}, ["assigned", ["k"]], {})
    for _ in range(8):
        poll(h, A, {})
    assert only_group(timed(h))["owned-unread"] == []


def test_a_member_at_latest_proves_nothing_of_a_key_its_group_never_read() -> None:
    h = Hist()
    join(h, A, ["k"], reset="latest")
    for o in range(3):
        h.send(WRITER, "k", o, o)
    poll(h, A, {}, ["assigned", ["k"]], {})
    for _ in range(8):
        poll(h, A, {})
    assert only_group(timed(h))["owned-unread"] == []


def test_short_intervals_are_left_out() -> None:
    """Two empty polls, two lines each: 4 s from the assignment to the last."""
    h = Hist()
    owner_with_a_backlog(h)
    for _ in range(2):
        poll(h, A, {})
    assert MIN_S > 4
    assert only_group(timed(h))["owned-unread"] == []
    poll(h, A, {})
    assert only_group(timed(h))["owned-unread"][0]["seconds"] == 6.0


def test_the_check_reports_it_only_for_groups_that_record_rebalances() -> None:
    h = Hist()
    h.send(WRITER, "k", 0, 0)
    h.poll(A, {"k": [[0, 0]]})
    assert UNREAD not in check_history(timed(h))["stats"]  # no member
    join(h, A, ["k"])
    h.poll(A, {"k": []})
    assert UNREAD not in check_history(timed(h))["stats"]  # no rebalance recorded


def test_it_never_changes_the_verdict_and_the_explanation_names_the_longest() -> None:
    h = Hist()
    owner_with_a_backlog(h)
    for _ in range(7):
        poll(h, A, {})
    h.op(WRITER + 1, "poll", [["poll"]], [["poll", {"k": [[0, 10], [1, 11], [2, 12]]}]])
    ops = timed(h)
    verdict = check_history(ops)
    assert verdict["valid"] is True and verdict["anomaly-types"] == []
    text = render_verdict(verdict)
    assert "Longest unread key of a consumer group (liveness, not an anomaly; 1 interval" in text
    assert ("g k: 14.0 s unread, from 9.0 s to 23.0 s: process 0 held it (op 9) and returned "
            "nothing in 7 empty polls (ops 11..23) while offset 0 (value 10, op 3) was "
            "readable; until the end of the run.") in text


# -- property ------------------------------------------------------------------------

KEYS = ("k0", "k1")
MEMBERS = (0, 1, 2)
BY_KIND = {
    "join": st.tuples(st.just("join"), st.sampled_from(MEMBERS),
                      st.sampled_from([KEYS, KEYS[:1]])),
    "poll": st.tuples(st.just("poll"), st.sampled_from(MEMBERS),
                      st.lists(st.sampled_from(["assigned", "revoked", "poll", "poll", "read",
                                                "commit"]), max_size=3)),
    "write": st.tuples(st.just("write"), st.sampled_from(KEYS),
                       st.sampled_from(["send", "send", "ok", "fail", "info", "open"])),
    "leave": st.tuples(st.just("leave"), st.sampled_from(MEMBERS),
                       st.sampled_from(["crash", "info"])),
}
#: polls and writes most, so that members hold keys, records wait and polls find them
STEP = st.sampled_from(["poll"] * 5 + ["write"] * 3 + ["join", "leave"]).flatmap(
    BY_KIND.__getitem__)
#: every member joins first, so that most histories have a group to measure
STEPS = st.builds(lambda steps: [("join", m, KEYS) for m in MEMBERS] + steps,
                  st.lists(STEP, min_size=5, max_size=80))


def history(steps: list[tuple[str, Any, Any]], gaps: list[int]) -> list[dict[str, Any]]:
    """Well-formed group histories: members (fresh process numbers after they leave)
    subscribe, rebalance, poll what was written, commit; writers commit, abort or leave
    transactions open; times move on by ``gaps`` (ms)."""
    h = Hist()
    proc = {m: m for m in MEMBERS}
    log: dict[str, list[int]] = {k: [] for k in KEYS}
    value, writer = 0, 100
    for what, who, how in steps:
        if what == "join":
            join(h, proc[who], list(how))
        elif what == "poll":
            mops: list[Any] = []
            for tag in how:
                if tag in ("assigned", "revoked"):
                    mops.append([tag, list(KEYS[:1 + (value % 2)])])
                elif tag == "commit":
                    mops.append(["commit", {KEYS[0]: len(log[KEYS[0]])}])
                else:
                    k = KEYS[value % 2]
                    mops.append(["poll", {k: [[o, v] for o, v in enumerate(log[k])][-2:]}
                                 if tag == "read" else {}])
            poll(h, proc[who], *mops)
        elif what == "write":
            value += 1
            f = "send" if how == "send" else "txn"
            h.invoke(writer, f, [["send", who, value]])
            if how != "open":
                done = [["send", who, [len(log[who]), value]]]
                h.done(writer, "ok" if how == "send" else how, f,
                       None if how == "info" else done)
                if how in ("send", "ok"):
                    log[who].append(value)
            writer += 1 if how in ("info", "open") else 0
        else:
            f = "crash" if how == "crash" else "poll"
            h.invoke(proc[who], f, None if f == "crash" else [["poll"]])
            h.done(proc[who], "info", f)
            proc[who] += 10
    t = 0
    for op, gap in zip(h.ops, gaps * (len(h.ops) // max(len(gaps), 1) + 1), strict=False):
        t += gap * 1_000_000
        op["time"] = t
    return h.ops


def alone(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Each measure reading ``ops`` on its own, for the histories it measures."""
    out: dict[str, Any] = {}
    txns = [op for op in ops if op["f"] == "txn"]
    if txns:
        out[STALLS] = fed(Stalls(), ops)
    if any(op["type"] == "fail" for op in txns):
        out[REWINDS] = fed(Rewinds(), ops)
    unread = fed(Unread(), ops)
    if unread is not None:
        out[UNREAD] = unread
    return out


@settings(max_examples=100, deadline=None)
@given(steps=st.one_of(STEPS, st.lists(STEP, min_size=5, max_size=80)),
       gaps=st.lists(st.integers(0, 4000), min_size=1, max_size=20),
       head=st.sampled_from([HEAD_LINES, 1, 6]))
def test_intervals_lie_within_the_history_and_the_check_agrees(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, Any, Any]],
        gaps: list[int], head: int) -> None:
    """Whatever the order of the first ``subscribe`` and ``txn`` lines, and however the
    check reads the history (``head``: the lines its pass waits for them)."""
    ops = history(steps, gaps)
    path = tmp_path_factory.mktemp("u") / "h.jsonl"
    path.write_bytes(b"".join(orjson.dumps(op) + b"\n" for op in ops))
    want = alone(ops)
    with mock.patch("checkers._measures.HEAD_LINES", head):
        for verdict in (check_history(ops), check_file(path, jobs=1), check_file(path, jobs=2)):
            assert {k: verdict["stats"][k] for k in want} == want
            assert not {STALLS, REWINDS, UNREAD} - want.keys() & verdict["stats"].keys()
    got = want.get(UNREAD)
    if got is None:
        return
    span = ops[-1]["time"] / S
    longest = 0.0
    for g in got["groups"]:
        for part in ("unowned", "owned-unread"):
            for i in g[part]:
                assert MIN_S <= i["seconds"] <= span
                assert 0 <= i["start-s"] <= i["end-s"] <= span
                assert i["seconds"] == pytest.approx(i["end-s"] - i["start-s"], abs=0.002)
                assert i["until-end"] is (i["ended-by"] is None)
                longest = max(longest, i["seconds"])
            seconds = [i["seconds"] for i in g[part]]
            assert seconds == sorted(seconds, reverse=True)
    assert got["longest-s"] == longest
