"""``ClientOptions``: the librdkafka configurations follow the queue workload's options."""

from __future__ import annotations

from workloads.queue.config import ClientOptions


def test_configs_follow_the_options() -> None:
    o = ClientOptions(bootstrap="x", acks="1", idempotence=False, retries=0, txn=False)
    assert o.producer_config(2)["acks"] == "1" and o.producer_config(2)["retries"] == 0
    assert "transactional.id" not in o.producer_config(2) and not o.sends_retried
    t = ClientOptions(bootstrap="x", txn=True, txn_id_prefix="run")
    assert t.producer_config(4)["transactional.id"] == "run-4"
    assert t.consumer_config()["isolation.level"] == "read_committed"
    s = ClientOptions(bootstrap="x", sub_via="subscribe")
    assert s.consumer_config()["enable.auto.commit"] is True
