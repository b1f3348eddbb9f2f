"""Signals and the run's own log: a run that is interrupted still unwinds cleanly.

While the run goes on, SIGTERM behaves like Ctrl-C (KeyboardInterrupt in the
main thread); while it cleans up, both are noted and ignored, so a second
Ctrl-C cannot cut a nemesis teardown or the cluster's removal short.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

Say = Callable[[str], None]


class Caught:
    """Which signal stopped the run (``SIGINT``, ``SIGTERM``), for its summary and results."""

    name: str | None = None


@contextlib.contextmanager
def signals_interrupt(on_signal: Callable[[], None] | None = None) -> Iterator[Caught]:
    """SIGTERM behaves like Ctrl-C while the run goes on; the first one is named.

    ``on_signal`` runs before the raise: a KeyboardInterrupt raised while the main
    thread happens to run a finaliser or a weakref callback is printed by Python as
    "Exception ignored" and lost, so the run also asks its own loop to stop.
    """
    caught = Caught()

    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        if caught.name is None:
            caught.name = signal.Signals(signum).name
        if on_signal is not None:
            on_signal()
        raise KeyboardInterrupt

    # SIGINT only where Python's own Ctrl-C handler is in place: a run started with it
    # ignored (a background job of a shell without job control) keeps ignoring it.
    ours = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        ours.append(signal.SIGINT)
    old = {s: signal.signal(s, raise_interrupt) for s in ours}
    try:
        yield caught
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def signals_ignored(say: Say) -> Iterator[None]:
    """While cleaning up, Ctrl-C and SIGTERM must not cut teardown short."""

    def note(signum: int, frame: FrameType | None) -> None:
        say("cleaning up (nemesis teardown, logs, cluster); please wait")

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class _QuietFileHandler(logging.FileHandler):
    """The run's log file; a write it cannot make (a full disk) is dropped, not reported
    with logging's traceback on stderr: the log is a record, the run goes on."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


@contextlib.contextmanager
def run_log(path: Any) -> Iterator[None]:
    handler = _QuietFileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.setLevel(logging.INFO)
    logger = logging.getLogger("insync")
    old_level = logger.level
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        with contextlib.suppress(OSError):  # a full disk: its last buffered lines are lost
            handler.close()
