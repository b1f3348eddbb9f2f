"""What a run has done so far: counts for the live display and for results.json.

Fed every completion by the interpreter (an observer), read by the display
thread; plain integer updates under one lock, cheap enough for every op.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.base.contract import NEMESIS
from harness.base.history import Op


@dataclass
class Stats:
    """Counters of completions, faults in force and the current phase."""

    fault_spans: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    ok: int = 0
    fail: int = 0
    info: int = 0
    acked_sends: int = 0
    faults: int = 0
    in_force: set[str] = field(default_factory=set)
    phase: str = "setup"
    phase_started: float = field(default_factory=time.monotonic)
    phase_limit_s: float | None = None
    started: float = field(default_factory=time.monotonic)
    phase_times: dict[str, list[float]] = field(default_factory=dict)
    #: Each phase's [start, end] on the monotonic clock in ns: the history's own clock.
    phase_ns: dict[str, list[int]] = field(default_factory=dict)
    _recent: deque[float] = field(default_factory=lambda: deque(maxlen=100_000))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, op: Op) -> None:
        now = time.monotonic()
        with self._lock:
            if op.get("process") == NEMESIS:
                self.faults += 1
                self._track_fault(op.get("f", ""))
                return
            kind = op.get("type")
            if kind == "ok":
                self.ok += 1
                if op.get("f") in ("send", "txn"):
                    self.acked_sends += [m[0] for m in op.get("value") or ()].count("send")
            elif kind == "fail":
                self.fail += 1
            elif kind == "info":
                self.info += 1
            self._recent.append(now)

    def _track_fault(self, f: str) -> None:
        for kind, (start, stop) in self.fault_spans.items():
            if f == start:
                self.in_force.add(kind)
            elif f == stop:
                self.in_force.discard(kind)

    def enter(self, phase: str, limit_s: float | None = None) -> None:
        now, now_ns = time.monotonic(), time.monotonic_ns()
        with self._lock:
            if self.phase in self.phase_times:
                self.phase_times[self.phase][1] = round(now - self.started, 3)
                self.phase_ns[self.phase][1] = now_ns
            self.phase_ns[phase] = [now_ns, now_ns]
            self.phase = phase
            self.phase_started = now
            self.phase_limit_s = limit_s
            self.phase_times[phase] = [round(now - self.started, 3), round(now - self.started, 3)]

    @property
    def ops(self) -> int:
        return self.ok + self.fail + self.info

    def rate(self, window_s: float = 5.0) -> float:
        """Completions per second over the last ``window_s`` seconds."""
        now = time.monotonic()
        with self._lock:
            recent = self._recent
            while recent and recent[0] < now - window_s:
                recent.popleft()
            span = min(window_s, now - self.started)
            return len(recent) / span if span > 0 else 0.0

    def snapshot(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            remaining = None
            if self.phase_limit_s is not None:
                remaining = max(0.0, self.phase_limit_s - (now - self.phase_started))
            return {
                "phase": self.phase,
                "ok": self.ok,
                "fail": self.fail,
                "info": self.info,
                "ops": self.ok + self.fail + self.info,
                "acked_sends": self.acked_sends,
                "faults": self.faults,
                "in_force": sorted(self.in_force),
                "elapsed_s": now - self.started,
                "remaining_s": remaining,
            }

    def window_ns(self, phase: str, t0_ns: int) -> tuple[int, int] | None:
        """Where ``phase`` ran, in the nanoseconds of a history that started at ``t0_ns``."""
        with self._lock:
            if phase not in self.phase_ns:
                return None
            start, end = self.phase_ns[phase]
        return max(0, start - t0_ns), max(0, end - t0_ns)

    def summary(self) -> dict[str, Any]:
        """The ``run`` part of results.json (without exit code and duration)."""
        with self._lock:
            return {
                "ops": self.ok + self.fail + self.info,
                "ok": self.ok,
                "fail": self.fail,
                "info": self.info,
                "acked_sends": self.acked_sends,
                "faults": self.faults,
                "phase_times": {k: list(v) for k, v in self.phase_times.items()},
            }
