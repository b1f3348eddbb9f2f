"""Where a consumer reads after an aborted transaction (``stats``' ``abort-rewinds``,
docs/HISTORY.md "After an abort").

Histories come from a model of one key read by one consumer: records at sparse offsets
(a marker after some of them), ok transactions that read and commit their position,
plain polls, and aborted transactions after which the consumer goes on from a record
the model picks. The model works in record numbers, the checker in offsets: the class
the checker gives each abort must be the one the model's pick means.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.history_builder import Hist

from checkers import check_file, check_history
from checkers._check import _judge, _reread
from checkers._input import open_source
from checkers._measures import fed
from checkers._parallel import read_chunked
from checkers._rewinds import CLASSES, Rewinds
from checkers._verdict import Anomalies

READER, WRITER, DRAIN = 0, 9, 99


@dataclass
class Model:
    """The history being written and what the model knows."""

    offsets: list[int]
    hist: Hist = field(default_factory=Hist)
    at: int = 0  # the record the consumer returns next
    committed: int | None = None  # the record the committed offset points at
    expected: Counter[tuple[bool, str]] = field(default_factory=Counter)

    def read(self, n: int) -> list[list[int]]:
        got = [[self.offsets[i], 1000 + i] for i in range(self.at, min(self.at + n,
                                                                        len(self.offsets)))]
        self.at += len(got)
        return got

    def txn(self, n: int, *, abort: bool, kept: bool) -> tuple[int, int] | None:
        """One transaction reading up to ``n`` records: its first and last record."""
        first = self.at
        got = self.read(n)
        self.hist.invoke(READER, "txn", [["poll"]])
        extra = {"reads-kept": True} if abort and kept else {}
        self.hist.done(READER, "fail" if abort else "ok", "txn",
                       [["poll", {"k": got} if got else {}]], **extra)
        if not abort and got:
            self.committed = self.at  # it sent the position: the record after its last
        return (first, self.at - 1) if got else None


def expected_class(pick: int, first: int, last: int, committed: int | None) -> str:
    """The class of going on from record ``pick``, in record numbers."""
    if pick > last:
        return "carries-on" if pick == last + 1 else "skips"
    if pick == committed:
        return "rewinds-to-committed"
    if pick == first:
        return "rewinds-to-abort-start"
    return "rewinds-further" if pick < first else "rewinds-within"


STEP = st.tuples(st.sampled_from(["txn", "poll", "abort"]), st.integers(1, 4),
                 st.booleans(), st.integers(0, 1000))


def model(gaps: list[bool], steps: list[tuple[str, int, bool, int]]) -> Model:
    """A history of one key: ``gaps`` says which records a marker follows."""
    offsets, o = [], 0
    for marker in gaps:
        offsets.append(o)
        o += 2 if marker else 1
    m = Model(offsets)
    for i, o in enumerate(offsets):
        m.hist.op(WRITER, "send", [["send", "k", 1000 + i]], [["send", "k", [o, 1000 + i]]])
    m.hist.op(READER, "assign", ["k"], ["k"])
    for what, n, kept, seed in steps:
        if what == "poll":
            m.hist.op(READER, "poll", [["poll"]], [["poll", {"k": m.read(n)}]])
            continue
        read = m.txn(n, abort=what == "abort", kept=kept)
        if what != "abort" or read is None:
            continue
        first, last = read
        pick = seed % len(offsets) if kept else first  # sought: the client seeks to first
        if pick >= len(offsets):
            continue
        m.at = pick
        m.hist.op(READER, "poll", [["poll"]], [["poll", {"k": m.read(n)}]])
        m.expected[(kept, expected_class(pick, first, last, m.committed))] += 1
    m.hist.op(DRAIN, "assign", ["k"], ["k"])
    m.hist.op(DRAIN, "poll", [["poll"]],
              [["poll", {"k": [[o, 1000 + i] for i, o in enumerate(offsets)]}]])
    return m


def counted(block: dict[str, Any]) -> Counter[tuple[bool, str]]:
    return Counter({(part == "kept", cls): n for part in ("kept", "sought")
                    for cls, n in block.get(part, {}).items() if cls in CLASSES})


@settings(max_examples=300, deadline=None)
@given(gaps=st.lists(st.booleans(), min_size=1, max_size=30),
       steps=st.lists(STEP, max_size=25))
def test_each_abort_gets_the_class_of_where_the_consumer_went(
        gaps: list[bool], steps: list[tuple[str, int, bool, int]]) -> None:
    m = model(gaps, steps)
    block = fed(Rewinds(), m.hist.ops)
    assert counted(block) - Counter({(k, "unobserved"): 99 for k in (True, False)}) \
        == m.expected


@settings(max_examples=150, deadline=None)
@given(gaps=st.lists(st.booleans(), min_size=1, max_size=30),
       steps=st.lists(STEP, max_size=25))
def test_a_kept_abort_makes_no_position_anomaly_and_stays_valid(
        gaps: list[bool], steps: list[tuple[str, int, bool, int]]) -> None:
    verdict = check_history(model(gaps, steps).hist.ops)
    assert verdict["valid"] is True, verdict["anomaly-types"]


def carried_on(kept: bool) -> list[dict[str, Any]]:
    """Records 0..5; a committed transaction reads 0-1, an aborted one 2-3, and the
    consumer carries on at 4."""
    h = Hist()
    for o in range(6):
        h.op(WRITER, "send", [["send", "k", o]], [["send", "k", [o, o]]])
    h.op(READER, "assign", ["k"], ["k"])
    h.op(READER, "txn", [["poll"]], [["poll", {"k": [[0, 0], [1, 1]]}]])
    h.invoke(READER, "txn", [["poll"]])
    h.done(READER, "fail", "txn", [["poll", {"k": [[2, 2], [3, 3]]}]],
           **({"reads-kept": True} if kept else {}))
    h.op(READER, "poll", [["poll"]], [["poll", {"k": [[4, 4], [5, 5]]}]])
    h.op(DRAIN, "poll", [["poll"]], [["poll", {"k": [[o, o] for o in range(6)]}]])
    return h.ops


def test_the_field_decides_whether_carrying_on_is_a_poll_skip() -> None:
    # Without it the client is taken to have sought back: the next poll skips 2 and 3.
    assert check_history(carried_on(kept=False))["anomaly-types"] == ["poll-skip"]
    kept = check_history(carried_on(kept=True))
    assert kept["valid"] is True and kept["anomaly-types"] == []
    block = kept["stats"]["abort-rewinds"]
    assert block["kept"] == {"aborts": 1, "observations": 1, "carries-on": 1}
    assert block["examples"] == [{
        "class": "carries-on", "kept": True, "key": "k", "abort": 17, "first-read": 2,
        "last-read": 3, "poll": 19, "next-read": 4, "committed": [2]}]


def chunked_and_single(path: Path, ops: list[dict[str, Any]], cuts: list[int]
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The verdict of ``ops`` read in chunks cut before the lines ``cuts``, and in one pass."""
    lines = [orjson.dumps(op) + b"\n" for op in ops]
    path.write_bytes(b"".join(lines))
    starts = list(itertools.accumulate(len(line) for line in lines[:-1]))
    at = sorted({0, *(starts[c - 1] for c in cuts if c <= len(starts))})
    ranges = list(zip(at, [*at[1:], path.stat().st_size], strict=True))
    collector, scanner = read_chunked(path, ranges)
    chunked = _judge(collector, scanner, Anomalies(1000), ww_deps=False, budget_s=60.0,
                     again=_reread(open_source(path)))
    single = check_file(path, jobs=1)
    single.pop("warnings", None)
    return chunked, single


