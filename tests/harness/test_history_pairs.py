"""The reading side's pairing (``harness.base.history.pairs``): its rules, and that it agrees
with the checker's own scanner on every valid history.

The checker pairs on its own (``checkers._history.Scanner``: one hand-tuned
pass that validates as it pairs), so the two are held together here: on
histories from the in-memory Kafka model (``tests/support/kafka_model.py``),
cut short at a random line as a crashed run leaves them, both must pair the
same invoke with the same completion, hand them on in the same order, and
count the same invokes as never completed (``info``).
"""

from __future__ import annotations

from typing import Any

import kafka_model as km
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers._history import Scanner
from harness.base.contract import NEMESIS, TYPE_NAMES
from harness.base.history import ClientPair, NemesisPair, Op, pairs

#: (invoke index, completion index or None, outcome)
Paired = tuple[int, int | None, str]


def op(index: int, process: int | str, type_: str, f: str = "send", **extra: Any) -> Op:
    return {"index": index, "time": index * 10, "process": process, "type": type_, "f": f,
            "value": None, **extra}


def shown(ops: list[Op]) -> list[tuple[str, int | None, int | None]]:
    """Each pair as (kind, invoke index, completion index)."""
    out = []
    for p in pairs(ops):
        kind = "client" if isinstance(p, ClientPair) else "nemesis"
        out.append((kind, None if p.invoke is None else p.invoke["index"],
                    None if p.completion is None else p.completion["index"]))
    return out


@pytest.mark.parametrize(("ops", "expected"), [
    pytest.param([op(0, 0, "invoke"), op(1, 1, "invoke"), op(2, 1, "ok"), op(3, 0, "fail")],
                 [("client", 1, 2), ("client", 0, 3)], id="each-at-its-completion"),
    pytest.param([op(0, 0, "invoke"), op(1, 1, "invoke"), op(2, 2, "invoke"), op(3, 1, "ok")],
                 [("client", 1, 3), ("client", 0, None), ("client", 2, None)],
                 id="pending-last-in-file-order"),
    pytest.param([op(0, 0, "invoke"), op(1, 0, "invoke"), op(2, 0, "ok")],
                 [("client", 0, None), ("client", 1, 2)], id="second-invoke-leaves-the-first"),
    pytest.param([op(0, 0, "ok"), op(1, 0, "invoke"), op(2, 0, "info")],
                 [("client", 1, 2)], id="completion-without-invoke-skipped"),
    pytest.param([op(0, 0, "invoke", "send"), op(1, 0, "ok", "poll")],
                 [("client", 0, 1)], id="f-mismatch-still-completes"),
    pytest.param([op(0, NEMESIS, "invoke", "kill"), op(1, 0, "invoke"),
                  op(2, NEMESIS, "info", "kill"), op(3, 0, "ok")],
                 [("nemesis", 0, 2), ("client", 1, 3)], id="nemesis-invoke-and-report"),
    pytest.param([op(0, NEMESIS, "info", "start-partition")],
                 [("nemesis", None, 0)], id="nemesis-report-alone"),
    pytest.param([op(0, NEMESIS, "invoke", "kill"), op(1, NEMESIS, "invoke", "pause"),
                  op(2, NEMESIS, "info", "pause")],
                 [("nemesis", 0, None), ("nemesis", 1, 2)], id="nemesis-invoke-superseded"),
    pytest.param([op(0, NEMESIS, "invoke", "kill"), op(1, NEMESIS, "info", "pause")],
                 [("nemesis", 0, None), ("nemesis", None, 1)], id="nemesis-report-of-another-f"),
    pytest.param([op(0, 0, "invoke"), op(1, NEMESIS, "invoke", "kill"), op(2, 1, "invoke")],
                 [("client", 0, None), ("nemesis", 1, None), ("client", 2, None)],
                 id="cut-short-everything-pending-in-file-order"),
])
def test_pairing_rules(ops: list[Op], expected: list[tuple[str, int | None, int | None]]) -> None:
    assert shown(ops) == expected


