"""A group member of the exactly-once workload leaves its group within two op timeouts of
its last poll, so an abandoned op's consumer cannot hold a rebalance for long."""

from __future__ import annotations

from workloads.eos.client import POLL_INTERVAL_OP_TIMEOUTS, member_config
from workloads.eos.shape import GROUP
from workloads.queue.config import ClientOptions


def test_a_member_polls_within_two_op_timeouts_or_leaves_the_group() -> None:
    opts = ClientOptions(bootstrap="127.0.0.1:1", txn=True, sub_via="subscribe",
                         delivery_timeout_ms=10_000)
    config = member_config(opts)
    assert opts.op_timeout_s == 15.0
    assert config["max.poll.interval.ms"] == POLL_INTERVAL_OP_TIMEOUTS * 15_000 == 30_000
    assert config["group.id"] == opts.group_id_of(GROUP)
    assert config["isolation.level"] == "read_committed"


def test_the_interval_is_never_shorter_than_the_session() -> None:
    """librdkafka refuses a max.poll.interval.ms below session.timeout.ms."""
    opts = ClientOptions(bootstrap="127.0.0.1:1", txn=True, sub_via="subscribe",
                         delivery_timeout_ms=0)
    config = member_config(opts)
    assert opts.op_timeout_s == 5.0
    assert config["max.poll.interval.ms"] >= config["session.timeout.ms"] == 10_000
