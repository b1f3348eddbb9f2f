"""How the queue client records ``--txn``'s offset commits (docs/HISTORY-GROUPS.md).

A ``txn`` invoked with ``["commit"]`` completes with ``["commit", {key: offset}]``:
every position handed to ``send_offsets_to_transaction``, whatever the transaction
then does; ``["commit"]`` when it never got that far (never in ``ok``); ``{}`` when
the consumer knew no position. An ``assign`` with ``"seek": "committed"`` records
its lookup as ``committed``. Real ``QueueClient`` s on the fakes of
``kafka_fakes.py``; the last tests write their ops into a history and judge it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from history_builder import Hist
from kafka_fakes import FakeConsumer, FakeProducer, topics

from checkers import check_history
from workloads.client import Completed
from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions

K = KafkaError
PC = [["poll"], ["commit"]]
ABORTABLE = KafkaError(K.NOT_ENOUGH_REPLICAS, txn_requires_abort=True)


def client(producer: FakeProducer, consumer: FakeConsumer, process: int = 0,
           **opts: Any) -> QueueClient:
    opts = {"txn": True, "abort_p": 0.0, **opts}
    c = QueueClient(ClientOptions(bootstrap="x:9092", **opts), topics(), thread=0,
                    process=process)
    c.sender._producer = producer  # type: ignore[assignment]
    c.sender.clock = producer.clock
    c.reader._consumer = consumer  # type: ignore[assignment]
    return c


def ok(topic: str, partition: int, value: bytes) -> tuple[None, int]:
    return None, 7


def raising(err: KafkaError | None) -> Callable[[], None]:
    def go() -> None:
        if err is not None:
            raise KafkaException(err)

    return go


def holding(c: QueueClient, committed: dict[tuple[str, int], int]) -> None:
    """Assign t0-1 and t0-2 from the group's ``committed`` offsets."""
    consumer = c.reader._consumer
    assert isinstance(consumer, FakeConsumer)
    consumer.committed_offsets = committed
    assert c.invoke({"f": "assign", "value": ["t0-1", "t0-2"], "seek": "committed"}).type == "ok"


def test_an_ok_txn_records_every_position_it_sent_the_unread_key_too() -> None:
    producer = FakeProducer(ok)
    c = client(producer, FakeConsumer({("run1-t0", 1): [10, 11]}))
    holding(c, {("run1-t0", 2): 5})
    done = c.invoke({"f": "txn", "value": [["send", "t0-3", 9], *PC]})
    assert (done.type, done.value) == ("ok", [
        ["send", "t0-3", [7, 9]], ["poll", {"t0-1": [[0, 10], [1, 11]]}],
        ["commit", {"t0-1": 2, "t0-2": 5}]])
    assert producer.calls == ["begin", "offsets", "commit"]
    assert producer.sent_offsets == [[("run1-t0", 1, 2), ("run1-t0", 2, 5)]]


def test_a_consumer_that_knows_no_position_sends_none_and_records_an_empty_commit() -> None:
    producer = FakeProducer(ok)
    done = client(producer, FakeConsumer({})).invoke({"f": "txn", "value": PC})
    assert (done.type, done.value) == ("ok", [["poll", {}], ["commit", {}]])
    assert producer.calls == ["begin", "commit"]


def test_a_txn_invoked_without_a_commit_sends_no_offsets_even_when_it_reads() -> None:
    producer = FakeProducer(ok)
    c = client(producer, FakeConsumer({("run1-t0", 1): [10]}))
    holding(c, {})
    done = c.invoke({"f": "txn", "value": [["poll"]]})
    assert (done.type, done.value) == ("ok", [["poll", {"t0-1": [[0, 10]]}]])
    assert producer.calls == ["begin", "commit"]


