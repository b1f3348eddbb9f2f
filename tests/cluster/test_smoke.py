"""The smoke check's producer asks for idempotence only where the brokers serve it."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from cluster import smoke
from cluster.eras import release


class _Topics:
    topics: ClassVar[dict[str, object]] = {smoke.SMOKE_TOPIC: object()}


class _Admin:
    def list_topics(self, timeout: float) -> _Topics:
        return _Topics()


class _Msg:
    def __init__(self, value: bytes, offset: int) -> None:
        self._value, self._offset = value, offset

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes:
        return self._value

    def error(self) -> None:
        return None


class _Cluster:
    """One in-memory partition behind the three client factories smoke.py uses."""

    def __init__(self) -> None:
        self.log: list[bytes] = []
        self.producer_conf: dict[str, Any] = {}

    def producer(self, bootstrap: str, **conf: Any) -> Any:
        self.producer_conf = conf
        outer = self

        class P:
            def produce(self, topic: str, value: bytes, on_delivery: Any) -> None:
                outer.log.append(value)
                on_delivery(None, _Msg(value, len(outer.log) - 1))

            def flush(self, timeout: float) -> int:
                return 0

        return P()

    def consumer(self, bootstrap: str, **conf: Any) -> Any:
        outer = self

        class C:
            offset = 0

            def assign(self, parts: list[Any]) -> None:
                C.offset = parts[0].offset

            def poll(self, timeout: float) -> _Msg:
                return _Msg(outer.log[C.offset], C.offset)

            def close(self) -> None:
                pass

        return C()


@pytest.mark.parametrize(("version", "asked"), [("0.10.2.2", False), ("0.11.0.3", True),
                                                ("4.1.2", True)])
def test_smoke_asks_idempotence_only_where_the_version_serves_it(
    monkeypatch: pytest.MonkeyPatch, version: str, asked: bool
) -> None:
    fake = _Cluster()
    monkeypatch.setattr(smoke, "admin", lambda bootstrap: _Admin())
    monkeypatch.setattr(smoke, "producer", fake.producer)
    monkeypatch.setattr(smoke, "consumer", fake.consumer)
    offset, message = smoke.write_and_read_back("n1:9092", 3, release(version))
    assert fake.producer_conf["enable.idempotence"] is asked
    assert fake.producer_conf["acks"] == "all"
    assert (offset, fake.log[offset].decode()) == (0, message)
