"""The readiness probe's topic is never compacted: its record has no key, and brokers
whose ``log.cleanup.policy`` is ``compact`` (a scenario's) refuse keyless records."""

from __future__ import annotations

from typing import Any

import pytest

from cluster import readiness


class _Done:
    def result(self, timeout: float | None = None) -> None:
        return None


class _Admin:
    def __init__(self) -> None:
        self.created: list[Any] = []

    def list_topics(self, timeout: float) -> Any:
        return type("Meta", (), {"topics": {}})()

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, _Done]:
        self.created.extend(topics)
        return {t.topic: _Done() for t in topics}


class _Producer:
    def __init__(self) -> None:
        self.keys: list[bytes | None] = []

    def produce(self, topic: str, value: bytes, on_delivery: Any, key: bytes | None = None
                ) -> None:
        self.keys.append(key)
        on_delivery(None, None)

    def flush(self, timeout: float) -> int:
        return 0


def test_the_probe_topic_keeps_the_delete_policy_whatever_the_brokers_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    admin, prod = _Admin(), _Producer()
    monkeypatch.setattr(readiness, "admin", lambda bootstrap: admin)
    monkeypatch.setattr(readiness, "producer", lambda bootstrap, **conf: prod)
    readiness._probe_write("x:9092", 3, 1.0)
    (topic,) = admin.created
    assert topic.topic == readiness.PROBE_TOPIC
    assert topic.config["cleanup.policy"] == "delete"
    assert prod.keys == [None]  # keyless: only a non-compacted topic takes it
