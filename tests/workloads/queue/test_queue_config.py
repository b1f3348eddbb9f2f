"""``ClientOptions``: the librdkafka configurations follow the queue workload's options."""

from __future__ import annotations

from workloads.queue.config import (
    FETCH_QUEUE_BACKOFF_MS,
    QUEUED_MAX_KBYTES,
    QUEUED_MIN_MESSAGES,
    ClientOptions,
)


def test_configs_follow_the_options() -> None:
    o = ClientOptions(bootstrap="x", acks="1", idempotence=False, retries=0, txn=False)
    assert o.producer_config(2)["acks"] == "1" and o.producer_config(2)["retries"] == 0
    assert "transactional.id" not in o.producer_config(2)
    t = ClientOptions(bootstrap="x", txn=True, txn_id_prefix="run")
    assert t.producer_config(4)["transactional.id"] == "run-4"
    assert t.consumer_config()["isolation.level"] == "read_committed"
    s = ClientOptions(bootstrap="x", sub_via="subscribe")
    assert s.consumer_config()["enable.auto.commit"] is True


def test_main_phase_consumers_prefetch_little_and_the_drain_keeps_librdkafkas_defaults() -> None:
    o = ClientOptions(bootstrap="x", txn=True)
    running, draining = o.consumer_config(), o.consumer_config(draining=True)
    assert running["queued.min.messages"] == QUEUED_MIN_MESSAGES
    assert running["queued.max.messages.kbytes"] == QUEUED_MAX_KBYTES
    assert "queued.min.messages" not in draining
    assert "queued.max.messages.kbytes" not in draining
    # a short queue is refetched soon after a poll drains it, not after librdkafka's 1 s
    assert running["fetch.queue.backoff.ms"] == FETCH_QUEUE_BACKOFF_MS < 100
    assert "fetch.queue.backoff.ms" not in draining
    main_only = ("queued.", "fetch.queue.")
    assert {k: v for k, v in running.items() if not k.startswith(main_only)} == draining


def test_librdkafka_accepts_every_consumer_setting() -> None:
    """An unknown or misspelt property is refused when the consumer is made, which in a
    run would be every poll op's error; made here with nothing to connect to."""
    from confluent_kafka import Consumer

    for draining in (False, True):
        conf = ClientOptions(bootstrap="127.0.0.1:1").consumer_config(draining=draining)
        Consumer({"bootstrap.servers": "127.0.0.1:1", **conf}).close()


def test_check_crcs_reaches_every_consumer_from_the_option() -> None:
    """``--check-crcs true`` turns librdkafka's check.crcs on in the main phase's consumers
    and the drain's; without it the setting states librdkafka's default, off."""
    from workloads.queue.options import QueueSettings, client_options

    plain = client_options(QueueSettings())
    checked = client_options(QueueSettings(check_crcs=True))
    for draining in (False, True):
        assert plain.consumer_config(draining=draining)["check.crcs"] is False
        assert checked.consumer_config(draining=draining)["check.crcs"] is True
    assert checked.consumer_config(group="g0")["check.crcs"] is True
