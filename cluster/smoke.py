"""The smallest real proof a cluster works: an ``acks=all`` write read back."""

from __future__ import annotations

import uuid

from confluent_kafka import TopicPartition
from confluent_kafka.cimpl import NewTopic

from cluster.kafka_clients import admin, consumer, producer
from cluster.kafka_release import KafkaVersion
from harness.base.errors import ClusterError

SMOKE_TOPIC = "insync-smoke"
_HINT = "see why in `insync cluster logs` (pass --keep to leave the cluster up for that)"


def write_and_read_back(
    bootstrap: str, rf: int, version: KafkaVersion, timeout_s: float = 30.0
) -> tuple[int, str]:
    """Write one unique check message with ``acks=all`` and read it back by offset.

    The producer is idempotent where the brokers' ``version`` serves it: brokers before
    0.11 answer an idempotent producer's InitProducerId with UNSUPPORTED_FEATURE.

    Returns ``(offset, message)``. Raises ``ClusterError`` if the write is not
    acknowledged or the record read at its offset is not the one written.
    """
    client = admin(bootstrap)
    if SMOKE_TOPIC not in client.list_topics(timeout=timeout_s).topics:
        new = NewTopic(
            SMOKE_TOPIC,
            num_partitions=1,
            replication_factor=rf,
            config={"min.insync.replicas": str(min(2, rf))},
        )
        client.create_topics([new], request_timeout=timeout_s)[SMOKE_TOPIC].result(timeout_s)
    message = f"insync check {uuid.uuid4()}"
    acked: list[tuple[int | None, str | None]] = []
    prod = producer(bootstrap, acks="all", **{"enable.idempotence": version.can("idempotence")})
    prod.produce(
        SMOKE_TOPIC,
        message.encode(),
        on_delivery=lambda err, msg: acked.append(
            (msg.offset() if err is None else -1, str(err) if err else None)
        ),
    )
    prod.flush(timeout_s)
    if not acked or acked[0][1] is not None:
        why = acked[0][1] if acked else "no acknowledgement in time"
        raise ClusterError(f"the acks=all check write failed: {why}", hint=_HINT)
    offset = acked[0][0]
    if offset is None or offset < 0:
        raise ClusterError(
            "the acks=all check write was acknowledged without an offset", hint=_HINT
        )
    cons = consumer(bootstrap, **{"group.id": f"insync-smoke-{uuid.uuid4().hex[:8]}"})
    try:
        cons.assign([TopicPartition(SMOKE_TOPIC, 0, offset)])
        msg = cons.poll(timeout_s)
    finally:
        cons.close()
    if msg is None or msg.error() is not None:
        raise ClusterError(f"could not read the check message back at offset {offset}", hint=_HINT)
    got = (msg.value() or b"").decode()
    if got != message or msg.offset() != offset:
        raise ClusterError(
            f"read {got!r} at offset {msg.offset()}, wrote {message!r} at {offset}", hint=_HINT
        )
    return offset, message
