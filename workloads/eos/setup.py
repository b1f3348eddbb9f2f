"""The exactly-once workload within one run: its two topics and its clients' settings."""

from __future__ import annotations

from workloads.eos.client import EosClient
from workloads.eos.options import EosSettings, client_options
from workloads.eos.shape import INPUT_TOPIC, OUTPUT_TOPIC, PARTITIONS
from workloads.protocol import RunEnv
from workloads.queue.ends import QueueEnds
from workloads.queue.options import REFUSED_S
from workloads.queue.topics import Topics


class EosRun:
    """A ``WorkloadRun``: the input and output topics, and an ``EosClient`` per process."""

    def __init__(self, env: RunEnv, s: EosSettings) -> None:
        from cluster.kafka_clients import admin

        self.topics = Topics(
            lambda: admin(env.bootstrap),
            prefix=env.topic_prefix,
            partitions=PARTITIONS,
            replication_factor=env.replication_factor,
            config=env.topic_config,
            refused_s=REFUSED_S,
        )
        self.plain, self.txn = client_options(s, bootstrap=env.bootstrap, token=env.token,
                                              seed=env.seed)

    def setup(self) -> None:
        self.topics.ensure(INPUT_TOPIC)
        self.topics.ensure(OUTPUT_TOPIC)

    @property
    def op_timeout_s(self) -> float:
        """How long a client op may take before the interpreter abandons it (``OpTimeout``)."""
        return self.txn.op_timeout_s

    def client(self, thread: int, process: int) -> EosClient:
        return EosClient(self.plain, self.txn, self.topics, thread, process)

    def end_offset_reader(self) -> QueueEnds:
        """The drain's look at where each key's log ends (``EndOffsets``)."""
        return QueueEnds(self.txn.bootstrap, self.topics)

    def teardown(self) -> None:
        self.topics.delete_all()
