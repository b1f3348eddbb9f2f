"""Where a client thread is stuck, in one line of the run's log, when its op is abandoned.

An op abandoned at its deadline (``Interpreter._expire``) says only that some call
inside it outlived the op's budget, although each wait of an op is meant to draw on
what is left of that budget (``workloads.queue.txn``). Which call it was is known
only while the thread is still in it, so the interpreter reads the thread's stack
(``sys._current_frames``) at the moment it abandons the op, and logs:

- the innermost frames in insync's own code (``OWN``), the first with its source
  line: a librdkafka call has no Python frame of its own, so that line is the call
  that blocks;
- the innermost frame overall, when it lies elsewhere (a ``threading`` wait, a
  library's Python code).

It never raises: a thread that has finished in between has no frame, and the line
says so; anything else unexpected becomes the line's text.
"""

from __future__ import annotations

import linecache
import sys
import threading
from pathlib import Path
from types import FrameType

#: The top-level folders holding insync's own code: its packages (as pyproject.toml's
#: ``packages.find`` includes them) and its tests, whose client doubles stand in for
#: the real clients.
OWN = ("harness", "cluster", "nemesis", "workloads", "checkers", "results", "tests")
#: How many of the innermost own frames the line names.
DEPTH = 3
_ROOT = Path(__file__).resolve().parents[2]
_SOURCE_CHARS = 100


def where(thread: threading.Thread, depth: int = DEPTH) -> str:
    """Where ``thread`` is now: ``in f (path:line: source) <- g (path:line) ...; innermost
    h (module:line)``, or why that is not known. Never raises."""
    try:
        ident = thread.ident
        if ident is None:
            return "its thread never started"
        frame = sys._current_frames().get(ident)
        if frame is None:
            return "its thread has no frame: it finished in between"
        return _describe(frame, depth)
    except Exception as err:  # a log line must never cost the run
        return f"where unknown ({type(err).__name__}: {err})"


def _describe(innermost: FrameType, depth: int) -> str:
    own: list[FrameType] = []
    frame: FrameType | None = innermost
    while frame is not None and len(own) < depth:
        if _own_path(frame) is not None:
            own.append(frame)
        frame = frame.f_back
    if not own:
        return f"in no frame of insync's own; innermost {_name(innermost)}"
    names = [_name(f, source=i == 0) for i, f in enumerate(own)]
    line = "in " + " <- ".join(names)
    return line if own[0] is innermost else f"{line}; innermost {_name(innermost)}"


def _own_path(frame: FrameType) -> str | None:
    """The frame's file relative to insync's root, if it is insync's own code."""
    try:
        rel = Path(frame.f_code.co_filename).resolve().relative_to(_ROOT)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts and rel.parts[0] in OWN else None


def _name(frame: FrameType, *, source: bool = False) -> str:
    code = frame.f_code
    line = frame.f_lineno
    path = _own_path(frame)
    if path is None:  # elsewhere: its module says more than a file deep in a venv
        return f"{code.co_qualname} ({frame.f_globals.get('__name__', code.co_filename)}:{line})"
    text = linecache.getline(code.co_filename, line).strip()[:_SOURCE_CHARS] if source else ""
    return f"{code.co_qualname} ({path}:{line}{': ' + text if text else ''})"
