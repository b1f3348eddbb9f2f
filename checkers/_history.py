"""Reading a history and enforcing the shape rules of docs/HISTORY.md.

This module is the only place that decides whether a line is *malformed* (exit 3);
``checkers._malformed`` words the errors and ``checkers._input`` decides which
bytes of a file are lines at all.
It pairs every client completion with its invoke and hands the completed
operation to a sink, so later stages never see a half-formed op. It keeps no
per-op dict once an op has been handed on: only the pending invokes (at most one
per process) live here, which is what lets a 10M-op history be checked in
bounded memory.

Micro-op *values* of completions are validated by the sink as it walks them
(``checkers._collect``, their records ``checkers._records``), because walking them
twice would double the cost of the hottest loop; invoke values are validated here.

The :class:`Scanner` pairs on its own rather than through the ground floor's
reader (``harness.base.history.pairs``, which the report uses): it validates
each line as it pairs, in one flat loop with local names that runs once per
line of a 10M-line history, and the reader (a generator handing on one pair
object per op) costs about 0.5 us of CPU per line on top of parsing, which
this, the checker's hottest loop, does not pay. A Hypothesis test
(``tests/harness/test_history_pairs.py``) holds the two to the same pairing.

Per line, the rules are checked in one fixed order (the Spark engine follows
it, so a line that breaks several rules gets the same message from both):
JSON, an object, ``process``, the fields present, ``index``, ``time``,
``type``, ``f``, then pairing (where a negative process is refused, once per
process rather than on every line) and the micro-ops. Nemesis lines need no field
but ``process``; an ``index`` or ``time`` they do carry follows the same rules,
since both number the whole file.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any, Protocol

import orjson

from checkers._malformed import (
    I64_MAX,
    empty_history_error,
    f_error,
    f_mismatch_error,
    index_error,
    malformed_mop,
    no_invoke_error,
    not_an_object_error,
    not_json_error,
    process_error,
    second_invoke_error,
    short,
    time_backwards_error,
    time_error,
)
from checkers.groups._shape import ALLOWED_IN, check_fields, check_group_op, check_mop
from harness.base import contract
from harness.base.contract import (
    F_UNIT,
    FAIL,
    INFO,
    INVOKE,
    NEMESIS,
    OK,
    PROCESS_SHIFT,
    PROCESS_UNIT,
)
from harness.base.errors import HistoryError
from harness.base.waits import not_as_written

# The outcome codes, the client ops and the packed per-line layout are the
# contract's (``harness.base.contract``); these names are the checker's handles on them.
TYPE_CODES = contract.TYPE_CODES
TYPE_NAMES = contract.TYPE_NAMES
NEMESIS_F = contract.NEMESIS_F
NEMESIS_META = contract.NEMESIS_META
#: The usual invoke of a poll, accepted without walking it.
POLL_MOP = ["poll"]
POLL_INVOKE = [POLL_MOP]
#: ``Scanner.last_time`` of a chunk before its first timed line: above every valid time,
#: so the first one takes the slow path, which records it for the merge to check
TIME_UNSEEN = 2**63


class OpSink(Protocol):
    """What the scanner feeds: one call per completed client op, in file order."""

    def txn(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, kind: int, value: Any, line: int, f: str
    ) -> None:
        """A send/poll/txn op completed (or was left pending: then ``kind`` is INFO)."""

    def other(  # noqa: PLR0917 - one call per op on the hot path: no kwargs
        self, index: int, process: int, f: str, kind: int, value: Any, line: int
    ) -> None:
        """Any other client op completed (assign, subscribe, crash, ...)."""

    def forget(self, process: int, value: Any) -> None:
        """A ``fail`` completion said ``"reads-kept": true`` (docs/HISTORY.md): the
        process's read positions of the keys its polls (in ``value``) returned are unknown."""


