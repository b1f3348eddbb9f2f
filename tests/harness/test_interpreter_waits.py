"""The interpreter's timed wait for a completion ends by its timeout, even on a loaded box.

Slow (20 s of CPU hogs), so it runs with ``-m slow`` only. It guards against a hang:
before Python 3.13, ``queue.SimpleQueue.get(timeout=t)`` whose
deadline passes inside the call waits on until the next put. The interpreter asks for
microsecond waits whenever an op is due "now", and with every worker idle no put
comes. On this 2-core VM this test failed on ``SimpleQueue`` twice in two runs (one:
20 of 147,846 waits blocked until the rescue put) and passed on ``queue.Queue`` in
each of its runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.base.history_writer import HistoryWriter
from harness.run.interpreter import Interpreter
from harness.run.workers import Event

LOAD_S = 20.0
WAIT_S = 2e-6  # an op due in 2 µs
STUCK_S = 0.2  # far past the timeout: only the bug waits this long
RESCUE_EVERY_S = 0.5  # a put now and then, so a stuck wait ends and is counted


@pytest.mark.slow
def test_a_timed_wait_never_outlasts_its_timeout_under_cpu_load(tmp_path: Path) -> None:
    history = HistoryWriter(tmp_path / "history.jsonl")
    interp = Interpreter(history=history, concurrency=1, seed=0, start_ns=0,
                         client_factory=lambda thread, process: None)
    rescue = Event(thread=0, op={"f": "rescue"})
    done = threading.Event()

    def rescuer() -> None:
        while not done.wait(RESCUE_EVERY_S):
            interp.events.put(rescue)

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(2 * (os.cpu_count() or 1))]
    threading.Thread(target=rescuer, daemon=True).start()
    waits = stuck = 0
    try:
        end = time.monotonic() + LOAD_S
        while time.monotonic() < end:
            # a completion, taken as the interpreter takes them, leaves the queue empty
            interp.events.put(rescue)
            interp._take_events(None)
            started = time.monotonic()
            interp._get(WAIT_S)
            stuck += time.monotonic() - started > STUCK_S
            waits += 1
    finally:
        done.set()
        for hog in hogs:
            hog.kill()
            hog.wait()
        history.close()
    assert waits > 1000 and stuck == 0, f"{stuck} of {waits} waits of {WAIT_S}s blocked past it"
