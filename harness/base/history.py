"""Reading run histories in the JSON Lines format of docs/HISTORY.md, and their op types.

The writer, :class:`harness.base.history_writer.HistoryWriter`, stamps and
writes every op as it happens; the reading side is its twin: :func:`read_history` yields the ops of
a file, and :func:`pairs` hands each client invoke back with its completion
(``ClientPair``) and each nemesis action as one ``NemesisPair``, with the
contract's rule for an invoke the history never completes (it counts as
``info``). The report's op table and its fault bands read histories through
it; the checker's scanner and the Spark engine pair on their own, for speed
(see their docstrings).

:class:`ProcessTable` keeps the Jepsen process-number rule: a client whose op
ended ``info`` may still be doing it, so its thread continues under a fresh
process number (old + concurrency) and never reuses the old one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

import orjson

from harness.base.contract import NEMESIS, OUTCOMES
from harness.base.errors import HistoryError

Op = dict[str, Any]
Process = int | str
Completion = Literal["ok", "fail", "info"]

COMPLETIONS: frozenset[str] = frozenset(OUTCOMES)


def read_history(path: str | Path) -> Iterator[Op]:
    """Yield the ops of a history file, for plain use (the checker has a strict parser).

    Blank lines are skipped. A last line cut short by a crash (``cut_short_at``)
    is dropped; any other unreadable line raises :class:`HistoryError` naming it.
    The file is read a line at a time: a long run's history is never held whole.
    """
    from harness.base.userfile import open_regular

    with open_regular(path, str(path), error=HistoryError,
                      hint="pass a history that is a regular file") as file:
        cut = cut_short_at(file)
        file.seek(0)
        at = 0
        for number, raw in enumerate(file, start=1):
            if cut is not None and at >= cut:
                return
            at += len(raw)
            if not raw.strip():
                continue
            try:
                op = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise HistoryError(f"not JSON: {e}", line=number) from e
            if not isinstance(op, dict):
                raise HistoryError("an op must be a JSON object", line=number)
            yield op


#: How far back ``cut_short_at`` reads at a time while looking for the last newline.
_TAIL_BLOCK = 1 << 16


def cut_short_at(file: BinaryIO) -> int | None:
    """Where the last line starts if the harness died while writing it; else None.

    The one place that decides what HISTORY.md calls "a write cut by a crash":
    the writer ends every line with a newline, so a last line without one that
    is not valid JSON was cut mid-write. A last line without a newline that *is*
    valid JSON is complete, and so is every line before the last newline.
    ``file`` is a seekable binary file; only its tail is read.
    """
    size = file.seek(0, os.SEEK_END)
    if size == 0:
        return None
    file.seek(size - 1)
    if file.read(1) == b"\n":
        return None
    start = end = size
    while start > 0:  # back to the byte after the last newline
        block_start = max(0, end - _TAIL_BLOCK)
        file.seek(block_start)
        newline = file.read(end - block_start).rfind(b"\n")
        if newline >= 0:
            start = block_start + newline + 1
            break
        start = end = block_start
    file.seek(start)
    try:
        orjson.loads(file.read(size - start))
    except orjson.JSONDecodeError:
        return start
    return None


class ClientPair(NamedTuple):
    """A client op: its invoke and its completion, None when the history ended first."""

    invoke: Op
    completion: Op | None

    @property
    def type(self) -> str:
        """``ok``, ``fail`` or ``info``; an invoke never completed counts as ``info``."""
        return "info" if self.completion is None else str(self.completion.get("type"))


class NemesisPair(NamedTuple):
    """One nemesis action: the invoke that announced it and the line that reported it.

    ``invoke`` is None when the nemesis only reported what it did (one ``info``
    line, ``HistoryWriter.nemesis``); ``completion`` is None when the history
    ended, or the next action started, before the report.
    """

    invoke: Op | None
    completion: Op | None

    @property
    def op(self) -> Op:
        """The line that says what was done: the completion, else the bare invoke."""
        op = self.completion if self.completion is not None else self.invoke
        assert op is not None  # a pair always holds one of the two
        return op


#: ``ClientPair(invoke, completion)`` at C speed: half the cost of the generated ``__new__``.
_new_pair: Callable[[type[ClientPair], tuple[Op, Op | None]], ClientPair] = tuple.__new__


def pairs(ops: Iterable[Op]) -> Iterator[ClientPair | NemesisPair]:
    """Each invoke with its completion, in history order, for reading (not judging) a history.

    A ``ClientPair`` comes out at its completion's place; a ``NemesisPair`` at
    its report's place (or where the next nemesis line shows it will get none).
    Invokes the history leaves pending come out last, in file order, with
    ``completion`` None: HISTORY.md counts them as ``info``.

    Judging the pairing is the checker's job (exit 3), so this reader is
    lenient where a history breaks the rules: a completion with no pending
    invoke of its process is skipped; an invoke while one is pending leaves the
    earlier one never completed (yielded at once, as ``info``); a completion
    whose ``f`` differs from its invoke's still completes it. Nemesis lines are
    held to no pairing rule (HISTORY.md): a nemesis completion pairs with the
    nemesis invoke just before it when their ``f`` agree, and stands alone
    otherwise.
    """
    pending: dict[Any, tuple[int, Op]] = {}  # process -> (position, invoke)
    pop = pending.pop
    make = _new_pair  # locals: this loop runs once per line of a 1M-line history
    nemesis: tuple[int, Op] | None = None  # the nemesis invoke awaiting its report
    for position, op in enumerate(ops):
        process = op.get("process")
        if process == NEMESIS:
            invoked = op.get("type") == "invoke"
            if nemesis is not None and (invoked or nemesis[1].get("f") != op.get("f")):
                yield NemesisPair(nemesis[1], None)  # it will get no report
                nemesis = None
            if invoked:
                nemesis = (position, op)
            else:
                yield NemesisPair(nemesis[1] if nemesis else None, op)
                nemesis = None
        elif op.get("type") == "invoke":
            earlier = pop(process, None)
            if earlier is not None:
                yield make(ClientPair, (earlier[1], None))
            pending[process] = (position, op)
        else:
            started = pop(process, None)
            if started is not None:
                yield make(ClientPair, (started[1], op))
    left: list[tuple[int, ClientPair | NemesisPair]] = [
        (position, ClientPair(invoke, None)) for position, invoke in pending.values()]
    if nemesis is not None:
        left.append((nemesis[0], NemesisPair(nemesis[1], None)))
    left.sort(key=lambda item: item[0])
    for _, pair in left:
        yield pair


class ProcessTable:
    """Which process number each client thread currently runs as.

    Thread ``t`` of ``concurrency`` threads starts as process ``t``. When its op
    ends ``info`` (or it crashes), :meth:`retire` moves it to ``old + concurrency``,
    so process numbers never repeat and ``process % concurrency`` is still the
    thread, as in Jepsen. Thread-safe: worker threads retire themselves.
    """

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._current = list(range(concurrency))

    def process(self, thread: int) -> int:
        with self._lock:
            return self._current[thread]

    def retire(self, thread: int) -> int:
        """Give ``thread`` a fresh process number and return it."""
        with self._lock:
            self._current[thread] += self.concurrency
            return self._current[thread]

    def thread_of(self, process: int) -> int:
        return process % self.concurrency

    def snapshot(self) -> dict[int, int]:
        """Thread → current process, a copy."""
        with self._lock:
            return dict(enumerate(self._current))
