"""The queue workload's options: its checks, its automatic values, the generator's shape."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.base.errors import UsageError
from workloads.queue import options
from workloads.queue.options import QueueSettings


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (QueueSettings(txn=True, acks="1"), "--txn needs --acks all"),
        (QueueSettings(idempotence=True, acks="0"), "--idempotence needs --acks all"),
        (QueueSettings(txn=True, idempotence=False), "--txn needs idempotence"),
        (QueueSettings(max_in_flight=6), "--max-in-flight 6 is over 5"),
    ],
    ids=["txn-acks1", "idempotence-acks0", "txn-no-idempotence", "in-flight-idempotent"],
)
def test_combinations_the_clients_cannot_run_are_refused(settings: QueueSettings,
                                                         message: str) -> None:
    with pytest.raises(UsageError) as err:
        options.validate(settings)
    assert message in err.value.one_line()


def test_many_in_flight_without_idempotence_is_fine() -> None:
    options.validate(QueueSettings(max_in_flight=6, idempotence=False))


@pytest.mark.parametrize(
    ("acks", "given", "decided"),
    [("all", None, True), ("1", None, False), ("all", False, False)],
    ids=["acks-all", "acks-1", "given"],
)
def test_idempotence_follows_acks_unless_given(acks: str, given: bool | None,
                                               decided: bool) -> None:
    assert options.automatic(QueueSettings(acks=acks, idempotence=given)) == {
        "idempotence": decided}


def test_the_test_name_and_the_generator_follow_txn_and_sub_via() -> None:
    plain = QueueSettings()
    both = replace(plain, txn=True, sub_via="subscribe")
    assert options.name_parts(plain) == ["queue", "acks-all"]
    assert options.name_parts(both) == ["queue", "acks-all", "txn", "subscribe"]
    shape = options.generator_options(both)
    assert shape.consume == "subscribe" and shape.weights["txn"] > 0
    assert shape.weights["assign"] == 0 and shape.weights["subscribe"] > 0
    assert options.generator_options(plain).weights["txn"] == 0
    assert options.block(plain)["partitions_per_topic"] == shape.partitions_per_topic
