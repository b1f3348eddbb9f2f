"""The read_committed stall (``stats``' ``read-committed-stalls``, docs/HISTORY.md "Read stalls").

Histories come from a small model of one partition read at read_committed: polls at a
fixed interval, each reading every committed record below the last stable offset;
transactions committed or aborted between two polls; optionally one transaction that
is never ended (a hanging transaction) before later committed ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import check_history
from checkers._measures import fed
from checkers._stalls import Stalls

MS = 1_000_000


@dataclass(frozen=True)
class Write:
    """A transaction of ``n`` records to key ``k`` in the gap after poll ``slot``."""

    slot: int
    at: float  # where in the gap, 0..1 (exclusive)
    ok: bool
    n: int


def model(writes: list[Write], polls: int, gap_ms: int, hang: Write | None = None
          ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The history, and what the model knows: the held-back write's op and commit time,
    the times of the polls and of the last read that moved the partition on."""
    events: list[tuple[int, int, Any]] = [((i + 1) * gap_ms * MS, 0, i) for i in range(polls)]
    for j, w in enumerate([*writes, *([hang] if hang else [])]):
        t = (w.slot + 1) * gap_ms * MS + int(w.at * gap_ms * MS)
        events.append((t, 1, (j, w)))
    events.sort(key=lambda e: (e[0], e[1]))
    ops: list[dict[str, Any]] = []
    log: list[tuple[int, int, bool]] = []  # (offset, value, committed)
    lso: int | None = None  # the first offset of the open transaction
    positions = {0: -1, 1: -1}
    top, moved_at, value = -1, 0, 0
    truth: dict[str, Any] = {"polls": []}

    def line(process: int, kind: str, f: str, v: Any, t: int) -> None:
        ops.append({"index": len(ops), "time": t, "process": process, "type": kind, "f": f,
                    "value": v})

    for t, tag, what in events:
        if tag == 0:
            reader = what % 2
            line(reader, "invoke", "poll", [["poll"]], t)
            got = [[o, v] for o, v, c in log
                   if c and o > positions[reader] and (lso is None or o < lso)]
            if got:
                positions[reader] = got[-1][0]
                if got[-1][0] > top:
                    top, moved_at = got[-1][0], t
            line(reader, "ok", "poll", [["poll", {"k": got} if got else {}]], t)
            truth["polls"].append(t)
            continue
        j, w = what
        process = 2 + j
        sends = []
        offset = len(log) and log[-1][0] + 2  # every transaction ends with a marker
        for i in range(w.n):
            log.append((offset + i, value, w.ok and w is not hang))
            sends.append((offset + i, value))
            value += 1
        line(process, "invoke", "txn", [["send", "k", v] for _, v in sends], t)
        if w is hang:
            lso = offset
            continue
        line(process, "ok" if w.ok else "fail", "txn",
             [["send", "k", [o, v]] for o, v in sends], t)
        if w.ok and lso is not None and "held" not in truth:
            truth.update(held=len(ops) - 1, held_offset=offset, committed=t)
    truth["moved_at"] = moved_at
    return ops, truth


WRITES = st.lists(
    st.builds(Write, slot=st.integers(0, 19), at=st.floats(0.05, 0.95), ok=st.booleans(),
              n=st.integers(1, 3)),
    max_size=25,
)
GAPS = st.integers(100, 5000)


@settings(max_examples=200, deadline=None)
@given(writes=WRITES, polls=st.integers(1, 20), gap_ms=GAPS)
def test_no_open_transaction_no_stall_longer_than_the_gap_between_polls(
        writes: list[Write], polls: int, gap_ms: int) -> None:
    ops, _ = model(writes, polls, gap_ms)
    stalls = fed(Stalls(), ops)
    assert stalls["longest-s"] <= gap_ms / 1000
    assert all(s["seconds"] <= gap_ms / 1000 for s in stalls["stalls"])


@settings(max_examples=200, deadline=None)
@given(before=WRITES, hang_slot=st.integers(0, 10), after=st.integers(3, 8),
       at=st.floats(0.05, 0.9), gap_ms=GAPS, data=st.data())
