"""The measures a check takes in its own pass (``checkers._measures``): ``stats``'
``read-committed-stalls`` and ``abort-rewinds`` are what each measure gives when it
reads the history alone (``checkers._measures.fed``), however the check read it.

Histories come from a small model of two keys: a writer commits or aborts
transactions and plain sends, two readers assign keys, poll and read in transactions
that commit or abort (keeping their reads or seeking back), and sometimes jump to
another offset, so that reads stall behind aborted records and aborts are followed by
every kind of next read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.history_builder import Hist

from checkers import _check as check_module
from checkers import check_file, check_history
from checkers._measures import HEAD_LINES, KINDS, REWINDS, STALLS, fed
from checkers._rewinds import Rewinds
from checkers._stalls import Stalls

KEYS = ("k0", "k1")
WRITER, READERS = 9, (0, 1)
#: the process that holds a key's transaction open
OPENER = {"k0": 10, "k1": 11}

BY_KIND = {
    "write": st.tuples(st.just("write"), st.sampled_from(KEYS), st.integers(1, 3),
                       st.sampled_from(["send", "ok", "fail"])),
    "read": st.tuples(st.just("read"), st.sampled_from(READERS), st.integers(1, 3),
                      st.sampled_from(["poll", "ok", "fail", "kept"])),
    "open": st.tuples(st.just("open"), st.sampled_from(KEYS), st.integers(1, 2), st.just("")),
    "close": st.tuples(st.just("close"), st.sampled_from(KEYS), st.just(0),
                       st.sampled_from(["ok", "fail"])),
    "assign": st.tuples(st.just("assign"), st.sampled_from(READERS),
                        st.sampled_from([KEYS, KEYS[:1], KEYS[1:]]), st.just("")),
    "jump": st.tuples(st.just("jump"), st.sampled_from(READERS), st.integers(0, 6),
                      st.just("")),
}
#: reads and writes most, so that reads return records
STEP = st.sampled_from(["write"] * 3 + ["read"] * 4 + ["open", "close", "assign", "jump"]
                       ).flatmap(BY_KIND.__getitem__)
#: steps that write no ``txn`` line: a history starts with some, so that the lines before
#: its first ``txn`` op matter to the measures
PLAIN = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(KEYS), st.integers(1, 3), st.just("send")),
    st.tuples(st.just("read"), st.sampled_from(READERS), st.integers(1, 3), st.just("poll")),
    BY_KIND["assign"], BY_KIND["jump"],
)
STEPS = st.builds(lambda plain, steps: plain + steps, st.lists(PLAIN, max_size=12),
                  st.lists(STEP, min_size=10, max_size=60))


class Model:
    """Records live at offsets, aborted and open ones included; a read returns the
    committed records from the reader's own position on, below a transaction still open."""

    def __init__(self) -> None:
        self.h = Hist()
        self.log: dict[str, list[tuple[int, bool]]] = {k: [] for k in KEYS}
        self.open: dict[str, list[list[Any]]] = {}  # key -> the sends of its open transaction
        self.at = {r: dict.fromkeys(KEYS, 0) for r in READERS}
        self.held = {r: KEYS for r in READERS}
        self.value = 0

    def sends(self, k: str, n: int, committed: bool) -> list[list[Any]]:
        out = []
        for _ in range(n):
            self.log[k].append((self.value, committed))
            out.append(["send", k, [len(self.log[k]) - 1, self.value]])
            self.value += 1
        return out

    def write(self, k: str, n: int, how: str) -> None:
        sends = self.sends(k, n, how != "fail")
        self.h.op(WRITER, "send" if how == "send" else "txn",
                  [["send", k, s[2][1]] for s in sends], sends, "fail" if how == "fail" else "ok")

    def begin(self, k: str, n: int) -> None:
        if k not in self.open:
            self.open[k] = self.sends(k, n, False)
            self.h.invoke(OPENER[k], "txn", [["send", k, s[2][1]] for s in self.open[k]])

    def close(self, k: str, how: str) -> None:
        sends = self.open.pop(k, None)
        if sends is not None:
            for _, _, (o, v) in sends:
                self.log[k][o] = (v, how == "ok")
            self.h.done(OPENER[k], how, "txn", sends)

    def read(self, reader: int, n: int, how: str) -> None:
        got: dict[str, list[list[int]]] = {}
        for k in self.held[reader]:
            stable = self.open[k][0][2][0] if k in self.open else len(self.log[k])
            got[k] = [[o, v] for o, (v, ok) in enumerate(self.log[k][:stable])
                      if ok and o >= self.at[reader][k]][:n]
            if got[k]:
                self.at[reader][k] = got[k][-1][0] + 1
        f = "poll" if how == "poll" else "txn"
        self.h.invoke(reader, f, [["poll"]])
        extra = {"reads-kept": True} if how == "kept" else {}
        self.h.done(reader, "fail" if how in ("fail", "kept") else "ok", f, [["poll", got]],
                    **extra)
        if how == "fail":  # the client seeks back to the first record it read
            for k, records in got.items():
                if records:
                    self.at[reader][k] = records[0][0]


def model(steps: list[tuple[str, Any, Any, str]]) -> Hist:
    """The history of ``steps``."""
    m = Model()
    for what, who, n, how in steps:
        if what == "write":
            m.write(who, n, how)
        elif what == "open":
            m.begin(who, n)
        elif what == "close":
            m.close(who, how)
        elif what == "read":
            m.read(who, n, how)
        elif what == "assign":
            m.h.op(who, "assign", list(n), list(n))
            m.held[who] = n
        else:
            m.at[who] = {k: n for k in KEYS}
    return m.h