@pytest.mark.parametrize(("completion", "outcome"), [
    (op(1, 0, "ok"), "ok"), (op(1, 0, "fail"), "fail"), (op(1, 0, "info"), "info"),
    (None, "info"),
], ids=["ok", "fail", "info", "never-completed"])
def test_a_pairs_outcome(completion: Op | None, outcome: str) -> None:
    ops = [op(0, 0, "invoke"), *([completion] if completion else [])]
    (pair,) = pairs(ops)
    assert isinstance(pair, ClientPair) and pair.type == outcome


def test_a_nemesis_pairs_op_is_what_was_done() -> None:
    invoke, report = op(0, NEMESIS, "invoke", "kill"), op(1, NEMESIS, "info", "kill")
    assert NemesisPair(invoke, report).op is report
    assert NemesisPair(invoke, None).op is invoke
    assert NemesisPair(None, report).op is report


class _Recorder:
    """An ``OpSink`` that keeps what the scanner hands on: (index, outcome code)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def txn(  # noqa: PLR0917 - the OpSink protocol's signature
        self, index: int, process: int, kind: int, value: Any, line: int, f: str
    ) -> None:
        self.calls.append((index, kind))

    def other(  # noqa: PLR0917 - the OpSink protocol's signature
        self, index: int, process: int, f: str, kind: int, value: Any, line: int
    ) -> None:
        self.calls.append((index, kind))

    def forget(self, process: int, value: Any) -> None:
        """Positions are not this recorder's concern."""


def checker_pairs(ops: list[Op]) -> tuple[list[Paired], int]:
    """What the checker's scanner pairs, in the order it hands ops on, and its nemesis count.

    The scanner is fed one line at a time so the invoke it is about to pair each
    completion with can be read from its ``pending`` table first.
    """
    sink = _Recorder()
    scanner = Scanner(sink)
    invoked_at: dict[int, int] = {}  # completion index -> its invoke's index
    for o in km.clone(ops):
        if o["process"] != NEMESIS and o["type"] != "invoke":
            invoked_at[o["index"]] = scanner.pending[o["process"]][0]
        scanner.feed_all([o], finish=False)
    scanner.finish()
    paired = [(invoked_at[i], i, TYPE_NAMES[kind]) if i in invoked_at else (i, None, "info")
              for i, kind in sink.calls]
    return paired, scanner.nemesis_ops


def reader_pairs(ops: list[Op]) -> tuple[list[Paired], int]:
    """The same, from the ground floor's reader."""
    paired: list[Paired] = []
    nemesis = 0
    for p in pairs(ops):
        if isinstance(p, NemesisPair):
            nemesis += sum(o is not None for o in p)
        else:
            done = p.completion
            paired.append((p.invoke["index"], None if done is None else done["index"], p.type))
    return paired, nemesis


SETTINGS = st.builds(
    km.Settings,
    ops=st.integers(5, 120),
    clients=st.integers(1, 5),
    keys=st.integers(1, 3),
    p_txn=st.sampled_from([0.0, 0.25]),
    p_fail=st.sampled_from([0.0, 0.1, 0.3]),
    p_info=st.sampled_from([0.0, 0.1, 0.3]),
    p_assign=st.sampled_from([0.05, 0.3]),
    p_crash=st.sampled_from([0.0, 0.05]),
)


@settings(max_examples=80)
@given(seed=st.integers(0, 2**32 - 1), shape=SETTINGS, cut=st.floats(0.0, 1.0))
def test_the_reader_pairs_as_the_checker_does(seed: int, shape: km.Settings, cut: float) -> None:
    whole = km.generate(seed, shape)
    ops = whole[:max(1, round(len(whole) * cut))]  # a run cut short at any line
    expected, nemesis = checker_pairs(ops)
    assert reader_pairs(ops) == (expected, nemesis)
    assert sum(done is None for _, done, _ in expected) == sum(
        1 for o in ops if o["type"] == "invoke" and o["process"] != NEMESIS) - sum(
        1 for o in ops if o["type"] != "invoke" and o["process"] != NEMESIS)