@settings(max_examples=60, deadline=None)
@given(gaps=st.lists(st.booleans(), min_size=1, max_size=12),
       steps=st.lists(STEP, max_size=12), cuts=st.lists(st.integers(1, 80), max_size=3))
def test_chunked_reading_forgets_a_kept_position_as_one_pass_does(
        tmp_path_factory: pytest.TempPathFactory, gaps: list[bool],
        steps: list[tuple[str, int, bool, int]], cuts: list[int]) -> None:
    path = tmp_path_factory.mktemp("chunks") / "h.jsonl"
    chunked, single = chunked_and_single(path, model(gaps, steps).hist.ops, cuts)
    assert chunked == single


@pytest.mark.parametrize("cut", range(15, 19))
def test_a_chunk_does_not_inherit_a_position_its_kept_abort_forgot(
        tmp_path: Path, cut: int) -> None:
    # cut between the committed read (line 15) and the poll after the abort (line 18)
    chunked, single = chunked_and_single(tmp_path / "h.jsonl", carried_on(kept=True), [cut])
    assert chunked["anomaly-types"] == single["anomaly-types"] == []


@pytest.mark.parametrize(("between", "why"), [
    ({"f": "assign", "value": ["other"]}, "an assign without the key"),
    (None, "the process read the key no more"),
])
def test_a_reassign_or_the_end_leaves_an_abort_unobserved(
        between: dict[str, Any] | None, why: str) -> None:
    ops = carried_on(kept=True)[:-4]
    h = Hist()
    h.ops = ops
    if between is not None:
        h.op(READER, between["f"], between["value"], between["value"])
        h.op(READER, "poll", [["poll"]], [["poll", {"other": [[0, 7]]}]])
    block = fed(Rewinds(), h.ops)
    assert block["kept"]["unobserved"] == 1
    assert block["examples"][0]["why"] == why


def test_a_history_without_an_aborted_transaction_has_no_such_stats() -> None:
    ops = [op for op in carried_on(kept=True) if op["index"] not in (16, 17)]  # the abort
    for i, op in enumerate(ops):
        op["index"] = i
    assert "abort-rewinds" not in check_history(ops)["stats"]