def alone(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """What each measure gives reading ``ops`` on its own, for the histories it measures:
    the stalls of one with a ``txn`` op (even one never completed), the rewinds of one
    whose ``txn`` op failed."""
    txns = [op for op in ops if op["f"] == "txn"]
    out: dict[str, Any] = {}
    if txns:
        out[STALLS] = fed(Stalls(), ops)
    if any(op["type"] == "fail" for op in txns):
        out[REWINDS] = fed(Rewinds(), ops)
    return out


def measured(verdict: dict[str, Any]) -> dict[str, Any]:
    return {k: verdict["stats"][k] for k in (STALLS, REWINDS) if k in verdict["stats"]}


@settings(max_examples=150, deadline=None)
@given(steps=STEPS, head=st.sampled_from([HEAD_LINES, 1, 6]))
def test_the_check_measures_what_each_measure_reads_alone(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, Any, Any, str]],
        head: int) -> None:
    """In one pass, in parallel chunks, from a list, and after a ``txn`` op too late for
    the check's pass (``head``: the lines it waits for one)."""
    h = model(steps)
    ops = h.ops
    path = h.write(tmp_path_factory.mktemp("m") / "h.jsonl")
    want = alone(ops)
    with mock.patch("checkers._measures.HEAD_LINES", head):
        assert measured(check_history(ops)) == want
        assert measured(check_file(path, jobs=1)) == want
        assert measured(check_file(path, jobs=2)) == want


def late_txn() -> Hist:
    """A stall that starts and goes on before the first ``txn`` line, which ends it."""
    h = Hist()
    for o in range(3):
        h.op(WRITER, "send", [["send", "k", o]], [["send", "k", [o, o]]])
    h.op(0, "poll", [["poll"]], [["poll", {"k": [[0, 0], [1, 1], [2, 2]]}]])
    h.op(WRITER, "send", [["send", "k", 3]], [["send", "k", [3, 3]]])
    h.op(0, "poll", [["poll"]], [["poll", {"k": []}]])
    h.op(0, "poll", [["poll"]], [["poll", {"k": []}]])
    h.op(WRITER, "txn", [["send", "k", 4]], [["send", "k", [4, 4]]])
    h.op(0, "poll", [["poll"]], [["poll", {"k": [[3, 3], [4, 4]]}]])
    for op in h.ops:
        op["time"] = op["index"] * 10**9  # a line a second
    return h


@pytest.mark.parametrize("head", [HEAD_LINES, 15, 14, 3])
def test_the_lines_before_the_first_txn_op_are_measured(tmp_path: Path, head: int) -> None:
    """The check's pass keeps them until the first ``txn`` line (its 15th), or gives up
    before it and reads once more."""
    h = late_txn()
    path = h.write(tmp_path / "h.jsonl")
    stall = {"key": "k", "seconds": 4.0, "start-s": 9.0, "end-s": 13.0, "until-end": False,
             "held-back": {"offset": 3, "value": 3, "op": 9}, "last-progress": 7, "polls": 2,
             "first-poll": 11, "last-poll": 13, "ended-by": 17, "ended-s": 17.0, "stalls": 1}
    assert fed(Stalls(), h.ops)["stalls"] == [stall]
    with mock.patch("checkers._measures.HEAD_LINES", head):
        for verdict in (check_history(h.ops), check_file(path, jobs=1), check_file(path, jobs=2)):
            assert measured(verdict) == {STALLS: {"longest-s": 4.0, "stalls": [stall]}}


def aborted_read() -> Hist:
    """A stall behind an aborted record and an abort the reader carries on after."""
    h = Hist()
    h.op(WRITER, "txn", [["send", "k", 0]], [["send", "k", [0, 0]]])
    h.op(WRITER, "txn", [["send", "k", 1]], [["send", "k", [1, 1]]], "fail")
    h.op(0, "poll", [["poll"]], [["poll", {"k": [[0, 0]]}]])
    h.op(WRITER, "txn", [["send", "k", 2]], [["send", "k", [2, 2]]])
    h.op(0, "poll", [["poll"]], [["poll", {"k": []}]])
    h.invoke(0, "txn", [["poll"]])
    h.done(0, "fail", "txn", [["poll", {"k": [[2, 2]]}]], **{"reads-kept": True})
    h.op(0, "poll", [["poll"]], [["poll", {"k": [[2, 2]]}]])
    return h


def test_a_history_with_an_aborted_transaction_is_read_once(tmp_path: Path) -> None:
    path = aborted_read().write(tmp_path / "h.jsonl")
    opened = mock.Mock(wraps=check_module.open_history)
    with mock.patch.object(check_module, "open_history", opened):
        verdict = check_file(path, jobs=1)
    assert opened.call_count == 1
    assert measured(verdict) == alone(aborted_read().ops)
    assert verdict["stats"][STALLS]["stalls"] and verdict["stats"][REWINDS]["kept"]


class Broken:
    """A measure that fails on the third line it is fed."""

    def __init__(self) -> None:
        self.fed = 0

    def feed(self, op: dict[str, Any]) -> None:
        self.fed += 1
        if self.fed == 3:
            raise ValueError("no")

    def result(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_measure_that_raises_says_so_and_the_other_goes_on(tmp_path: Path, jobs: int) -> None:
    h = aborted_read()
    path = h.write(tmp_path / "h.jsonl")
    with mock.patch.dict(KINDS, {STALLS: (Broken, KINDS[STALLS][1])}):
        verdict = check_file(path, jobs=jobs)
    assert verdict["valid"] is check_file(path, jobs=jobs)["valid"]
    error = verdict["stats"][STALLS]["error"]
    assert error.startswith("internal error in the checker measuring read stalls: ValueError: no")
    assert verdict["stats"][REWINDS] == fed(Rewinds(), h.ops)