class Scanner:
    """Validates ops one by one and pairs completions with their invokes.

    It also keeps, per line, who issued it (``meta``: process, f code and type code
    packed as ``harness.base.contract.pack_meta`` says, in one ``array('q')``) so
    explanations can name processes without keeping the ops.
    """

    def __init__(self, sink: OpSink, *, follows: bool = False, first_line: int = 0) -> None:
        self.sink = sink
        #: process -> (invoke index, f, value, line) of its pending invoke
        self.pending: dict[int, tuple[int, str, Any, int]] = {}
        self.lines = first_line
        self.nemesis_ops = 0
        #: why the fault script did not run as written: each ``await-state`` completion
        #: that did not hold, or premise step that did not apply
        #: (``harness.base.waits.not_as_written``), in file order
        self.waits_not_held: list[str] = []
        self.never_completed = 0
        #: True once a line's fields call for the group rules (``check_fields``)
        self.saw_groups = False
        self.meta = array("q")
        #: True when this scans a chunk that follows other lines (``checkers._parallel``):
        #: a process's first line may then complete an invoke made before the chunk.
        self.follows = follows
        #: process -> line of its first invoke here (what a chunk boundary is checked against)
        self.first_invoke: dict[int, int] = {}
        #: process -> (line, f, type) of a completion whose invoke lies before this chunk
        self.orphans: dict[int, tuple[int, str, str]] = {}
        #: the last time seen (a later line may not go below it); TIME_UNSEEN in a chunk
        #: that follows others until its first timed line, whose (line, time) is ``first_time``
        self.last_time = TIME_UNSEEN if follows else 0
        self.first_time: tuple[int, int] | None = None
        #: the contract's client ops, taken once per history (not per line): f -> code,
        #: and which ``f`` carry micro-ops or a list of keys
        self.f_codes = contract.f_codes()
        self.mop_fs = contract.mop_fs()
        self.key_list_fs = contract.key_list_fs()
        self.group_fs = contract.group_fs()

    def feed_all(self, ops: Iterable[Any], *, finish: bool = True) -> None:
        """Feed every op of a history (line by line), then close it (unless not ``finish``).

        One flat loop with local names: this runs once per line of a history
        that may have ten million, so every attribute lookup and call counts.
        Each rule costs a comparison or two on the way; an op that fails one
        leaves the loop for a function that words the error.
        """
        pending = self.pending
        meta_append = self.meta.append
        txn = self.sink.txn
        other = self.sink.other
        f_codes = self.f_codes
        type_codes = TYPE_CODES
        txn_fs = self.mop_fs
        key_list_fs = self.key_list_fs
        group_fs = self.group_fs
        process_unit, f_unit = PROCESS_UNIT, F_UNIT
        first_invoke = self.first_invoke
        line = self.lines
        last_time = self.last_time
        i64_max = I64_MAX
        type_of = type
        int_ = int
        try:
            for op in ops:
                line += 1
                if type_of(op) is not dict:
                    raise not_an_object_error(op, line)
                try:
                    process = op["process"]
                    if type_of(process) is not int_:
                        if process != NEMESIS:
                            raise process_error(process, line)
                        last_time = self._nemesis(op, line, last_time)
                        continue
                    index = op["index"]
                    time = op["time"]
                    type_name = op["type"]
                    f = op["f"]
                except KeyError as err:
                    raise HistoryError(f"missing field {err.args[0]!r}", line=line) from None
                if type_of(index) is not int_ or index != line - 1:
                    raise index_error(index, line)
                if type_of(time) is not int_ or not last_time <= time <= i64_max:
                    time = self._odd_time(time, last_time, line)
                last_time = time
                kind = type_codes.get(type_name) if type_of(type_name) is str else None
                if kind is None:
                    raise HistoryError(
                        f"type must be invoke, ok, fail or info, got {short(type_name)}",
                        line=line,
                    )
                f_code = f_codes.get(f) if type_of(f) is str else None
                if f_code is None:
                    raise f_error(f, line)
                meta_append(process * process_unit + f_code * f_unit + kind)
                kept = False
                if len(op) > 6:  # more than every op's six fields
                    if check_fields(op, line):
                        self.saw_groups = True
                    kept = kind == FAIL and op.get("reads-kept") is True
                if kind == INVOKE:
                    if process in pending:
                        raise second_invoke_error(process, pending[process], line)
                    if process not in first_invoke:
                        if process < 0:  # here, once per process, not on every line
                            raise process_error(process, line)
                        first_invoke[process] = line
                    try:
                        value = op["value"]
                    except KeyError:
                        raise HistoryError("missing field 'value'", line=line) from None
                    if value != POLL_INVOKE or f in group_fs:  # a commit op reads [["poll"]]
                        _check_invoke_value(f, value, line, txn_fs, key_list_fs, group_fs)
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
                    txn(index, process, kind, value, line, f)
                    if kept:
                        self.sink.forget(process, value)
                else:
                    other(index, process, f, kind, value, line)
        except orjson.JSONDecodeError as err:
            raise not_json_error(err.msg, line + 1) from None  # that line was never counted
        except OverflowError:
            if abs(process) <= I64_MAX >> PROCESS_SHIFT:  # not ``meta``'s packing: a bug
                raise
            if process < 0:
                raise process_error(process, line) from None
            raise HistoryError(
                f"process {process} is too large", line=line,
                hint="client processes are small numbers: 0, 1, 2, ...",
            ) from None
        except OSError as err:
            raise HistoryError(
                f"cannot read the history: {err.strerror or err}", line=line
            ) from err
        finally:
            self.lines = line
            self.last_time = last_time
        if finish:
            self.finish()

    def _nemesis(self, op: dict[str, Any], line: int, last_time: int) -> int:
        """A nemesis line: only an ``index`` or ``time`` it carries is checked; a scripted
        wait that did not hold is noted (it makes the verdict unknown)."""
        self.nemesis_ops += 1
        self.meta.append(NEMESIS_META)
        reason = not_as_written(op)
        if reason is not None:
            self.waits_not_held.append(reason)
        index = op.get("index")
        if index is not None and (type(index) is not int or index != line - 1):
            raise index_error(index, line)
        time = op.get("time")
        if time is None:
            return last_time
        if type(time) is not int or not last_time <= time <= I64_MAX:
            time = self._odd_time(time, last_time, line)
        return int(time)

    def _odd_time(self, time: Any, last_time: int, line: int) -> int:
        """A time the inline check refused: a chunk's first one (kept), or an error."""
        if type(time) is not int or not 0 <= time <= I64_MAX:
            raise time_error(time, line)
        if last_time == TIME_UNSEEN:
            self.first_time = (line, time)
            return int(time)
        raise time_backwards_error(time, last_time, line)

    def _orphan(  # noqa: PLR0917 - called once per chunk boundary at most per process
        self, op: dict[str, Any], process: int, f: str, kind: int, type_name: str, line: int
    ) -> tuple[int, str, Any, int]:
        """A completion with no invoke: an error, unless its invoke may lie before this chunk.

        Whether it really does is decided when chunks are merged; here the op is
        folded in place with its own value, so the chunk's tables keep file order.
        """
        if not self.follows or process in self.first_invoke or process in self.orphans:
            raise no_invoke_error(type_name, process, line)
        if op.get("value") is None and kind != OK and (
            f in self.mop_fs or f in self.key_list_fs or f in self.group_fs
        ):
            raise NeedsWholeFile(f"line {line}: a {type_name} without a value across a chunk edge")
        self.orphans[process] = (line, f, type_name)
        return (-1, f, None, line)

    def finish(self) -> None:
        """End of history: an empty one is malformed; pending invokes count as info."""
        if self.lines == 0:
            raise empty_history_error()
        self.never_completed = len(self.pending)
        for process, (index, f, value, line) in sorted(self.pending.items(), key=_by_index):
            if f in self.mop_fs:
                self.sink.txn(index, process, INFO, value, line, f)
            else:
                self.sink.other(index, process, f, INFO, value, line)
        self.pending.clear()