def test_a_never_ended_transaction_before_committed_writes_stalls_to_the_end(
        *, before: list[Write], hang_slot: int, after: int, at: float, gap_ms: int,
        data: st.DataObject) -> None:
    """The first committed write after the hanging transaction is held back from the
    next poll to the last, longer than the gap between polls, "until the end"."""
    hang = Write(hang_slot + 1, at, True, data.draw(st.integers(1, 3)))
    commit_at = data.draw(st.floats(at + 0.01, 0.99))
    committed = Write(hang_slot + 1, commit_at, True, 1)
    polls = hang_slot + 2 + after
    early = [w for w in before if (w.slot, w.at) < (hang.slot, at)]
    first = Write(0, 0.5, True, 1)  # read by the poll after it: a key nobody read has no stall
    ops, truth = model([first, *early, committed], polls, gap_ms, hang=hang)
    stalls = fed(Stalls(), ops)
    (stall,) = stalls["stalls"]
    start = max(truth["committed"], truth["moved_at"])
    assert stall["key"] == "k"
    assert stall["until-end"] is True and stall["ended-by"] is None
    assert stall["held-back"]["op"] == truth["held"]
    assert stall["held-back"]["offset"] == truth["held_offset"]
    assert abs(stall["seconds"] - (truth["polls"][-1] - start) / 1e9) < 0.002
    assert stall["seconds"] > gap_ms / 1000
    assert stalls["longest-s"] == stall["seconds"]


