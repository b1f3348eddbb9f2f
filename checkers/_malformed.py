"""How to say what is wrong with malformed input, and the few value rules it takes.

``checkers._history`` decides *where* input breaks docs/HISTORY.md (it walks
the lines); this module words the errors, so the memory and the Spark engines
say the same thing for the same line (``checkers.spark.history`` replays the
first bad line through the same scanner). Each error says what is wrong and,
in its hint, what to do next: most malformed histories were edited, converted
or cut by hand, and the fix is in the file, not in insync.

Building these messages is off the hot path: the checks that trigger them are
inline in the scanner and the collector; only once a check fails is the mop or
value looked at again here to say *which* rule it broke.
"""

from __future__ import annotations

from typing import Any

import orjson

from harness.base.contract import NEMESIS, client_fs
from harness.base.errors import HistoryError

#: Offsets, values and times are signed 64-bit integers (Kafka's and Spark's ``long``).
I64_MAX = 2**63 - 1

MOP_HINT = (
    'a micro-op is ["send", key, value], ["send", key, [offset, value]], ["poll"] or '
    '["poll", {key: [[offset, value], ...]}]: see docs/HISTORY.md'
)
RANGE_HINT = "offsets and values are integers from 0 to 2**63-1: see docs/HISTORY.md"
ORDER_HINT = (
    "lines must stay in the order the harness wrote them: was a line lost, repeated, "
    "moved or edited?"
)


def short(value: Any) -> str:
    """A JSON rendering of ``value`` short enough for a one-line message."""
    text = orjson.dumps(value, default=repr).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def empty_history_error() -> HistoryError:
    """A file with no line at all."""
    return HistoryError(
        "the history is empty",
        hint="a run writes one op per line from its start: was it cut before its first op, "
        "or is this the wrong file?",
    )


def not_json_error(reason: str, line: int) -> HistoryError:
    """A line orjson could not parse (``reason`` is its message)."""
    if "UTF-8" in reason:
        return HistoryError(
            "not UTF-8 text", line=line,
            hint="a history is UTF-8 JSON: re-encode the file, e.g. with iconv -t UTF-8, "
            "or remove the line",
        )
    if "empty" in reason:
        return HistoryError(
            "an empty line", line=line, hint="remove blank lines: every line is one op"
        )
    return HistoryError(
        f"not JSON ({reason})", line=line,
        hint="the line is cut or garbled: repair or remove it; only a last line without "
        "a final newline is taken as cut by a crash and dropped",
    )


def not_an_object_error(value: Any, line: int) -> HistoryError:
    """A line that is JSON but not an object."""
    return HistoryError(
        f"expected a JSON object, got {json_kind(value)}", line=line,
        hint="every line is one op object: see docs/HISTORY.md",
    )


def process_error(process: Any, line: int) -> HistoryError:
    """A ``process`` that is neither a client number nor ``"nemesis"``."""
    if type(process) is int and process < 0:
        return HistoryError(
            f"negative client process {process}", line=line,
            hint='client processes are numbered from 0; faults use "nemesis"',
        )
    return HistoryError(
        f'process must be an integer or "nemesis", got {short(process)}', line=line
    )


def index_error(index: Any, line: int) -> HistoryError:
    """An ``index`` that is not the line's position in the file."""
    if type(index) is not int:
        return HistoryError(f"index must be an integer, got {short(index)}", line=line)
    return HistoryError(
        f"index {index} is not the line's position {line - 1}", line=line, hint=ORDER_HINT
    )


def time_error(time: Any, line: int) -> HistoryError:
    """A ``time`` that is not a non-negative 64-bit integer."""
    return HistoryError(
        f"time must be a non-negative integer (nanoseconds), got {short(time)}", line=line,
        hint="time is nanoseconds since the run started, a signed 64-bit integer",
    )


def time_backwards_error(time: int, before: int, line: int) -> HistoryError:
    """A ``time`` below the last one before it."""
    return HistoryError(
        f"time {time} goes backwards (the time before it is {before})", line=line,
        hint=ORDER_HINT,
    )


def f_error(f: Any, line: int) -> HistoryError:
    """A client ``f`` that HISTORY.md does not define."""
    if type(f) is not str:
        return HistoryError(f"f must be a string, got {short(f)}", line=line)
    return HistoryError(
        f"unknown client f {short(f)}", line=line,
        hint=f"a client op is one of {', '.join(client_fs())}; "
        f'a fault is a line with process "{NEMESIS}"',
    )


def no_invoke_error(type_name: str, process: int, line: int) -> HistoryError:
    """A completion that no pending invoke of its process explains.

    A negative process never has one (its first invoke is refused), so that is
    what is said for it.
    """
    if process < 0:
        return process_error(process, line)
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


def malformed_mop(mop: Any, line: int, *, invoke: bool = False) -> HistoryError:
    """The error for a micro-op that does not follow HISTORY.md, naming the broken rule."""
    where = " in invoke" if invoke else ""
    bad = _out_of_range(mop)
    if bad is not None:
        return HistoryError(f"{bad} in micro-op{where}: {short(mop)}", line=line, hint=RANGE_HINT)
    return HistoryError(f"malformed micro-op{where}: {short(mop)}", line=line, hint=MOP_HINT)


def _out_of_range(mop: Any) -> str | None:
    """What is wrong with the first offset or value of ``mop`` out of 0..2**63-1, if any."""
    pairs: list[tuple[str, Any]] = []
    if type(mop) is list and len(mop) == 3 and mop[0] == "send":
        x = mop[2]
        if type(x) is list and len(x) == 2:
            pairs += [("offset", x[0]), ("value", x[1])]
        else:
            pairs.append(("value", x))
    elif type(mop) is list and len(mop) == 2 and mop[0] == "poll" and type(mop[1]) is dict:
        for records in mop[1].values():
            for record in records if type(records) is list else ():
                if type(record) is list and len(record) == 2:
                    pairs += [("offset", record[0]), ("value", record[1])]
    for name, n in pairs:
        if type(n) is int and n < 0:
            return f"{name} {n} is negative"
        if (type(n) is int and n > I64_MAX) or (type(n) is float and abs(n) >= 2.0**63):
            return f"{name} {short(n)} does not fit in a signed 64-bit integer"
    return None


def json_kind(value: Any) -> str:
    """How to name the JSON type of ``value`` in a message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a number" if isinstance(value, int | float) else type(value).__name__
