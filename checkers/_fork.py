"""Running a function in a forked child and getting its pickled result back.

Why fork and not a pool: the child inherits the parent's state (the file
offsets to read, or a collector of a million ops) without copying it, and
returns only what it built. Callers fork only from a single-threaded process
(``checkers._parallel.chunk_count``): a lock held by another thread at the
fork would stay held in the child forever.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def can_fork() -> bool:
    """True when this process runs a single thread: only then is forking it safe."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


@dataclass(frozen=True)
class Child:
    """A forked child and the pipe its result arrives on."""

    pid: int
    fd: int


class Raised:
    """What the child's function raised, when it is one of the ``passes`` types."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def fork_call(
    fn: Callable[..., Any], *args: Any, passes: tuple[type[BaseException], ...] = ()
) -> Child:
    """Start ``fn(*args)`` in a forked child; ``result`` collects it."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its work is checked through the parent
        code = 1
        try:
            os.close(read_fd)
            try:
                value: Any = fn(*args)
            except passes as err:
                value = Raised(err)
            with os.fdopen(write_fd, "wb", buffering=1 << 20) as out:
                # streamed: neither side ever holds the whole pickle in memory
                pickle.dump(value, out, pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return Child(pid, read_fd)


def result(child: Child) -> Any:
    """The child's return value; raises what it raised of its ``passes`` types.

    Returns None when the child died or sent nothing: the caller then does the
    work itself, which also surfaces any bug the child met.
    """
    value: Any = None
    with os.fdopen(child.fd, "rb", buffering=1 << 20) as pipe:
        try:
            value = pickle.load(pipe)  # our own child, through our own pipe
        except (EOFError, pickle.UnpicklingError, ValueError):
            value = None  # it died mid-way; closing the pipe ends it if it still writes
    _, status = os.waitpid(child.pid, 0)
    if status != 0:
        return None
    if isinstance(value, Raised):
        raise value.error
    return value
