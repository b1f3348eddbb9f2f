"""Reading a history and enforcing the shape rules of shared/HISTORY.md.

This module is the only place that decides whether input is *malformed* (exit 3).
It pairs every client completion with its invoke and hands the completed
operation to a sink, so later stages never see a half-formed op. It keeps no
per-op dict once an op has been handed on: only the pending invokes (at most one
per process) live here, which is what lets a 10M-op history be checked in
bounded memory.

Micro-op *values* of completions are validated by the sink as it walks them
(``checkers._collect``), because walking them twice would double the cost of the
hottest loop; invoke values are validated here.

The :class:`Scanner` pairs on its own rather than through the ground floor's
reader (``harness.base.history.pairs``, which the report uses): it validates
each line as it pairs, in one flat loop with local names that runs once per
line of a 10M-line history, and the reader (a generator handing on one pair
object per op) costs about 0.5 us of CPU per line on top of parsing, which
this, the checker's hottest loop, does not pay. A Hypothesis test
(``tests/harness/test_history_pairs.py``) holds the two to the same pairing.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from harness.base.errors import HistoryError
from harness.base.rundir import HISTORY

#: Outcome codes, shared by every stage. ``PENDING`` is an invoke that never completed.
INVOKE, OK, FAIL, INFO = 0, 1, 2, 3
TYPE_CODES = {"invoke": INVOKE, "ok": OK, "fail": FAIL, "info": INFO}
TYPE_NAMES = {code: name for name, code in TYPE_CODES.items()}

#: Client functions whose value is a list of micro-ops.
TXN_FS = frozenset({"send", "poll", "txn"})
#: Client functions whose value is a list of keys and which reset positions.
ASSIGN_FS = frozenset({"assign", "subscribe"})
F_CODES = {"send": 0, "poll": 1, "txn": 2, "assign": 3, "subscribe": 4, "crash": 5}
F_NAMES = {code: name for name, code in F_CODES.items()}
OTHER_F = 6
#: f code of nemesis lines in ``Scanner.meta``
NEMESIS_F = 7
NEMESIS_META = -64 + NEMESIS_F * 4
#: The usual invoke of a poll, accepted without walking it.
POLL_MOP = ["poll"]
POLL_INVOKE = [POLL_MOP]
NEMESIS = "nemesis"
HISTORY_NAME = HISTORY  # the run directory's name for it (harness.base.rundir)


class OpSink(Protocol):
    """What the scanner feeds: one call per completed client op, in file order."""

    def txn(self, index: int, process: int, kind: int, value: Any, line: int) -> None:
        """A send/poll/txn op completed (or was left pending: then ``kind`` is INFO)."""

    def other(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, f: str, kind: int, value: Any, line: int
    ) -> None:
        """Any other client op completed (assign, subscribe, crash, ...)."""


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """A run directory means its ``history.jsonl``; anything else is the file itself."""
    p = Path(path)
    if p.is_dir():
        p = p / HISTORY_NAME
        if not p.is_file():
            raise HistoryError(
                f"{path} is a directory without {HISTORY_NAME}",
                hint="pass a history file or a run directory",
            )
    return p


def open_history(path: Path) -> BinaryIO:
    """Open a history file for reading, or say why it cannot be read."""
    try:
        return path.open("rb")
    except OSError as err:
        raise HistoryError(f"cannot read {path}: {err.strerror or err}") from err


def parse_lines(handle: BinaryIO) -> Iterator[Any]:
    """One parsed JSON value per line: ``map`` keeps this loop in C.

    A line that is not JSON raises ``orjson.JSONDecodeError`` out of the map;
    ``Scanner.feed_all`` knows which line it was and turns it into a
    ``HistoryError``.
    """
    return map(orjson.loads, handle)


class Scanner:
    """Validates ops one by one and pairs completions with their invokes.

    It also keeps, per line, who issued it (``meta``: process * 64 + f code * 4 +
    type code, in one ``array('q')``) so explanations can name processes without
    keeping the ops.
    """

    def __init__(self, sink: OpSink, *, follows: bool = False, first_line: int = 0) -> None:
        self.sink = sink
        #: process -> (invoke index, f, value, line) of its pending invoke
        self.pending: dict[int, tuple[int, str, Any, int]] = {}
        self.lines = first_line
        self.nemesis_ops = 0
        self.never_completed = 0
        self.meta = array("q")
        #: op index -> line - 1, only where they differ
        self.relocated: dict[int, int] = {}
        #: True when this scans a chunk that follows other lines (``checkers._parallel``):
        #: a process's first line may then complete an invoke made before the chunk.
        self.follows = follows
        #: process -> line of its first invoke here (what a chunk boundary is checked against)
        self.first_invoke: dict[int, int] = {}
        #: process -> (line, f, type) of a completion whose invoke lies before this chunk
        self.orphans: dict[int, tuple[int, str, str]] = {}

    def feed_all(self, ops: Iterable[Any], *, finish: bool = True) -> None:
        """Feed every op of a history (line by line), then close it (unless not ``finish``).

        One flat loop with local names: this runs once per line of a history
        that may have ten million, so every attribute lookup and call counts.
        """
        pending = self.pending
        meta_append = self.meta.append
        relocated = self.relocated
        txn = self.sink.txn
        other = self.sink.other
        f_codes = F_CODES
        type_codes = TYPE_CODES
        txn_fs = TXN_FS
        first_invoke = self.first_invoke
        line = self.lines
        try:
            for op in ops:
                line += 1
                if type(op) is not dict:
                    raise HistoryError(f"expected a JSON object, got {_json_kind(op)}", line=line)
                try:
                    process = op["process"]
                    if type(process) is not int:
                        if process == NEMESIS:
                            self.nemesis_ops += 1
                            meta_append(NEMESIS_META)
                            continue
                        raise HistoryError(
                            f'process must be an integer or "nemesis", got {_short(process)}',
                            line=line,
                        )
                    index = op["index"]
                    op["time"]
                    type_name = op["type"]
                    f = op["f"]
                except KeyError as err:
                    raise HistoryError(f"missing field {err.args[0]!r}", line=line) from None
                if type(index) is not int:
                    raise HistoryError(f"index must be an integer, got {_short(index)}", line=line)
                kind = type_codes.get(type_name) if type(type_name) is str else None
                if kind is None:
                    raise HistoryError(
                        f"type must be invoke, ok, fail or info, got {_short(type_name)}",
                        line=line,
                    )
                if type(f) is not str:
                    raise HistoryError(f"f must be a string, got {_short(f)}", line=line)
                if index != line - 1:
                    relocated[index] = line - 1
                meta_append(process * 64 + f_codes.get(f, OTHER_F) * 4 + kind)
                if kind == INVOKE:
                    if process in pending:
                        raise second_invoke_error(process, pending[process], line)
                    if process not in first_invoke:
                        first_invoke[process] = line
                    try:
                        value = op["value"]
                    except KeyError:
                        raise HistoryError("missing field 'value'", line=line) from None
                    if value != POLL_INVOKE:
                        _check_invoke_value(f, value, line)
                    pending[process] = (index, f, value, line)
                    continue
                invoke = pending.pop(process, None)
                if invoke is None:
                    invoke = self._orphan(op, process, f, kind, type_name, line)
                if invoke[1] != f:
                    raise f_mismatch_error(f, invoke, line)
                value = op.get("value")
                if value is None:
                    if kind == OK and "value" not in op:
                        raise HistoryError("missing field 'value'", line=line)
                    if kind != OK:
                        value = invoke[2]  # info/fail without a value: the invoke's
                if f in txn_fs:
                    txn(index, process, kind, value, line)
                else:
                    other(index, process, f, kind, value, line)
        except orjson.JSONDecodeError as err:
            line += 1  # the line that failed to parse was never counted
            empty = "empty" in err.msg
            what = "an empty line" if empty else f"not JSON ({err.msg})"
            raise HistoryError(what, line=line) from None
        except OSError as err:
            raise HistoryError(
                f"cannot read the history: {err.strerror or err}", line=line
            ) from err
        finally:
            self.lines = line
        if finish:
            self.finish()

    def _orphan(  # noqa: PLR0917 - called once per chunk boundary at most per process
        self, op: dict[str, Any], process: int, f: str, kind: int, type_name: str, line: int
    ) -> tuple[int, str, Any, int]:
        """A completion with no invoke: an error, unless its invoke may lie before this chunk.

        Whether it really does is decided when chunks are merged; here the op is
        folded in place with its own value, so the chunk's tables keep file order.
        """
        if not self.follows or process in self.first_invoke or process in self.orphans:
            raise no_invoke_error(type_name, process, line)
        if op.get("value") is None and kind != OK and (f in TXN_FS or f in ASSIGN_FS):
            raise NeedsWholeFile(f"line {line}: a {type_name} without a value across a chunk edge")
        self.orphans[process] = (line, f, type_name)
        return (-1, f, None, line)

    def finish(self) -> None:
        """End of history: an empty one is malformed; pending invokes count as info."""
        if self.lines == 0:
            raise HistoryError("the history is empty", hint="a run writes one op per line")
        self.never_completed = len(self.pending)
        for process, (index, f, value, line) in sorted(self.pending.items(), key=_by_index):
            if f in TXN_FS:
                self.sink.txn(index, process, INFO, value, line)
            else:
                self.sink.other(index, process, f, INFO, value, line)
        self.pending.clear()


class NeedsWholeFile(Exception):
    """A chunk cannot be judged on its own; check the file in one pass instead."""


def no_invoke_error(type_name: str, process: int, line: int) -> HistoryError:
    """A completion that no pending invoke of its process explains."""
    return HistoryError(
        f"{type_name} completion by process {process} with no pending invoke", line=line
    )


def f_mismatch_error(f: str, invoke: tuple[int, str, Any, int], line: int) -> HistoryError:
    """A completion whose f is not its invoke's."""
    return HistoryError(
        f"completion f {f!r} differs from its invoke's {invoke[1]!r} (line {invoke[3]})",
        line=line,
    )


