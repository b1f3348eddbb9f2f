"""The error a single pass raises at one line, given what it knew when it got there.

Why: ``checkers.spark.history`` finds the first malformed line of a huge file
in Spark, but the words for it must be the memory engine's. Replaying that one
line through the real ``Scanner`` and ``Collector``, primed with the time
before it and its process's pending invoke, gives exactly those words without
a second copy of any rule.
"""

from __future__ import annotations

from typing import Any

import orjson

from checkers._collect import Collector
from checkers._history import Scanner
from harness.base.errors import HistoryError


def explain_line(
    raw: bytes,
    line: int,
    *,
    last_time: int = 0,
    pending: dict[int, tuple[int, str, Any, int]] | None = None,
) -> HistoryError | None:
    """The ``HistoryError`` for line ``line`` (its bytes, no newline), or None if it is fine.

    ``last_time`` is the time of the last timed line before it; ``pending``
    maps a process to its pending invoke as ``Scanner.pending`` keeps it
    (index, f, value, line).
    """
    scanner = Scanner(Collector(), first_line=line - 1)
    scanner.last_time = last_time
    scanner.pending.update(pending or {})
    try:
        scanner.feed_all(map(orjson.loads, [raw]), finish=False)
    except HistoryError as err:
        return err
    return None
