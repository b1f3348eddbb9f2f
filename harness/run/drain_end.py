"""When the drain may stop with values still unread: every key read to a settled end.

The drain stops once it has read every acknowledged value again. A run that
lost writes never gets there, so without this it would read until its idle
limit, whatever was left to read (a flat 60 s limit made 74 of 116 measured
catalogue runs wait out that minute). A key's log is read in offset order, so once a drain
read returned the offset just below the key's end offset, nothing more of that
key can be read: its unread values are in no log a consumer reads.

The end offset is a high watermark, and a high watermark can still move after
the faults healed: it waits for every replica in the ISR, and a stuck follower
holds it until it leaves the ISR (``replica.lag.time.max.ms``). So an end only
counts once it has stayed the same for a ``window`` longer than that
(:func:`window_s`), seen by looks made every second from a thread of its own
(:class:`EndWatch`; the interpreter's thread never waits on Kafka for this).
A key whose end cannot be looked up (no leader) never counts, so the drain
then ends as it would without these looks (``harness.run.plan``: nothing new
read for a minute, or its time limit).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from workloads.protocol import EndOffsetReader

LOG = logging.getLogger(__name__)

#: Seconds between two looks at the keys' end offsets.
LOOK_EVERY_S = 1.0
#: The shortest window an end must hold still for (see ``window_s``).
MIN_WINDOW_S = 10.0


def window_s(replica_lag_s: float) -> float:
    """How long an end offset must stay the same before the drain trusts it: twice the
    longest a lagging follower can hold the high watermark back, and at least 10 s."""
    return max(MIN_WINDOW_S, 2 * replica_lag_s)


@dataclass
class Settling:
    """Each key's end offset and since when it has been that (pure: times come in)."""

    window: float
    since: dict[str, tuple[int | None, float]] = field(default_factory=dict)

    def look(self, ends: Mapping[str, int | None], at: float) -> dict[str, int]:
        """Take in one look made at ``at``; the ends that have now held for the window."""
        for key, end in ends.items():
            seen = self.since.get(key)
            if seen is None or seen[0] != end:
                self.since[key] = (end, at)
        return {key: end for key, (end, since) in self.since.items()
                if end is not None and at - since >= self.window}


class EndWatch:
    """Looks at the end offsets of ``keys()`` every second until stopped; ``settled`` is
    the latest set of ends that held for the window (a new dict per look, so reading
    it from another thread needs no lock)."""

    def __init__(self, reader: Callable[[], EndOffsetReader], window: float, *,
                 every_s: float = LOOK_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.reader = reader
        self.settling = Settling(window)
        self.every_s = every_s
        self.clock = clock
        self.settled: Mapping[str, int] = {}
        self.looks = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, keys: Callable[[], Collection[str]]) -> None:
        self._thread = threading.Thread(target=self._run, args=(keys,),
                                        name="insync-drain-ends", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)

    def _run(self, keys: Callable[[], Collection[str]]) -> None:
        try:
            reader = self.reader()
        except Exception:  # the drain goes on to its time limit, as without the power
            LOG.warning("could not look up end offsets; the drain ends without them",
                        exc_info=True)
            return
        try:
            while not self._stop.is_set():
                self.step(reader, keys())
                self._stop.wait(self.every_s)
        except Exception:
            LOG.warning("end-offset looks stopped; the drain ends without them",
                        exc_info=True)
        finally:
            reader.close()

    def step(self, reader: EndOffsetReader, keys: Collection[str]) -> None:
        """One look (the thread's loop body; tests call it directly)."""
        if not keys:
            return
        ends = reader.ends(keys)
        self.settled = self.settling.look(ends, self.clock())
        self.looks += 1
