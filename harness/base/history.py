"""Writing and reading run histories in the JSON Lines format of docs/HISTORY.md.

The interpreter owns the clock and the history: every invocation and completion
goes through one :class:`HistoryWriter`, which stamps it with its ``index`` (its
position in the file) and its ``time`` (nanoseconds since the run started, on a
monotonic clock) and writes it out *before returning*, so a harness that dies
mid-run still leaves a readable history. Many client threads and the nemesis
share one writer, so stamping and writing happen under one lock: file order,
index order and time order always agree.

The writer also refuses to write a malformed history (a second invoke while one
is pending for the same process, a completion with no pending invoke, a completion
whose ``f`` differs from its invoke's): those are harness bugs, and catching them
here is cheaper than finding them in the checker.

The reading side is the writer's twin: :func:`read_history` yields the ops of
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

import contextlib
import io
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Literal, NamedTuple

import orjson

from harness.base.contract import NEMESIS, OUTCOMES
from harness.base.errors import HistoryError

Op = dict[str, Any]
Process = int | str
Completion = Literal["ok", "fail", "info"]

COMPLETIONS: frozenset[str] = frozenset(OUTCOMES)


class HistoryWriter:
    """Appends ops to one history, one JSON object per line, flushed as it happens.

    ``sink`` is a path (opened for appending) or an already open binary stream
    (the simulator writes to a ``BytesIO``). ``clock`` returns nanoseconds;
    ``start_ns`` is the run's time zero on that clock (default: now), so the
    runner can share one time zero between its generator context and the history.
    ``fsync=True`` also forces each line to disk, for runs where the harness host
    itself may lose power; flushing to the OS is enough to survive a harness crash.
    """

    def __init__(
        self,
        sink: str | Path | BinaryIO,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        start_ns: int | None = None,
        fsync: bool = False,
    ) -> None:
        if isinstance(sink, str | Path):
            # Unbuffered: each line is one write, so a write the disk refuses leaves no
            # bytes behind in a buffer to be flushed (half a line) at close.
            self._file: BinaryIO = open(sink, "ab", buffering=0)  # noqa: SIM115 - close()
            self._owns_file = True
        else:
            self._file = sink
            self._owns_file = False
        self._clock = clock
        self._start = clock() if start_ns is None else start_ns
        self._fsync = fsync
        self._lock = threading.Lock()
        self._index = 0
        self._pending: dict[Process, Op] = {}
        #: Closed: the run is over (an interrupted run closes it after waiting 30 s for
        #: busy workers); a worker whose op ends later is not recorded, and not an error.
        self._closed = False
        self.dropped = 0
        #: The write error that closed the history (a full disk): set once, then every
        #: later op is dropped, so the file ends with whole lines only (see ``_write``).
        self.failed: OSError | None = None
        self._written = self._file.tell() if self._owns_file else 0

    # -- the low-level append -------------------------------------------------

    def append(self, op: Mapping[str, Any]) -> Op:
        """Stamp ``op`` with index and time, write and flush it; return what was written."""
        with self._lock:
            if self._closed or self.failed is not None:
                self.dropped += 1
                return dict(op)
            self._check(op)
            written: Op = {"index": self._index, "time": self._clock() - self._start}
            if "index" in op or "time" in op:  # the writer's own stamps win
                written.update((k, v) for k, v in op.items() if k not in ("index", "time"))
            else:
                written.update(op)  # the usual op: no per-field filter (two lines per op)
            line = orjson.dumps(written, option=orjson.OPT_APPEND_NEWLINE)
            if not self._write(line):
                self.dropped += 1
                return dict(op)
            self._index += 1
            self._track(written)
            return written

    def _write(self, line: bytes) -> bool:
        """Write one whole line (under the lock); False if the file refused it.

        A write error (``ENOSPC``, ``EIO``) closes the history for good, with
        ``failed`` set for the runner's host watch to stop the run on: the file is
        cut back to its last whole line, so what is kept is a history the checker
        judges as it stands. Raising instead would kill the worker thread that
        happened to write, with a traceback, and leave the others writing.
        """
        try:
            if self._owns_file:
                view = memoryview(line)
                while view:
                    view = view[self._file.write(view) or 0:]
            else:
                self._file.write(line)
                self._file.flush()
            if self._fsync:
                _fsync(self._file)
        except OSError as err:
            self.failed = err
            if self._owns_file:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._file.fileno(), self._written)
            return False
        self._written += len(line)
        return True

    # -- the helpers the runner uses -------------------------------------------

    def invoke(self, process: Process, f: str, value: Any) -> Op:
        """Record that ``process`` starts ``f`` with ``value``; returns the invoke op."""
        return self.append({"process": process, "type": "invoke", "f": f, "value": value})

    def complete(
        self, invoke_op: Mapping[str, Any], type: Completion, value: Any, error: Any = None
    ) -> Op:
        """Record the completion of ``invoke_op``: ``ok``, ``fail`` or ``info``.

        ``error`` (any JSON) says why a ``fail`` or ``info`` happened; it is left
        out of the line when None.
        """
        if invoke_op.get("type") != "invoke":
            raise ValueError(f"complete() needs an invoke op, got {invoke_op!r}")
        op: Op = {
            "process": invoke_op["process"],
            "type": type,
            "f": invoke_op["f"],
            "value": value,
        }
        if error is not None:
            op["error"] = error
        return self.append(op)

    def nemesis(self, f: str, value: Any, error: Any = None) -> Op:
        """Record what the nemesis really did (one ``info`` line, as in HISTORY.md)."""
        op: Op = {"process": NEMESIS, "type": "info", "f": f, "value": value}
        if error is not None:
            op["error"] = error
        return self.append(op)

    def nemesis_invoke(self, f: str, value: Any) -> Op:
        """Record that a fault is about to start, so its start lines up with client ops.

        Nemesis lines are not held to the invoke/complete pairing, so a nemesis
        that cannot report a completion (the harness died) leaves a valid history.
        """
        return self.append({"process": NEMESIS, "type": "invoke", "f": f, "value": value})

    # -- lifecycle --------------------------------------------------------------

    @property
    def pending(self) -> dict[Process, Op]:
        """Client invocations not completed yet (a copy), by process."""
        with self._lock:
            return dict(self._pending)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owns_file:
                self._file.close()  # unbuffered: nothing is left to flush
            else:
                self._file.flush()

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the pairing rules of HISTORY.md ------------------------------------------

    def _check(self, op: Mapping[str, Any]) -> None:
        for field in ("process", "type", "f"):
            if field not in op:
                raise ValueError(f"an op needs {field!r}: {dict(op)!r}")
        process, type_ = op["process"], op["type"]
        if process == NEMESIS:
            return
        if not isinstance(process, int) or isinstance(process, bool):
            raise ValueError(f"a client process is an int, got {process!r}")
        pending = self._pending.get(process)
        if type_ == "invoke":
            if pending is not None:
                raise ValueError(f"process {process} invokes {op['f']!r} while {pending['f']!r} "
                                 f"(index {pending['index']}) is pending")
        elif type_ in COMPLETIONS:
            if pending is None:
                raise ValueError(f"process {process} completes {op['f']!r} with nothing pending")
            if pending["f"] != op["f"]:
                raise ValueError(f"process {process} completes {op['f']!r} but invoked "
                                 f"{pending['f']!r}")
        else:
            raise ValueError(f"unknown op type {type_!r}")

    def _track(self, op: Op) -> None:
        process = op["process"]
        if process == NEMESIS:
            return
        if op["type"] == "invoke":
            self._pending[process] = op
        else:
            del self._pending[process]


def _fsync(file: BinaryIO) -> None:
    try:
        fd = file.fileno()
    except io.UnsupportedOperation:
        return  # an in-memory sink has nothing to sync
    os.fsync(fd)


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
