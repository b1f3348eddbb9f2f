"""A burst's records (``nemesis.burst``) share the workload's partition; readers skip them."""

from __future__ import annotations

from typing import Any

from harness.base.faults import BURST_RECORD_KEY
from workloads.queue.reading import Reader
from workloads.queue.shape import UNREADABLE_VALUE


class _Msg:
    def __init__(self, offset: int, value: bytes, key: bytes | None = None) -> None:
        self._offset, self._value, self._key = offset, value, key

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return "run-t0"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes:
        return self._value


class _Topics:
    def key(self, topic: str, partition: int) -> str:
        return f"{topic.removeprefix('run-')}-{partition}"


def _reader() -> Reader:
    reader = Reader.__new__(Reader)
    reader.topics = _Topics()  # type: ignore[assignment]
    reader.process = 0
    return reader


def test_a_burst_s_records_are_skipped_and_the_workload_s_kept() -> None:
    records: dict[str, Any] = {}
    batch = [_Msg(10, b"7"), _Msg(11, b"b" * 16, BURST_RECORD_KEY), _Msg(12, b"8")]
    _reader()._take(batch, records)
    assert records == {"t0-0": [[10, 7], [12, 8]]}


def test_any_other_foreign_record_is_recorded_as_one_no_send_wrote() -> None:
    records: dict[str, Any] = {}
    _reader()._take([_Msg(11, b"b" * 16, b"someone-else")], records)
    assert records == {"t0-0": [[11, UNREADABLE_VALUE]]}