def _txn_history(tail: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Process 4 commits offset 0 and process 0 reads it; process 5's transaction holds
    offset 2 (left open); process 1 commits offset 4 behind it."""
    head = [
        {"process": 4, "type": "invoke", "f": "txn", "value": [["send", "k", 9]], "time": 1},
        {"process": 4, "type": "ok", "f": "txn", "value": [["send", "k", [0, 9]]], "time": 2},
        {"process": 0, "type": "invoke", "f": "poll", "value": [["poll"]], "time": 3},
        {"process": 0, "type": "ok", "f": "poll", "value": [["poll", {"k": [[0, 9]]}]],
         "time": 4},
        {"process": 5, "type": "invoke", "f": "txn", "value": [["send", "k", 0]], "time": 5},
        {"process": 1, "type": "invoke", "f": "txn", "value": [["send", "k", 1]], "time": 6},
        {"process": 1, "type": "ok", "f": "txn", "value": [["send", "k", [4, 1]]], "time": 7},
    ]
    ops = [*head, *tail]
    return [{"index": i, **op} for i, op in enumerate(ops)]


def _poll(t: int, records: dict[str, Any], process: int = 0) -> list[dict[str, Any]]:
    return [{"process": process, "type": "invoke", "f": "poll", "value": [["poll"]], "time": t},
            {"process": process, "type": "ok", "f": "poll", "value": [["poll", records]],
             "time": t + 1}]


def test_a_transaction_aborted_late_ends_the_stall_at_the_read_past_it() -> None:
    """Process 1's commit at offset 4 waits behind process 5's open transaction; polls
    at 3 s and 5 s read nothing; its abort at 8 s lets the 9 s poll read offset 4."""
    s = 1_000_000_000
    ops = _txn_history([
        *_poll(3 * s, {}), *_poll(5 * s, {}),
        {"process": 5, "type": "fail", "f": "txn", "value": [["send", "k", [2, 0]]],
         "time": 8 * s},
        *_poll(9 * s, {"k": [[4, 1]]}),
    ])
    verdict = check_history(ops)
    assert verdict["valid"] is True
    block = verdict["stats"]["read-committed-stalls"]
    (stall,) = block["stalls"]
    assert stall == {
        "key": "k", "seconds": 5.0, "start-s": 0.0, "end-s": 5.0, "until-end": False,
        "held-back": {"offset": 4, "value": 1, "op": 6}, "last-progress": 3,
        "polls": 2, "first-poll": 8, "last-poll": 10, "ended-by": 13, "ended-s": 9.0,
        "stalls": 1,
    }
    assert block["longest-s"] == 5.0


def test_a_reader_behind_or_assigned_elsewhere_proves_no_stall() -> None:
    """Process 2 has read nothing of k while 0 has read to offset 4 (it is behind); process 3
    is assigned another key: neither one's empty poll is a stalled poll."""
    s = 1_000_000_000
    ops = _txn_history([
        *_poll(3 * s, {"k": [[4, 1]]}),
        {"process": 6, "type": "invoke", "f": "txn", "value": [["send", "k", 7]], "time": 4 * s},
        {"process": 6, "type": "ok", "f": "txn", "value": [["send", "k", [6, 7]]], "time": 4 * s},
        *_poll(5 * s, {}, process=2),
        {"process": 3, "type": "invoke", "f": "assign", "value": ["j"], "time": 6 * s},
        {"process": 3, "type": "ok", "f": "assign", "value": ["j"], "time": 6 * s},
        *_poll(7 * s, {}, process=3),
    ])
    assert check_history(ops)["stats"]["read-committed-stalls"] == {"longest-s": 0.0,
                                                                    "stalls": []}


def _member_poll(t: int, mops: list[Any], process: int = 0) -> list[dict[str, Any]]:
    return [{"process": process, "type": "invoke", "f": "poll", "value": [["poll"]], "time": t},
            {"process": process, "type": "ok", "f": "poll", "value": mops, "time": t + 1}]


def _subscribed(tail: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Processes 0 and 2 subscribe to k's topic (the subscribe lists k and j); then the
    shared head: process 0 reads offset 0, offset 4 waits behind an open transaction."""
    s = 1_000_000_000
    subs = [{"process": p, "type": t, "f": "subscribe", "value": ["k", "j"], "time": 0}
            for p in (0, 2) for t in ("invoke", "ok")]
    ops = _txn_history([*_member_poll(3 * s, [["poll", {}]]), *tail])
    return [{**op, "index": i} for i, op in enumerate([*subs, *ops])]


def test_a_member_proves_no_stall_of_a_key_it_lost() -> None:
    """Process 0 read k to offset 0 and polled nothing at 3 s (a stalled poll), then its
    group revoked k: its later empty polls are of other keys and end nothing. Process 2
    gained k and has read nothing of it yet: no proof either. The stall is the 3 s poll's."""
    s = 1_000_000_000
    ops = _subscribed([
        *_member_poll(4 * s, [["revoked", ["k"]], ["poll", {}]]),
        *_member_poll(5 * s, [["assigned", ["k"]], ["poll", {}]], process=2),
        *_member_poll(6 * s, [["poll", {}]]), *_member_poll(7 * s, [["poll", {}]]),
        *_member_poll(8 * s, [["poll", {}]], process=2),
    ])
    block = check_history(ops)["stats"]["read-committed-stalls"]
    assert block["longest-s"] == 3.0 and block["stalls"][0]["polls"] == 1


def test_a_member_that_keeps_its_key_proves_the_stall() -> None:
    """The control: the same polls without the rebalance measure the stall from the
    commit of offset 4 to the last empty poll of process 0."""
    s = 1_000_000_000
    ops = _subscribed([
        *_member_poll(4 * s, [["poll", {}]]),
        *_member_poll(6 * s, [["poll", {}]]), *_member_poll(7 * s, [["poll", {}]]),
    ])
    block = check_history(ops)["stats"]["read-committed-stalls"]
    assert block["longest-s"] == 7.0 and block["stalls"][0]["polls"] == 4


def test_a_member_given_a_key_back_proves_nothing_until_it_has_read_it_again() -> None:
    """Revoked and assigned k again, process 0 starts k at the group's committed offset:
    its empty polls prove a stall only once it has read k up to what was read."""
    s = 1_000_000_000
    ops = _subscribed([
        *_member_poll(4 * s, [["revoked", ["k"]], ["assigned", ["k"]], ["poll", {}]]),
        *_member_poll(6 * s, [["poll", {}]]), *_member_poll(7 * s, [["poll", {}]]),
    ])
    assert check_history(ops)["stats"]["read-committed-stalls"]["longest-s"] == 3.0
    again = _subscribed([
        *_member_poll(4 * s, [["revoked", ["k"]], ["assigned", ["k"]], ["poll", {}]]),
        *_member_poll(5 * s, [["poll", {"k": [[0, 9]]}]]),
        *_member_poll(6 * s, [["poll", {}]]), *_member_poll(7 * s, [["poll", {}]]),
    ])
    assert check_history(again)["stats"]["read-committed-stalls"]["longest-s"] == 7.0


def test_a_history_without_transactions_is_not_measured() -> None:
    """Its readers are read_uncommitted: no transaction can hold them."""
    ops = [
        {"index": 0, "time": 1, "process": 1, "type": "invoke", "f": "send",
         "value": [["send", "k", 1]]},
        {"index": 1, "time": 2, "process": 1, "type": "ok", "f": "send",
         "value": [["send", "k", [0, 1]]]},
        {"index": 2, "time": 3, "process": 0, "type": "invoke", "f": "poll", "value": [["poll"]]},
        {"index": 3, "time": 4, "process": 0, "type": "ok", "f": "poll", "value": [["poll", {}]]},
    ]
    assert "read-committed-stalls" not in check_history(ops)["stats"]
