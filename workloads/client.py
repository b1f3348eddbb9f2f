"""What the runner's worker threads need from a client, whatever the workload.

A client is one worker's connection to Kafka (for the queue workload, a
producer and a consumer). The worker owns the history and the process numbers;
the client only performs one op and says how it ended. A workload makes its
clients (``workloads.protocol.WorkloadRun.client``). Tests build clients from a
handler function instead of Kafka (``tests/support/mem_kafka.py``), as Jepsen
tests start from a no-op client.

A client may also have ``warm_up()``: connect before the run's clock starts
(the worker calls it when present); and ``plan(op) -> op``: after ``prepare``
and before the invoke is recorded, fill in what the op will do from the
client's own state (an exactly-once member's transaction holds the outputs of
the records its last poll returned, ``workloads.eos``). Planning touches no
broker, so the invoke row names everything the op may write, and an op
abandoned at its deadline still says what it may have written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Op = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Completed:
    """How one op ended: the completion's ``type``, ``value`` and ``error``.

    ``reset``: the client's state can no longer be trusted (a consumer that
    could not seek back after a failed op, a fatal producer): the worker closes
    it and continues as a fresh process, whatever ``type`` says.
    ``fields``: optional fields of the completion line beside these (docs/HISTORY.md
    names each, e.g. ``reads-kept``).
    """

    type: Literal["ok", "fail", "info"]
    value: Any
    error: Any = None
    reset: bool = False
    fields: Mapping[str, Any] | None = None


class Client(Protocol):
    """One worker's client; called from that worker's thread only."""

    def prepare(self, op: Op) -> None:
        """Get ready for ``op`` before it is recorded (create the topics it names)."""
        ...

    def invoke(self, op: Op) -> Completed:
        """Perform ``op``; may raise (the worker records that as ``info``)."""
        ...

    def close(self) -> None:
        """Release the connection; the worker continues with a fresh client."""
        ...
