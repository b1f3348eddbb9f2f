"""Small histories with a fault script's wait in them (the ``await-state`` pair the
nemesis writes), for both checking engines: the memory checker's own tests and
the Spark engine's agreement tests judge the same lines."""

from __future__ import annotations

from typing import Any

from history_builder import Hist

WAIT = {"until": "isr-is-leader", "key": "t0-0", "timeout-s": 30, "step": 3}
REASON = "step 3: wait isr-is-leader t0-0 did not hold within 30 s"
HELD = {"held": True, "seconds": 4.0, "polls": 5, "observed": {"leader": "n1", "isr": ["n1"]}}
NOT_HELD = {"held": False, "seconds": 30.0, "polls": 31,
            "observed": {"leader": "n1", "isr": ["n1", "n2"]}}


def history(completion: dict[str, Any] | None, *, lose: bool = False,
            error: str | None = None) -> Hist:
    """Two acknowledged sends, a scripted wait, and a poll that reads one (``lose``) or both."""
    h = Hist()
    h.send(0, "t0-0", 0, 1)
    h.add("nemesis", "invoke", "await-state", WAIT)
    if completion is not None:
        extra = {} if error is None else {"error": error}
        h.add("nemesis", "info", "await-state", {**WAIT, **completion}, **extra)
    h.send(0, "t0-0", 1, 2)
    h.poll(1, {"t0-0": [[1, 2]] if lose else [[0, 1], [1, 2]]})
    return h


#: A scripted ``reconfigure`` that lowered t0 and timed out on t3 (a premise step).
CHANGE = {"topic": "*", "set": {"min.insync.replicas": 1}}
CHANGE_ERROR = "TimeoutError: alter topic t3 timed out"
CHANGE_REASON = f"reconfigure of topic t0, topic t3 did not apply ({CHANGE_ERROR})"


def reconfigured(error: str | None, *, lose: bool = False) -> Hist:
    """Two acknowledged sends around a scripted ``reconfigure`` that applied (``error``
    None) or recorded ``error``, and a poll that reads one (``lose``) or both."""
    h = Hist()
    h.send(0, "t0-0", 0, 1)
    h.add("nemesis", "invoke", "reconfigure", CHANGE)
    done = {"set": {"min.insync.replicas": "1"}, "resources": ["topic t0", "topic t3"]}
    if error is None:
        h.add("nemesis", "ok", "reconfigure", done)
    else:
        h.add("nemesis", "info", "reconfigure", done, error=error)
    h.send(0, "t0-0", 1, 2)
    h.poll(1, {"t0-0": [[1, 2]] if lose else [[0, 1], [1, 2]]})
    return h