class NeedsWholeFile(Exception):
    """A chunk cannot be judged on its own; check the file in one pass instead."""


def _by_index(item: tuple[int, tuple[int, str, Any, int]]) -> int:
    return item[1][0]


def _check_invoke_value(  # noqa: PLR0917 - the scanner's per-history tables, per invoke
    f: str,
    value: Any,
    line: int,
    mop_fs: frozenset[str],
    key_list_fs: frozenset[str],
    group_fs: frozenset[str],
) -> None:
    """Invokes of send/poll/txn carry ``["send", k, v]`` and ``["poll"]`` micro-ops."""
    if f in mop_fs:
        if type(value) is not list:
            raise HistoryError(f"{f} value must be a list of micro-ops", line=line)
        for mop in value:
            if mop == POLL_MOP:
                continue
            if type(mop) is list and mop and mop[0] in ALLOWED_IN:
                check_mop(f, mop, line, kind="invoke")
                continue
            try:
                tag, k, v = mop
            except (TypeError, ValueError):
                tag = k = v = None
            if tag != "send" or type(k) is not str or type(v) is not int or not 0 <= v <= I64_MAX:
                raise malformed_mop(mop, line, invoke=True)
    elif f in key_list_fs:
        check_key_list(f, value, line)
    elif f in group_fs:
        check_group_op(f, value, line, kind="invoke")


def check_key_list(f: str, value: Any, line: int) -> list[str]:
    """The value of assign/subscribe: a list of keys (strings)."""
    if type(value) is not list or any(type(k) is not str for k in value):
        raise HistoryError(f"{f} value must be a list of keys, got {short(value)}", line=line)
    return value
