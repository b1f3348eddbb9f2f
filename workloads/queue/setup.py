"""The queue workload within one run: its topics and the settings of its clients.

Made by ``QUEUE.open`` (no I/O); ``setup`` creates the first topic before the
clients start, every client creates the topics its ops name
(``Topics.ensure_keys``), and ``teardown`` deletes them all on a cluster that
stays. Names carry the run's token, so a reused cluster never shows one run
another's records.
"""

from __future__ import annotations

from workloads.protocol import RunEnv
from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions
from workloads.queue.options import PARTITIONS_PER_TOPIC, QueueSettings
from workloads.queue.topics import Topics


def client_options(env: RunEnv, s: QueueSettings) -> ClientOptions:
    """Every client's producer and consumer settings for this run."""
    return ClientOptions(
        bootstrap=env.bootstrap,
        acks="all" if s.acks == "all" else ("1" if s.acks == "1" else "0"),
        idempotence=bool(s.idempotence),
        retries=s.retries,
        max_in_flight=s.max_in_flight,
        txn=s.txn,
        sub_via="subscribe" if s.sub_via == "subscribe" else "assign",
        group_id=f"{env.token}-group",
        txn_id_prefix=f"{env.token}-txn",
        abort_p=s.txn_abort_p if s.txn else 0.0,
        poll_ms=s.poll_ms,
        seed=env.seed,
    )


class QueueRun:
    """A ``WorkloadRun``: the run's topics, and a ``QueueClient`` per process."""

    def __init__(self, env: RunEnv, s: QueueSettings) -> None:
        from cluster.kafka_clients import admin

        self.topics = Topics(
            lambda: admin(env.bootstrap),
            prefix=f"{env.token}-",
            partitions=PARTITIONS_PER_TOPIC,
            replication_factor=env.replication_factor,
            config=env.topic_config,
        )
        self.client_options = client_options(env, s)

    def setup(self) -> None:
        self.topics.ensure(0)

    def client(self, thread: int, process: int) -> QueueClient:
        return QueueClient(self.client_options, self.topics, thread, process)

    def teardown(self) -> None:
        self.topics.delete_all()
