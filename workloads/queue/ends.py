"""Where each key's log ends, for the drain (``workloads.protocol.EndOffsets``).

One consumer that never joins a group asks each key's leader for its high
watermark (``get_watermark_offsets``, not cached): the offset the next record
would take, as far as any consumer can read. The runner asks from its own
thread, every second or so, for the keys the drain has still to read.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from confluent_kafka import Consumer, KafkaException, TopicPartition

from cluster.kafka_clients import consumer
from workloads.queue.topics import Topics

LOG = logging.getLogger(__name__)

#: How long one key's look may take: a key without a leader must not hold up the others
#: for long (it stays unknown, so the drain does not stop on its account).
LOOK_TIMEOUT_S = 1.0


class QueueEnds:
    """An ``EndOffsetReader`` over the run's topics."""

    def __init__(self, bootstrap: str, topics: Topics) -> None:
        self.bootstrap = bootstrap
        self.topics = topics
        self._consumer: Consumer | None = None

    def ends(self, keys: Collection[str]) -> dict[str, int | None]:
        if self._consumer is None:
            self._consumer = consumer(self.bootstrap)  # never joins its (probe) group
        out: dict[str, int | None] = {}
        for key in sorted(keys):
            topic, partition = self.topics.real(key)
            try:
                _, high = self._consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=LOOK_TIMEOUT_S, cached=False)
            except KafkaException as err:
                LOG.debug("end offset of %s: %s", key, err)
                out[key] = None
            else:
                out[key] = high if high >= 0 else None
        return out

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