def test_an_abort_on_purpose_comes_after_the_offsets_and_carries_them() -> None:
    producer = FakeProducer(ok)
    consumer = FakeConsumer({("run1-t0", 1): [10, 11]})
    c = client(producer, consumer, abort_p=0.999999)
    holding(c, {})
    done = c.invoke({"f": "txn", "value": PC})
    assert (done.type, done.error) == ("fail", "aborted on purpose")
    assert producer.calls == ["begin", "offsets", "abort"]
    assert done.value[-1] == ["commit", {"t0-1": 2, "t0-2": 0}]
    assert consumer.seeks == [("run1-t0", 1, 0)]  # sought back over its reads, as before


@dataclass(frozen=True)
class Fates:
    """What Kafka does to one transaction, step by step (None: it succeeds)."""

    delivery: KafkaError | None
    offsets: KafkaError | None
    commit: KafkaError | None
    abort: KafkaError | None
    on_purpose: bool


ERRORS = (None, ABORTABLE, KafkaError(K._TRANSPORT))
ALL_FATES = [Fates(*f) for f in itertools.product(
    (None, KafkaError(K.NOT_ENOUGH_REPLICAS)), ERRORS, ERRORS,
    (None, KafkaError(K._TRANSPORT)), (False, True))]


def fates_id(fates: Fates) -> str:
    def word(err: KafkaError | None) -> str:
        return "ok" if err is None else "abortable" if err.txn_requires_abort() else (
            err.name().lower().strip("_").replace("_", "-"))

    steps = [f"{name}-{word(getattr(fates, name))}"
             for name in ("delivery", "offsets", "commit", "abort")]
    return "/".join([*steps, "on-purpose" if fates.on_purpose else "by-chance"])


@pytest.mark.parametrize("fates", ALL_FATES, ids=fates_id)
def test_a_completion_names_every_offset_sent_and_only_what_was_sent(fates: Fates) -> None:
    """Whatever happens, the commit is recorded as the contract's harness duty says: the
    offsets exactly when ``send_offsets_to_transaction`` was called, and an ``ok`` op
    never keeps ``["commit"]``; a ``fail`` op's offsets were aborted with it."""
    producer = FakeProducer(lambda t, p, v: (fates.delivery, 7 if fates.delivery is None
                                             else -1),
                            offsets_answer=raising(fates.offsets),
                            commit=raising(fates.commit), abort=raising(fates.abort))
    c = client(producer, FakeConsumer({("run1-t0", 1): [10, 11]}),
               abort_p=0.999999 if fates.on_purpose else 0.0)
    holding(c, {("run1-t0", 2): 5})
    done = c.invoke({"f": "txn", "value": [["send", "t0-3", 9], *PC]})
    commit = done.value[-1]
    if "offsets" in producer.calls:
        assert commit == ["commit", {"t0-1": 2, "t0-2": 5}]
    else:
        assert commit == ["commit"] and done.type != "ok"
    if done.type == "ok":
        assert producer.calls == ["begin", "offsets", "commit"]
    if done.type == "fail":  # aborted: what it sent never applied
        assert producer.calls[-1] == "abort"
    assert done.value[1][0] == "poll" and len(done.value) == 3


def test_a_kept_key_is_not_looked_up_and_an_assign_that_adds_none_records_an_empty_lookup(
) -> None:
    consumer = FakeConsumer({}, committed_offsets={("run1-t0", 2): 4})
    c = client(FakeProducer(ok), consumer)
    holding(c, {("run1-t0", 2): 4})
    done = c.invoke({"f": "assign", "value": ["t0-2", "t0-3"], "seek": "committed"})
    assert (done.type, done.fields) == ("ok", {"committed": {"t0-3": None}})
    assert consumer.calls[-3:] == [("committed", [3]), ("unassign", [1]), ("assign", [(3, 0)])]
    done = c.invoke({"f": "assign", "value": ["t0-3"], "seek": "committed"})
    assert (done.type, done.fields) == ("ok", {"committed": {}})


@dataclass
class Answer:
    """A partition of ``committed()``'s answer, with an error as librdkafka may set."""

    topic: str
    partition: int
    offset: int = -1001
    error: KafkaError | None = None


