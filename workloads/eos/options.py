"""The exactly-once workload's settings, checks and test.json block.

It has no options of its own yet: its shape is fixed (``workloads.eos.shape``)
and its producers are those exactly-once needs (acks=all, idempotent inputs;
transactional outputs). What it refuses is the brokers that do not promise
exactly-once to a group's members: before KIP-447 (2.5) nothing fences a member
that lost its partitions (docs/HISTORY-GROUPS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.versions import KafkaVersion, feature_since
from harness.base.errors import UsageError
from harness.base.values import Spec
from workloads.eos.generator import SENDS_PER_OP
from workloads.eos.shape import GROUP, INPUT_TOPIC, OUTPUT_TOPIC, PARTITIONS, PRODUCER_EVERY
from workloads.queue.config import ClientOptions

OPTIONS: tuple[Spec, ...] = ()


@dataclass(frozen=True)
class EosSettings:
    """The exactly-once workload's option values (none yet)."""


def validate(s: Any, version: KafkaVersion) -> None:
    """Refuse brokers before KIP-447: exactly-once by group metadata is not promised."""
    if not version.can("group_fencing"):
        raise UsageError(
            f"--workload eos needs Kafka {feature_since('group_fencing')}+ brokers (KIP-447 "
            f"fences a group's members by generation), got Kafka {version.version}",
            hint="pass a newer --kafka-version",
        )


def client_options(s: Any, *, bootstrap: str = "", token: str = "insync",
                   seed: int = 0) -> tuple[ClientOptions, ClientOptions]:
    """The input producers' settings, and the members' (transactional, read_committed)."""
    plain = ClientOptions(bootstrap=bootstrap, acks="all", idempotence=True,
                          group_id=f"{token}-group", group_prefix=f"{token}-",
                          txn_id_prefix=f"{token}-txn", seed=seed)
    txn = ClientOptions(bootstrap=bootstrap, acks="all", idempotence=True, txn=True,
                        sub_via="subscribe", group_id=f"{token}-group",
                        group_prefix=f"{token}-", txn_id_prefix=f"{token}-txn", abort_p=0.0,
                        seed=seed)
    return plain, txn


def block(s: Any) -> dict[str, Any]:
    """The workload's part of ``test.json``'s ``workload`` block."""
    plain, txn = client_options(s)
    producer = txn.producer_config(thread=0)
    producer.pop("transactional.id", None)  # one per thread
    return {
        "input_topic": f"t{INPUT_TOPIC}",
        "output_topic": f"t{OUTPUT_TOPIC}",
        "partitions_per_topic": PARTITIONS,
        "group": GROUP,
        "producer_every": PRODUCER_EVERY,
        "sends_per_op": SENDS_PER_OP,
        "input_producer": plain.producer_config(thread=0),
        "producer": producer,
        "consumer": txn.consumer_config(group=GROUP),
    }


def name_parts(s: Any) -> list[str]:
    return ["eos"]
