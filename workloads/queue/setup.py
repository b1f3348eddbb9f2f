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
from workloads.queue.ends import QueueEnds
from workloads.queue.options import (
    PARTITIONS_PER_TOPIC,
    REFUSED_S,
    QueueSettings,
    client_options,
)
from workloads.queue.topics import Topics


class QueueRun:
    """A ``WorkloadRun``: the run's topics, and a ``QueueClient`` per process."""

    def __init__(self, env: RunEnv, s: QueueSettings) -> None:
        from cluster.kafka_clients import admin

        self.topics = Topics(
            lambda: admin(env.bootstrap),
            prefix=env.topic_prefix,
            partitions=PARTITIONS_PER_TOPIC,
            replication_factor=env.replication_factor,
            config=env.topic_config,
            refused_s=REFUSED_S,
        )
        self.check_replicas = tuple(s.check_replicas)
        self.client_options = client_options(
            s, bootstrap=env.bootstrap, token=env.token, seed=env.seed
        )

    def setup(self) -> None:
        self.topics.ensure(0)

    @property
    def op_timeout_s(self) -> float:
        """How long a client op may take before the interpreter abandons it (``OpTimeout``)."""
        return self.client_options.op_timeout_s

    def client(self, thread: int, process: int) -> QueueClient:
        return QueueClient(self.client_options, self.topics, thread, process)

    def end_offset_reader(self) -> QueueEnds:
        """The drain's look at where each key's log ends (``EndOffsets``)."""
        return QueueEnds(self.client_options.bootstrap, self.topics)

    def replica_keys(self) -> dict[str, tuple[str, int]]:
        """``--check-replicas``: key -> its real topic and partition."""
        return {key: self.topics.real(key) for key in self.check_replicas}

    def teardown(self) -> None:
        self.topics.delete_all()
