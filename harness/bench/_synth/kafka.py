"""An in-memory Kafka for synthetic histories: one partition per key, ops applied atomically.

The model follows ``tests/support/kafka_model.py`` (the checker tests' Kafka), in
the form a multi-million-op simulation can afford: each key is a partition kept
as two parallel lists (values and slot states), not one object per offset.

* a slot is a ``COMMITTED`` record, an ``ABORTED`` one, a transaction
  ``MARKER``, an ``OPEN`` record of a transaction still running, or a ``LOST``
  record: acknowledged, then dropped (what an unsafe configuration does under a
  fault, and what ``lost-write`` plants). Readers see only committed records,
  so the others become holes in the offsets (markers) or lost writes;
* a read stops at the first open record (the last stable offset), so a
  transaction never reads its own sends;
* :meth:`Kafka.unread_from` is where a final reader must start so that every
  committed record is read by someone: the furthest offset any successful read
  reached, or earlier where a read was made to lie (``inconsistent-offsets``).

Why not ``kafka_model.KafkaModel`` itself: it keeps every op in memory and
lives with the tests; the benchmarks ship with the CLI and write up to 10M ops.
"""

from __future__ import annotations

from collections.abc import Iterable

COMMITTED, ABORTED, MARKER, OPEN, LOST = range(5)


class Partition:
    """One key's log: ``values[o]`` and ``states[o]`` describe offset ``o``."""

    __slots__ = ("states", "values")

    def __init__(self) -> None:
        self.values: list[int | None] = []
        self.states: list[int] = []

    def __len__(self) -> int:
        return len(self.values)

    def append(self, value: int | None, state: int) -> int:
        """Add a slot; returns its offset."""
        self.values.append(value)
        self.states.append(state)
        return len(self.values) - 1

    def read(self, position: int, limit: int) -> tuple[list[list[int]], int]:
        """Up to ``limit`` committed ``[offset, value]`` records from ``position``; the new
        position (past every slot passed over, never past an open record)."""
        values, states = self.values, self.states
        records: list[list[int]] = []
        end = len(values)
        while position < end and len(records) < limit:
            state = states[position]
            if state == OPEN:
                break
            if state == COMMITTED:
                records.append([position, values[position]])  # type: ignore[list-item]
            position += 1
        return records, position


class Kafka:
    """Partitions by key, and how far readers got (for the final drain)."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.logs: dict[str, Partition] = {k: Partition() for k in keys}
        self._read_to = dict.fromkeys(self.logs, 0)
        self._reread_from: dict[str, int] = {}

    def read(self, key: str, position: int, limit: int) -> tuple[list[list[int]], int]:
        return self.logs[key].read(position, limit)

    def acknowledge_read(self, key: str, position: int) -> None:
        """A successful read of ``key`` reached ``position``: everything before it was seen."""
        self._read_to[key] = max(self._read_to[key], position)

    def misread(self, key: str, offset: int) -> None:
        """A read returned something else than ``offset``'s record: read it again at the end."""
        self._reread_from[key] = min(offset, self._reread_from.get(key, offset))

    def unread_from(self, key: str) -> int:
        """The first offset whose committed record nobody has been shown yet (at most)."""
        return min(self._read_to[key], self._reread_from.get(key, self._read_to[key]))

    def resolve(self, slots: Iterable[tuple[str, int]], commit: bool) -> None:
        """End a transaction: its open slots commit or abort, then each key gets a marker."""
        keys: list[str] = []
        for key, offset in slots:
            log = self.logs[key]
            if log.states[offset] == OPEN:
                log.states[offset] = COMMITTED if commit else ABORTED
            if key not in keys:
                keys.append(key)
        for key in keys:
            self.logs[key].append(None, MARKER)