def second_invoke_error(process: int, before: tuple[int, str, Any, int], line: int) -> HistoryError:
    """An invoke while the same process still has one pending."""
    return HistoryError(
        f"second invoke by process {process} while its op {before[0]} "
        f"(line {before[3]}) is still pending",
        line=line,
    )


def _by_index(item: tuple[int, tuple[int, str, Any, int]]) -> int:
    return item[1][0]


def _check_invoke_value(f: str, value: Any, line: int) -> None:
    """Invokes of send/poll/txn carry ``["send", k, v]`` and ``["poll"]`` micro-ops."""
    if f in TXN_FS:
        if type(value) is not list:
            raise HistoryError(f"{f} value must be a list of micro-ops", line=line)
        for mop in value:
            if mop == POLL_MOP:
                continue
            try:
                tag, k, v = mop
            except (TypeError, ValueError):
                tag = k = v = None
            if tag != "send" or type(k) is not str or type(v) is not int:
                raise HistoryError(f"malformed micro-op in invoke: {_short(mop)}", line=line)
    elif f in ASSIGN_FS:
        check_key_list(f, value, line)


def check_key_list(f: str, value: Any, line: int) -> list[str]:
    """The value of assign/subscribe: a list of keys (strings)."""
    if type(value) is not list or any(type(k) is not str for k in value):
        raise HistoryError(f"{f} value must be a list of keys, got {_short(value)}", line=line)
    return value


def malformed_mop(mop: Any, line: int) -> HistoryError:
    """The error for a completion micro-op that does not follow HISTORY.md."""
    return HistoryError(f"malformed micro-op: {_short(mop)}", line=line)


def _short(value: Any) -> str:
    text = orjson.dumps(value, default=repr).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a number" if isinstance(value, int | float) else type(value).__name__
