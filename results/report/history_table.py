"""A history read once into columns: one row per client op, nemesis ops, chosen keys' records.

The report needs every op's times and outcome (for the plots) but only a few
ops' values (for hovering and the anomaly panels), so values are not kept:
each line's byte offset is, and ``read_lines`` fetches the few that are shown.
Records (offset, value, op) are gathered only for the keys an anomaly names,
for the offset grids.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import orjson

from harness.base.contract import INFO, INVOKE, NEMESIS, OK, TYPE_CODES
from harness.base.errors import HistoryError
from harness.base.history import NemesisPair, Op, pairs
from harness.base.shapes import got
from harness.base.userfile import open_regular
from results.report.op_lookup import line_offsets
from results.report.plot_data import Array

#: completion type -> its position in ``OUTCOMES``: outcome code - OK (``results.report.plot_data``)
TYPE_CODE = {name: code - OK for name, code in TYPE_CODES.items() if code != INVOKE}

#: One record of a key: offset (None: unknown), value, completion index, "w" or "r", outcome.
Record = tuple[int | None, int, int, str, int]


@dataclass
class OpTable:
    """Columns, one row per client op (invoke + completion), in completion order."""

    index: Array
    invoke_index: Array
    start: Array
    end: Array
    process: Array
    f: Array
    type: Array
    error: Array
    f_names: list[str]
    errors: list[str]
    nemesis: list[dict[str, Any]]
    line_offsets: Array
    start_time: int
    end_time: int
    lines: int
    records: dict[str, list[Record]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.index.size)


class _Codes:
    """Interns strings as small integers (op names, error texts)."""

    def __init__(self, limit: int) -> None:
        self.names: list[str] = []
        self.codes: dict[str, int] = {}
        self.limit = limit

    def code(self, name: str) -> int:
        c = self.codes.get(name)
        if c is None:
            if len(self.names) >= self.limit:
                return self.code_other()
            c = self.codes[name] = len(self.names)
            self.names.append(name)
        return c

    def code_other(self) -> int:
        c = self.codes.get("(other)")
        if c is None:
            c = self.codes["(other)"] = len(self.names)
            self.names.append("(other)")
        return c


def _error_text(error: Any) -> str:
    return error if isinstance(error, str) else orjson.dumps(error).decode()


COLUMNS = ("index", "invoke", "start", "end", "process", "f", "type", "error")
INT64_MAX = 2**63 - 1
CLIENT_TYPES = frozenset(TYPE_CODES)
#: What to do about a malformed history, in every message about one.
HISTORY_HINT = "fix the history to follow docs/HISTORY.md, then run insync report again"


def _open(path: Path) -> BinaryIO:
    return open_regular(path, str(path), error=HistoryError,
                        hint="pass a run directory whose history.jsonl is a regular file")


def _malformed(path: Path, line_no: int, what: str) -> HistoryError:
    """The error for line ``line_no`` (0-based) of ``path``, naming both."""
    err = HistoryError(f"{path}: line {line_no + 1}: {what}", hint=HISTORY_HINT)
    err.line = line_no + 1
    return err


def _what_is_wrong(op: Any) -> str:
    """Which field of a line ``read_table`` refused, in words."""
    if type(op) is not dict:
        return f"expected a JSON object, got {got(op)}"
    for name in ("time", "process", "type"):
        if name not in op:
            return f"missing field {name!r}"
    for name in ("time", "index"):
        v = op.get(name, 0)
        if type(v) is not int or not 0 <= v <= INT64_MAX:
            return f"{name} must be a non-negative 64-bit integer, got {got(v)}"
    process = op["process"]
    if type(process) is not int or not 0 <= process <= INT64_MAX:
        return f'process must be a non-negative integer or "nemesis", got {got(process)}'
    if type(op["type"]) is not str or op["type"] not in CLIENT_TYPES:
        return f"type must be invoke, ok, fail or info, got {got(op['type'])}"
    return f"f must be a string, got {got(op.get('f'))}"


def read_table(path: Path, keys: Collection[str] = ()) -> OpTable:
    """Read ``path`` (a history) into an ``OpTable``; records of ``keys`` are gathered.

    The pairing is the ground floor's (``harness.base.history.pairs``), and so
    are its rules: an invoke never completed is an ``info`` row ("never
    completed") ending at the history's last time. It assumes a history the
    checker has judged, but the fields every row is built from (``time``,
    ``index``, ``process``, ``type``, ``f``) are checked on every line: a
    report is often drawn from a stored verdict without re-checking, and a
    string where a time belongs must be a ``HistoryError`` naming the line, not
    a numpy error. Only a last line that is not JSON (a write cut by a crash,
    docs/HISTORY.md) is skipped.
    """
    want = set(keys)
    want_bytes = [k.encode() for k in want]
    named: set[int] = set()  # indices of the lines that name a wanted key
    state = _Reading(path)
    fs, errs = _Codes(255), _Codes(65_000)
    f_codes = fs.codes
    rows: list[tuple[int, ...]] = []
    add = rows.append
    nemesis: list[dict[str, Any]] = []
    unfinished: list[Op] = []  # invokes never completed
    records: dict[str, list[Record]] = {k: [] for k in want}
    for pair in pairs(state.ops(want_bytes, named)):
        if isinstance(pair, NemesisPair):
            nemesis.extend(op for op in pair if op is not None)
            continue
        invoke, done = pair
        if done is None:
            unfinished.append(invoke)
            continue
        index = done["index"]
        f_code = f_codes.get(invoke["f"])
        if f_code is None:
            f_code = fs.code(invoke["f"])
        outcome = TYPE_CODE.get(done["type"], INFO - OK)
        error = done.get("error")
        add((index, invoke["index"], invoke["time"], done["time"], done["process"], f_code,
             outcome, -1 if error is None else errs.code(_error_text(error))))
        if named and (invoke["index"] in named or index in named):
            named.discard(invoke["index"])
            named.discard(index)
            _gather(records, want, index=index, outcome=outcome, invoked=invoke.get("value"),
                    completed=done.get("value"))
    if state.first_time is None:  # not one readable op: an empty file, or a single broken line
        raise state.unreadable or HistoryError(f"{path} is empty", hint=HISTORY_HINT)
    last_time = max(itertools.chain([state.first_time], (r[3] for r in rows),
                                    (op["time"] for op in nemesis),
                                    (op["time"] for op in unfinished)))
    for invoke in unfinished:  # never completed: info
        inv = invoke["index"]
        add((inv, inv, invoke["time"], last_time, invoke["process"], fs.code(invoke["f"]), 2,
             errs.code("never completed")))
        if inv in named:
            _gather(records, want, index=inv, outcome=2, invoked=invoke.get("value"),
                    completed=None)
    table = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    table = table[np.argsort(table[:, 0], kind="stable")]

    def col(name: str, dtype: Any) -> Array:
        return np.ascontiguousarray(table[:, COLUMNS.index(name)], dtype=dtype)

    return OpTable(
        index=col("index", np.int64), invoke_index=col("invoke", np.int64),
        start=col("start", np.int64), end=col("end", np.int64),
        process=col("process", np.int64), f=col("f", np.uint8), type=col("type", np.uint8),
        error=col("error", np.int32), f_names=fs.names, errors=errs.names, nemesis=nemesis,
        line_offsets=line_offsets(path), start_time=state.first_time,
        end_time=last_time, lines=state.lines, records=records,
    )


class _Reading:
    """One pass over a history's lines: each checked for the fields a row is built from.

    What the pass learns on the way (the first time, the line count, a last
    line cut short) is kept here for ``read_table`` to use once it is done.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.first_time: int | None = None
        self.lines = 0
        self.unreadable: HistoryError | None = None  # fatal unless it was the last line

    def ops(self, want_bytes: list[bytes], named: set[int]) -> Iterator[Op]:
        """The ops, checked, each with its ``index`` (its line when it has none); the
        indices of lines naming one of ``want_bytes`` go into ``named``."""
        path = self.path
        loads = orjson.loads
        top, client_types = INT64_MAX, CLIENT_TYPES  # locals: this loop runs once per line
        line_no = -1
        with _open(path) as fh:
            for line_no, line in enumerate(fh):
                if self.unreadable is not None:
                    raise self.unreadable
                try:
                    op = loads(line)
                except orjson.JSONDecodeError as err:
                    self.unreadable = _malformed(path, line_no, f"not JSON ({err.msg})")
                    continue
                try:
                    t, process, type_ = op["time"], op["process"], op["type"]
                except (KeyError, TypeError):
                    raise _malformed(path, line_no, _what_is_wrong(op)) from None
                index = op.setdefault("index", line_no)
                if (type(t) is not int or type(index) is not int or not 0 <= t <= top
                        or not 0 <= index <= top):
                    raise _malformed(path, line_no, _what_is_wrong(op))
                if self.first_time is None:
                    self.first_time = t
                if process != NEMESIS:
                    if (type(process) is not int or not 0 <= process <= top
                            or type(type_) is not str or type_ not in client_types
                            or type(op.get("f")) is not str):
                        raise _malformed(path, line_no, _what_is_wrong(op))
                    if want_bytes and any(k in line for k in want_bytes):
                        named.add(index)
                yield op
        self.lines = line_no + 1


def _gather(records: dict[str, list[Record]], want: set[str], *, index: int, outcome: int,
            invoked: Any, completed: Any) -> None:
    """Add the writes and reads of one op on the wanted keys.

    Micro-ops are free-form JSON to this reader (the checker judges them), so
    anything that is not a well-formed record of integers is left out.
    """
    mops = completed if isinstance(completed, list) else invoked
    if not isinstance(mops, list):
        return
    for mop in mops:
        if not isinstance(mop, list) or not mop:
            continue
        if mop[0] == "send" and len(mop) == 3 and type(mop[1]) is str and mop[1] in want:
            if _is_pair(mop[2]):
                records[mop[1]].append((mop[2][0], mop[2][1], index, "w", outcome))
            elif type(mop[2]) is int:
                records[mop[1]].append((None, mop[2], index, "w", outcome))
        elif mop[0] == "poll" and len(mop) == 2 and isinstance(mop[1], dict):
            for k, recs in mop[1].items():
                if k in want and isinstance(recs, list):
                    records[k].extend((r[0], r[1], index, "r", outcome) for r in recs
                                      if _is_pair(r))


def _is_pair(r: Any) -> bool:
    """``[offset, value]``: two integers."""
    return type(r) is list and len(r) == 2 and type(r[0]) is int and type(r[1]) is int


def read_lines(path: Path, table: OpTable, rows: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Full completion and invoke ops of the given table rows: completion index -> detail."""
    out: dict[int, dict[str, Any]] = {}
    want = sorted({int(r) for r in rows})
    lines = table.line_offsets
    with path.open("rb") as fh:
        for r in want:
            index, invoke = int(table.index[r]), int(table.invoke_index[r])
            detail: dict[str, Any] = {}
            for which, i in (("invoke", invoke), ("completion", index)):
                if 0 <= i < lines.size:
                    fh.seek(int(lines[i]))
                    try:
                        detail[which] = orjson.loads(fh.readline())
                    except orjson.JSONDecodeError:
                        continue
            if invoke == index:
                detail.pop("completion", None)
            out[index] = detail
    return out