def test_a_lookup_that_answers_a_partition_error_fails_the_assign_and_records_nothing(
) -> None:
    """Recorded as null, an error would read as an offset the group lost (``lost-commit``)."""
    class Erring(FakeConsumer):
        def committed(self, tps: list[TopicPartition], timeout: float = -1) -> list[Any]:
            return [Answer(tp.topic, tp.partition, error=KafkaError(K.UNSTABLE_OFFSET_COMMIT))
                    for tp in tps]

    consumer = Erring({})
    done = client(FakeProducer(ok), consumer).invoke(
        {"f": "assign", "value": ["t0-1"], "seek": "committed"})
    assert (done.type, done.fields, consumer.assigned) == ("fail", None, [])


def test_the_drains_assign_looks_nothing_up() -> None:
    consumer = FakeConsumer({}, committed_offsets={("run1-t0", 1): 4})
    done = client(FakeProducer(ok), consumer).invoke(
        {"f": "assign", "value": ["t0-1"], "seek": "beginning"})
    assert (done.type, done.fields) == ("ok", None)
    assert [call for call, _ in consumer.calls] == ["assign"]


# -- the recorded ops, judged ------------------------------------------------------------

def record(h: Hist, c: QueueClient, op: dict[str, Any]) -> Completed:
    """Invoke ``op`` on ``c`` and write its invoke and completion lines into ``h``."""
    h.add(c.process, "invoke", op["f"], op["value"],
          **{k: v for k, v in op.items() if k not in ("f", "value")})
    done = c.invoke(op)
    extra = {**({"error": done.error} if done.error else {}), **(done.fields or {})}
    h.add(c.process, done.type, op["f"], done.value, **extra)
    return done


def judged_run(monkeypatch: pytest.MonkeyPatch, *, keeps_aborted: bool) -> dict[str, Any]:
    """Process 0 reads t0-1 from nothing committed and commits 2; process 1 starts at 2,
    reads to 4, aborts and reads them again; then the group's offsets are read once, as
    after the heal."""
    log = {("run1-t0", 1): [10, 11, 12, 13]}
    group: dict[tuple[str, int], int] = {}
    h = Hist()
    for o, v in enumerate(log[("run1-t0", 1)]):
        h.send(9, "t0-1", o, v)
    clients = [client(FakeProducer(ok, group=group, keeps_aborted=keeps_aborted),
                      FakeConsumer(log, committed_offsets=group), process=p, max_poll_records=2,
                      abort_p=0.999999 if p == 1 else 0.0) for p in (0, 1)]
    join = {"f": "assign", "value": ["t0-1"], "group": "g0", "reset": "earliest",
            "seek": "committed"}
    for c in clients:
        record(h, c, join)
        record(h, c, {"f": "txn", "value": PC})
    record(h, clients[1], {"f": "poll", "value": [["poll"]]})  # 12, 13 again: sought back
    monkeypatch.setattr("workloads.queue.reading.Consumer",
                        lambda conf: FakeConsumer({}, committed_offsets=group))
    record(h, clients[0], {"f": "committed", "value": [["committed", ["t0-1"]]],
                           "group": "g0"})
    return check_history(h.ops)


def test_a_txn_runs_history_has_its_commits_and_lookups_judged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = judged_run(monkeypatch, keeps_aborted=False)
    assert verdict["valid"] is True
    # two commits of t0-1 (ok 2, aborted 4), three reads (two assigns' lookups, the last)
    assert (verdict["stats"]["commits"], verdict["stats"]["committed-reads"]) == (2, 3)


def test_an_aborted_txns_offsets_read_back_are_a_garbage_commit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = judged_run(monkeypatch, keeps_aborted=True)
    assert verdict["valid"] is False
    (garbage,) = verdict["anomalies"]["garbage-commit"]
    assert garbage == {"key": "t0-1", "group": "g0", "offset": 4, "op": 19, "writer": 15}
