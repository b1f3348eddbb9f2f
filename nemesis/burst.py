"""A burst of writes to one partition, from a producer of the nemesis's own.

Load is a fault too: before 0.9.0 a leader dropped a follower from the ISR once
it was more than ``replica.lag.max.messages`` (4,000) messages behind, so a
burst of writes larger than that could shrink the ISR of healthy followers to
the leader alone (KIP-16 replaced the rule with time alone). ``start-burst``
``{"key": "t0-0"}`` starts a producer writing small records (acks=1) to that
partition as fast as it can, in the background; ``stop-burst``
stops it. The burst's records are not the workload's: nothing checks them, and
they are not in the history (they carry the key ``BURST_RECORD_KEY``, and the
workload's readers skip them); its completion records how many it sent and how
many were acknowledged. While it runs, the nemesis reads the partition's
leader and ISR every ``WATCH_S`` seconds and records each change it sees
(``isr-changes``: seconds since the start, leader, ISR): in ZooKeeper mode from
the partition's state znode (``cluster.zk_state``: a 0.8.2 broker's metadata never
shows an ISR change), in KRaft mode from the brokers' metadata.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster.kafka_clients import producer
from cluster.metadata import node_name, partitions
from cluster.zk_state import partition_state
from harness.base.contract import parse_key
from harness.base.faults import BURST_RECORD_KEY
from nemesis.nodes import completion

if TYPE_CHECKING:
    from cluster import Cluster

START, STOP = "start-burst", "stop-burst"
#: Seconds between two looks at the partition's ISR while a burst runs.
WATCH_S = 0.25
#: The burst's records: small, so that many fit a fetch and a batch.
RECORD = b"b" * 16
#: Up to librdkafka's caps per batch, sent every 5 ms: the leader's log grows all the
#: time the burst runs, as under a bulk load.
PRODUCER = {"acks": "1", "linger.ms": 5, "batch.num.messages": 1_000_000,
            "queue.buffering.max.messages": 2_000_000, "enable.idempotence": False}


class Burst:
    """One running burst: its producer thread and its ISR watch."""

    def __init__(self, bootstrap: str, key: str, topic: str, partition: int,
                 zookeeper: str | None = None) -> None:
        self.key, self.topic, self.partition = key, topic, partition
        self._bootstrap = bootstrap
        self._zookeeper = zookeeper
        self._stop = threading.Event()
        self.sent = 0
        self.acked = 0
        self.failed = 0
        self.errors: dict[str, int] = {}
        self.isr_changes: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self._threads = [threading.Thread(target=self._write, daemon=True, name="insync-burst"),
                         threading.Thread(target=self._watch, daemon=True,
                                          name="insync-burst-isr")]
        for t in self._threads:
            t.start()

    def _delivered(self, err: Any, _msg: Any) -> None:
        if err is None:
            self.acked += 1
        else:
            self.failed += 1
            name = err.name() if hasattr(err, "name") else str(err)
            self.errors[name] = self.errors.get(name, 0) + 1

    def _write(self) -> None:
        prod = producer(self._bootstrap, **PRODUCER)
        while not self._stop.is_set():
            try:
                prod.produce(self.topic, RECORD, key=BURST_RECORD_KEY, partition=self.partition,
                             on_delivery=self._delivered)
                self.sent += 1
            except BufferError:
                prod.poll(0.01)
                continue
            if self.sent % 1000 == 0:
                prod.poll(0)
        prod.flush(10)

    def _look(self) -> tuple[str | None, tuple[str, ...]] | None:
        """The partition's leader and ISR now (None: not known yet)."""
        if self._zookeeper is not None:
            state = partition_state(self._zookeeper, self.topic, self.partition)
            if state is None:
                return None
            leader = int(state.get("leader", -1))
            return (node_name(leader) if leader >= 0 else None,
                    tuple(sorted(node_name(int(i)) for i in state.get("isr", []))))
        found = partitions(self._bootstrap, [self.topic], timeout_s=2.0).get(
            f"{self.topic}-{self.partition}")
        return None if found is None else (found.leader, tuple(sorted(found.isr)))

    def _watch(self) -> None:
        last: tuple[Any, ...] | None = None
        while not self._stop.wait(WATCH_S):
            try:
                seen = self._look()
            except Exception:  # a broker or server is down: look again next time
                continue
            if seen is not None and seen != last:
                self.isr_changes.append({"at-s": round(time.monotonic() - self.started, 2),
                                         "leader": seen[0], "isr": list(seen[1])})
                last = seen

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        for t in self._threads:
            t.join(30)
        seconds = time.monotonic() - self.started
        out: dict[str, Any] = {"key": self.key, "sent": self.sent, "acked": self.acked,
                               "failed": self.failed, "seconds": round(seconds, 1),
                               "isr-changes": self.isr_changes}
        if self.errors:
            out["errors"] = dict(sorted(self.errors.items()))
        return out


class BurstNemesis:
    """``start-burst`` / ``stop-burst``: at most one burst per key at a time."""

    def __init__(self, topic_prefix: str = "") -> None:
        self._prefix = topic_prefix
        self._bursts: dict[str, Burst] = {}

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        return None

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        value = op.get("value")
        if op["f"] == START:
            key = value["key"] if isinstance(value, Mapping) else str(value)
            if key in self._bursts:
                return completion({"key": key}, f"a burst on {key} is already running")
            topic, partition = parse_key(key)
            zookeeper = cluster.zookeeper if cluster.spec.mode == "zookeeper" else None
            self._bursts[key] = Burst(cluster.bootstrap, key, self._prefix + topic, partition,
                                      zookeeper)
            return completion({"key": key, "topic": self._prefix + topic, "partition": partition,
                               "isr-from": "zookeeper" if zookeeper else "metadata"})
        keys = list(self._bursts) if value in (None, "all") else [str(value)]
        done = [self._bursts.pop(k).stop() for k in keys if k in self._bursts]
        return completion(done)

    def teardown(self, cluster: Cluster) -> None:
        for key in list(self._bursts):
            self._bursts.pop(key).stop()
