"""The drain's end-offset reader with no broker to ask (loopback, a closed port): every
key's end is unknown, so the drain never stops on its account. Against real brokers it
is tested in ``tests/harness/test_run_integration.py``."""

from __future__ import annotations

from cluster.kafka_clients import admin
from workloads.queue.ends import QueueEnds
from workloads.queue.topics import Topics


def test_no_broker_no_end() -> None:
    bootstrap = "127.0.0.1:1"
    topics = Topics(lambda: admin(bootstrap), prefix="x-", partitions=2,
                    replication_factor=1, config={})
    reader = QueueEnds(bootstrap, topics)
    try:
        assert reader.ends({"t0-0", "t0-1"}) == {"t0-0": None, "t0-1": None}
    finally:
        reader.close()
    reader.close()  # twice is fine: the runner's look thread closes it once, at the end
