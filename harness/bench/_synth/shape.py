"""What a synthetic history looks like: clients and their roles, sizes, timing, faults.

A :class:`Shape` is plain data; :mod:`.sim` turns it (and a seed and a size)
into a history. The three shapes below are the ones the benchmarks and tests
need; each keeps the shape its benchmark's figures were measured with:

* :data:`CHECK` (``insync bench check``, ``spark-check``): 8 producers sending
  1-3 values to 8 keys (one op in 8 a write-only transaction, which leaves a
  marker: a hole in the offsets), 8 consumers polling the 2 keys each owns (4
  records per key), 1 op in 50 failing, no faults; valid.
* :data:`REPORT` (``insync bench report``, the report and checker tests):
  clients that assign, send, poll and run read-write transactions; latencies
  that jump 40x while a fault is in force, ``fail`` and ``info`` ops (a fresh
  process after each ``info``), nemesis start/stop pairs; valid unless
  anomalies are planted with :attr:`Shape.inject`.
* :func:`analyze_shape` (``insync bench analyze``, the Spark tests): 4
  producers (transactional ones if the run's configuration says ``txn``) and 4
  consumers on 4 keys, ops failing and timing out only under
  faults, and acknowledged writes lost under faults when the configuration is
  unsafe (``loss``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

MS = 1_000_000
#: Anomalies :attr:`Shape.inject` can plant, once each, while a fault is in force.
INJECTABLE = ("lost-write", "duplicate", "inconsistent-offsets", "G1a")


@dataclass(frozen=True)
class Role:
    """What a client does: the weights of its ops, and how often a txn micro-op polls."""

    weights: Mapping[str, float]
    txn_polls: float = 0.5

    def __post_init__(self) -> None:
        unknown = set(self.weights) - {"send", "poll", "txn"}
        if unknown or not sum(self.weights.values()) > 0:
            raise ValueError(f"a role weighs send, poll and txn, got {dict(self.weights)}")

    def pick(self, r: float) -> str:
        """The op a uniform draw ``r`` in [0, 1) chooses."""
        send, poll = self._cut
        return "send" if r < send else "poll" if r < poll else "txn"

    @cached_property
    def _cut(self) -> tuple[float, float]:
        total = sum(self.weights.values())
        send = self.weights.get("send", 0.0) / total
        return send, send + self.weights.get("poll", 0.0) / total

    @property
    def reads(self) -> bool:
        """Does this client poll (so it assigns its keys first)?"""
        return bool(self.weights.get("poll") or (self.weights.get("txn") and self.txn_polls))


SENDER = Role({"send": 1.0})
PRODUCER = Role({"send": 0.875, "txn": 0.125}, txn_polls=0.0)  # some write-only transactions
CONSUMER = Role({"poll": 1.0})
MIXED = Role({"send": 0.5, "poll": 0.4, "txn": 0.1})


@dataclass(frozen=True)
class Shape:
    """Everything but the seed and the size. Probabilities are (no fault, under a fault)."""

    roles: tuple[Role, ...]
    keys: int = 6
    #: Keys each client reads: client ``i`` owns keys ``i*owns .. i*owns+owns-1`` (mod keys).
    owns: int = 3
    batch: tuple[int, int] = (1, 3)  # values per send op
    txn_len: tuple[int, int] = (1, 3)  # micro-ops per transaction
    poll_limit: tuple[int, int] = (1, 6)  # records per key per poll
    drain_limit: int = 200  # records per poll of the final reader
    latency_ms: float = 3.3  # median op latency
    latency_spread: float = 0.6  # sigma of its lognormal; 0: always the median
    slowdown: float = 40.0  # latency factor while a fault is in force
    think_ms: float = 4.0  # mean pause between a completion and the next invoke
    p_fail: tuple[float, float] = (0.01, 0.15)
    p_info: tuple[float, float] = (0.001, 0.04)
    #: Probability that an acknowledged value written under a fault is lost.
    loss: float = 0.0
    faults: tuple[str, ...] = ()
    interval_ns: int = 2_000 * MS  # between a fault's start and its stop, and the next start
    inject: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        unknown = set(self.inject) - set(INJECTABLE)
        if unknown:
            raise ValueError(f"cannot inject {sorted(unknown)}; known: {INJECTABLE}")
        if not self.roles or self.keys < 1 or not 1 <= self.owns <= self.keys:
            raise ValueError("a shape needs clients, keys, and 1 <= owns <= keys")

    def with_faults(self, faults: Iterable[str], interval_ns: int) -> Shape:
        return replace(self, faults=tuple(faults), interval_ns=max(1, interval_ns))

    def expected_ns(self, ops: int, faulty: bool) -> float:
        """Roughly how much virtual time ``ops`` lines take (half of it under faults if
        ``faulty``): each client alternates invoke and completion lines, an op takes the
        lognormal's mean latency plus the think time, ``slowdown`` times longer under a fault."""
        latency = self.latency_ms * math.exp(self.latency_spread**2 / 2)
        per_client = ops / 2 / len(self.roles)
        slow = (1 + 1 / self.slowdown) / 2 if faulty else 1.0
        return per_client * (latency + self.think_ms) * MS / slow


CHECK = Shape(
    roles=(PRODUCER,) * 8 + (CONSUMER,) * 8,
    keys=8,
    owns=2,
    batch=(1, 3),
    txn_len=(1, 3),
    poll_limit=(4, 4),
    drain_limit=64,
    latency_ms=1.0,
    latency_spread=0.0,
    think_ms=0.0,
    p_fail=(0.02, 0.02),
    p_info=(0.0, 0.0),
)


def report_shape(concurrency: int = 8, keys: int = 6) -> Shape:
    """:data:`REPORT` with another client or key count."""
    return Shape(roles=(MIXED,) * concurrency, keys=keys, owns=min(3, keys))


REPORT = report_shape()


def analyze_shape(loss: float, txn: bool = False) -> Shape:
    """Producers (some transactional if ``txn``) and consumers that fail only under faults;
    ``loss`` as in :class:`Shape`."""
    return Shape(
        roles=(PRODUCER if txn else SENDER,) * 4 + (CONSUMER,) * 4,
        keys=4,
        owns=2,
        batch=(1, 2),
        poll_limit=(4, 4),
        drain_limit=256,
        latency_ms=1.0,
        latency_spread=0.4,
        slowdown=4.0,
        think_ms=0.0,
        p_fail=(0.0, 0.25),
        p_info=(0.0, 0.05),
        loss=loss,
    )
