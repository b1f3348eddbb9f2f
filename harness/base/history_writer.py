"""The history writer: every op of a run, stamped and written as it happens.

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
here is cheaper than finding them in the checker. Its reading twin, the op
types and the process-number rule are in :mod:`harness.base.history`.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import orjson

from harness.base.contract import NEMESIS
from harness.base.history import COMPLETIONS, Completion, Op, Process


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
        self, invoke_op: Mapping[str, Any], type: Completion, value: Any, error: Any = None,
        fields: Mapping[str, Any] | None = None,
    ) -> Op:
        """Record the completion of ``invoke_op``: ``ok``, ``fail`` or ``info``.

        ``error`` (any JSON) says why a ``fail`` or ``info`` happened; it is left
        out of the line when None. ``fields``: the completion's optional fields
        (docs/HISTORY.md), written after the others.
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
        if fields:
            op.update(fields)
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
