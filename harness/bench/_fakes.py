"""A Kafka made of sleeps: the latency model both sides of the fake comparison share.

``insync bench run`` compares the insync run with a bare producer loop on a real
cluster; this module lets the same comparison run without one, so the
harness's own cost (generator, dispatch, history, the generator's caps) is
measured apart from the cluster's. Both sides wait the same
:class:`Latency` per op: the harness's in-memory client (:class:`MemoryClient`)
sleeps it inside ``invoke``, and the bare loop's producer
(:class:`LatentProducer`) delivers an op's reports after it. The waits are
``time.sleep``, which releases the GIL as librdkafka's blocking ``poll`` does,
so on the fake the only thing that tells the two apart is what Python does
between and around those waits.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any

from workloads.client import Completed


@dataclass(frozen=True)
class Latency:
    """How long the fake Kafka takes: ``op_ms`` per request plus ``record_ms`` per record.

    The default, 8 ms + 0.05 ms a record, is the shape measured on the real
    3-node cluster: a bare loop's op took 6-8 ms at p50 and its 12 threads
    recorded 20-26k sends/s with 16.5 records per op.
    """

    op_ms: float = 8.0
    record_ms: float = 0.05

    def __post_init__(self) -> None:
        if self.op_ms < 0 or self.record_ms < 0:
            raise ValueError("latencies must be >= 0 ms")

    def seconds(self, records: int) -> float:
        """How long a request carrying ``records`` records takes (0 records: a poll)."""
        return (self.op_ms + self.record_ms * records) / 1000

    def as_dict(self) -> dict[str, float]:
        return {"op_ms": self.op_ms, "record_ms": self.record_ms}


class MemoryClient:
    """The harness's client on the fake: appends each send to a list per key, at once,
    then sleeps the op's latency. Polls wait one request and read nothing; joins and
    crashes are local, as they are for a real client."""

    def __init__(self, logs: dict[str, list[int]], lock: threading.Lock,
                 latency: Latency | None = None) -> None:
        self.logs, self.lock = logs, lock
        self.latency = latency or Latency(0.0, 0.0)

    def prepare(self, op: Any) -> None:
        pass

    def invoke(self, op: Any) -> Completed:
        if op["f"] == "crash":
            return Completed("info", None, "crashed on purpose")
        if op["f"] == "poll":
            self._wait(0)
            return Completed("ok", [["poll", {}]])
        if op["f"] not in ("send", "txn"):
            return Completed("ok", op["value"])
        out: list[Any] = []
        sends = 0
        with self.lock:
            for mop in op["value"]:
                if mop[0] != "send":
                    out.append(["poll", {}])
                    continue
                _, key, value = mop
                log = self.logs.setdefault(key, [])
                log.append(value)
                out.append(["send", key, [len(log) - 1, value]])
                sends += 1
        self._wait(sends)
        return Completed("ok", out)

    def _wait(self, records: int) -> None:
        wait = self.latency.seconds(records)
        if wait > 0:
            time.sleep(wait)

    def close(self) -> None:
        pass


class LatentProducer:
    """A ``ProducerLike`` whose delivery reports come due after the fake's latency.

    A record produced while the producer is idle is due ``op_ms + record_ms`` later;
    each record produced behind it is due ``record_ms`` after the one before (one
    batch on the wire). ``poll`` sleeps until the first report is due, at most its
    timeout, then serves every report due by then, as librdkafka's ``poll`` does.
    """

    def __init__(self, latency: Latency) -> None:
        self.latency = latency
        self._due: list[tuple[float, int, Any]] = []  # (due, order, callback): a heap
        self._order = itertools.count()
        self._last = 0.0

    def produce(self, topic: str, *, value: bytes, partition: int, on_delivery: Any) -> None:
        now = time.monotonic()
        start = max(now + self.latency.op_ms / 1000, self._last)
        self._last = start + self.latency.record_ms / 1000
        heapq.heappush(self._due, (self._last, next(self._order), on_delivery))

    def poll(self, timeout: float) -> int:
        if not self._due:
            return 0
        wait = min(timeout, self._due[0][0] - time.monotonic())
        if wait > 0:
            time.sleep(wait)
        now, served = time.monotonic(), 0
        while self._due and self._due[0][0] <= now:
            _, _, callback = heapq.heappop(self._due)
            callback(None, None)
            served += 1
        return served

    def flush(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while self._due and time.monotonic() < deadline:
            self.poll(deadline - time.monotonic())
        return len(self._due)
