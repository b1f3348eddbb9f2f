"""``--record-keys``: each record's key is its value, so a compacted topic takes it; the
history still names records by value, and readers keep keyed records of the workload."""

from __future__ import annotations

from typing import Any

from kafka_fakes import FakeProducer, Msg, topics

from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions
from workloads.queue.reading import Reader


def client(producer: FakeProducer, **opts: Any) -> QueueClient:
    c = QueueClient(ClientOptions(bootstrap="x:9092", **opts), topics(), thread=0, process=0)
    c.sender._producer = producer  # type: ignore[assignment]
    c.sender.clock = producer.clock
    return c


def offsets(first: int) -> Any:
    return lambda topic, partition, value: (None, first + int(value))


def test_a_send_op_s_records_carry_their_values_as_keys() -> None:
    producer = FakeProducer(offsets(100))
    op = {"f": "send", "value": [["send", "t0-1", 5], ["send", "t0-1", 6], ["send", "t0-2", 7]]}
    done = client(producer, record_keys=True).invoke(op)
    assert producer.keys == [b"5", b"6", b"7"]
    assert producer.batches == [2, 1]  # still one batch per run of one key
    assert done.value == [["send", "t0-1", [105, 5]], ["send", "t0-1", [106, 6]],
                          ["send", "t0-2", [107, 7]]]


def test_without_the_option_records_have_no_key() -> None:
    producer = FakeProducer(offsets(0))
    client(producer).invoke({"f": "send", "value": [["send", "t0-1", 5]]})
    assert producer.keys == [None]


def test_a_transaction_s_records_carry_their_values_as_keys() -> None:
    producer = FakeProducer(offsets(0))
    c = client(producer, record_keys=True, txn=True, abort_p=0.0)
    done = c.invoke({"f": "txn", "value": [["send", "t0-2", 7], ["send", "t0-3", 8]]})
    assert done.type == "ok"
    assert producer.keys == [b"7", b"8"]
    assert producer.calls == ["begin", "commit"]


def test_readers_keep_the_workload_s_keyed_records_by_value() -> None:
    reader = Reader.__new__(Reader)
    reader.topics = topics()
    reader.process = 0
    records: dict[str, Any] = {}
    reader._take([Msg("run1-t0", 0, 10, b"7", key_=b"7"), Msg("run1-t0", 0, 11, b"8")], records)
    assert records == {"t0-0": [[10, 7], [11, 8]]}


def test_the_warm_up_write_carries_a_key_with_the_option() -> None:
    for keyed, expected in ((True, [b"warm-up"]), (False, [None])):
        producer = FakeProducer(lambda topic, partition, value: (None, 0))
        client(producer, record_keys=keyed).sender.warm_up()
        assert producer.keys == expected
