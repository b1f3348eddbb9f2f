"""The queue workload's options: its checks, its automatic values, the generator's shape."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster.versions import resolve_version
from harness.base.errors import UsageError
from workloads.queue import combinations, options
from workloads.queue.options import QueueSettings

NEW = resolve_version("4.1")
OLD = resolve_version("0.10.2")


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
        combinations.validate(settings, NEW)
    assert message in err.value.one_line()


SUB = QueueSettings(sub_via="subscribe")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (QueueSettings(commit="sync"), "--commit sync needs --sub-via subscribe"),
        (replace(SUB, commit="sync", txn=True), "--commit sync cannot go with --txn"),
        (QueueSettings(groups=2), "--groups 2 needs --sub-via subscribe"),
        (QueueSettings(group_protocol="consumer"), "--group-protocol consumer needs --sub-via"),
        (QueueSettings(members_from=20), "--members-from 20 needs --sub-via subscribe"),
        (replace(SUB, txn=True, members_from=5), "--members-from 5 needs --sub-via subscribe"),
    ],
    ids=["sync-assign", "sync-txn", "groups-auto", "consumer-assign", "late-assign",
         "late-txn"],
)
def test_group_options_that_would_be_ignored_are_refused(settings: QueueSettings,
                                                         message: str) -> None:
    with pytest.raises(UsageError) as err:
        combinations.validate(settings, NEW)
    assert message in err.value.one_line()


def test_after_abort_none_needs_txn_and_reaches_the_clients() -> None:
    with pytest.raises(UsageError) as err:
        combinations.validate(QueueSettings(txn_after_abort="none"), NEW)
    assert "--txn-after-abort none needs --txn" in err.value.one_line()
    asked = QueueSettings(txn=True, txn_after_abort="none")
    combinations.validate(asked, NEW)
    assert options.client_options(asked).after_abort == "none"
    assert options.block(asked)["txn_after_abort"] == "none"
    assert options.client_options(QueueSettings(txn=True)).after_abort == "seek"


def test_the_consumer_group_protocol_needs_kafka_4() -> None:
    asked = replace(SUB, commit="sync", groups=3, group_protocol="consumer")
    combinations.validate(asked, NEW)
    with pytest.raises(UsageError) as err:
        combinations.validate(asked, resolve_version("3.9"))
    assert "--group-protocol consumer needs Kafka 4.0.0+ brokers" in err.value.one_line()
    assert options.name_parts(asked)[-3:] == ["commit", "groups-3", "consumer-protocol"]
    block = options.block(asked)
    assert (block["commit"], block["groups"], block["group_protocol"]) == (
        "sync", 3, "consumer")


def test_many_in_flight_without_idempotence_is_fine() -> None:
    combinations.validate(QueueSettings(max_in_flight=6, idempotence=False), NEW)


def test_many_in_flight_on_old_brokers_is_fine_since_idempotence_defaults_off() -> None:
    combinations.validate(QueueSettings(max_in_flight=6), OLD)


@pytest.mark.parametrize(
    ("settings", "flag"),
    [(QueueSettings(idempotence=True), "--idempotence true"),
     (QueueSettings(txn=True), "--txn true")],
    ids=["idempotence", "txn"],
)
def test_a_feature_old_brokers_lack_is_refused_when_asked(settings: QueueSettings,
                                                          flag: str) -> None:
    combinations.validate(settings, NEW)
    with pytest.raises(UsageError) as err:
        combinations.validate(settings, OLD)
    line = err.value.one_line()
    assert f"{flag} needs Kafka 0.11.0+ brokers" in line and "0.10.2.2" in line


@pytest.mark.parametrize(
    ("acks", "given", "version", "decided"),
    [("all", None, "4.1", True), ("1", None, "4.1", False), ("all", False, "4.1", False),
     ("all", None, "0.11.0", True), ("all", None, "0.10.2", False), ("1", None, "0.10.2", False)],
    ids=["acks-all", "acks-1", "given", "acks-all-0.11", "acks-all-0.10", "acks-1-0.10"],
)
def test_idempotence_follows_acks_and_the_brokers_unless_given(
    acks: str, given: bool | None, version: str, decided: bool
) -> None:
    settings = QueueSettings(acks=acks, idempotence=given)
    assert options.automatic(settings, resolve_version(version)) == {"idempotence": decided}


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


def test_sends_per_op_is_a_row_that_reaches_the_generator_and_test_json() -> None:
    from harness.run.options import parse

    opts = parse(["--sends-per-op", "7"]).resolved()
    assert options.generator_options(opts).sends_per_op == 7
    assert options.block(opts)["sends_per_op"] == 7
    with pytest.raises(UsageError) as err:
        parse(["--sends-per-op", "0"])
    assert "--sends-per-op must be a whole number from 1" in err.value.one_line()


@pytest.mark.parametrize(
    "settings",
    [QueueSettings(), QueueSettings(acks="1", max_in_flight=20, retries=0),
     QueueSettings(txn=True)],
    ids=["defaults", "acks1-unordered", "txn"],
)
def test_test_json_states_the_producer_settings_the_clients_use(settings: QueueSettings) -> None:
    block = options.block(settings)
    used = options.client_options(settings, bootstrap="b:9092", token="run").producer_config(3)
    used.pop("transactional.id", None)  # one per thread: not a setting of the run
    assert block["producer"] == used
    assert block["producer"]["linger.ms"] >= 0
    assert block["producer"]["max.in.flight.requests.per.connection"] == settings.max_in_flight
    idempotent = settings.txn or settings.acks == "all"
    assert block["producer"]["enable.idempotence"] is idempotent
    if idempotent:
        assert settings.max_in_flight <= options.IDEMPOTENT_MAX_IN_FLIGHT


def test_sends_outweigh_polls_eight_to_one_by_default() -> None:
    """Polls hold client threads without sending (``generator_options``' docstring):
    the default mix keeps most of the threads' time on sends."""
    weights = options.generator_options(QueueSettings()).weights
    assert weights["send"] / weights["poll"] == 8
    assert weights["send"] / sum(weights.values()) > 0.85


def test_members_from_reaches_the_clients_the_generator_and_test_json() -> None:
    late = replace(SUB, commit="sync", members_from=20)
    combinations.validate(late, NEW)
    assert options.generator_options(late).join_from_ns == 20_000_000_000
    assert options.client_options(late).members_from_s == 20
    assert options.block(late)["members_from"] == 20
    assert options.generator_options(SUB).join_from_ns == 0


def test_check_crcs_is_a_row_that_reaches_the_consumers_and_test_json() -> None:
    from harness.run.options import parse

    opts = parse(["--check-crcs", "true"]).resolved()
    assert options.block(opts)["check_crcs"] is True
    assert options.client_options(opts).consumer_config()["check.crcs"] is True
    assert options.block(parse([]).resolved())["check_crcs"] is False


def test_record_keys_is_a_row_that_reaches_the_producers_and_test_json() -> None:
    from harness.run.options import parse

    opts = parse(["--record-keys", "true"]).resolved()
    assert options.block(opts)["record_keys"] is True
    assert options.client_options(opts).record_keys is True
    assert options.block(parse([]).resolved())["record_keys"] is False
    assert options.client_options(parse([]).resolved()).record_keys is False
