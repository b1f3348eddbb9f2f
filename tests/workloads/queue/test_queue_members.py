"""Group members of the queue client (``--commit sync``) against a fake group consumer.

The fake (``kafka_fakes.FakeGroupConsumer``) serves records and rebalances in the
order a test gives and answers commits through a handler; the tests check that
each poll op's completion records, in order, what the member was handed, where
its rebalance callbacks ran and what it committed, as docs/HISTORY-GROUPS.md
asks, and how each outcome is judged.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from kafka_fakes import FakeGroupConsumer, Msg, topics

from workloads.queue import members, reading
from workloads.queue.client import QueueClient
from workloads.queue.config import ClientOptions

K = KafkaError
POLL = {"f": "poll", "value": [["poll"], ["commit"]]}


def member(fake: FakeGroupConsumer, monkeypatch: pytest.MonkeyPatch, process: int = 3,
           **opts: Any) -> tuple[QueueClient, list[dict[str, Any]]]:
    """A client of ``process`` whose consumers are ``fake``; the configs it made them with."""
    configs: list[dict[str, Any]] = []

    def make(config: dict[str, Any]) -> FakeGroupConsumer:
        configs.append(config)
        return fake

    monkeypatch.setattr(reading, "Consumer", make)
    options = ClientOptions(bootstrap="x:9092", sub_via="subscribe", group_prefix="run1-",
                            **{"groups": 2, "commit": "sync", **opts})
    return QueueClient(options, topics(), thread=0, process=process), configs


def rec(partition: int, offset: int, value: int) -> Msg:
    return Msg("run1-t0", partition, offset, str(value).encode())


def tp(partition: int) -> TopicPartition:
    return TopicPartition("run1-t0", partition)


def joined(fake: FakeGroupConsumer, monkeypatch: pytest.MonkeyPatch, **opts: Any
           ) -> tuple[QueueClient, list[dict[str, Any]]]:
    c, configs = member(fake, monkeypatch, **opts)
    op = {"f": "subscribe", "value": ["t0-1", "t0-2"], "group": "g1", "reset": "earliest"}
    assert c.invoke(op).type == "ok"
    return c, configs


def test_a_member_joins_its_group_without_auto_commit_and_commits_what_it_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([("assign", [tp(1)]), rec(1, 5, 50), rec(1, 6, 60)])
    c, configs = joined(fake, monkeypatch)
    assert configs[0]["group.id"] == "run1-g1"  # process 3 of 2 groups
    assert configs[0]["enable.auto.commit"] is False
    done = c.invoke(POLL)
    assert (done.type, done.value) == ("ok", [
        ["poll", {}], ["assigned", ["t0-1"]], ["poll", {"t0-1": [[5, 50], [6, 60]]}],
        ["commit", {"t0-1": 7}]])
    assert fake.commits == [[("run1-t0", 1, 7)]]


def test_rebalances_split_the_poll_where_they_ran_and_a_revoked_key_is_not_committed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([("assign", [tp(1), tp(2)]), rec(1, 0, 10), rec(2, 3, 23),
                              ("revoke", [tp(1), tp(2)]), ("assign", [tp(2)]), rec(2, 2, 22)])
    c, _ = joined(fake, monkeypatch)
    done = c.invoke(POLL)
    assert done.value == [
        ["poll", {}], ["assigned", ["t0-1", "t0-2"]], ["poll", {"t0-1": [[0, 10]],
                                                                 "t0-2": [[3, 23]]}],
        ["revoked", ["t0-1", "t0-2"]], ["poll", {}], ["assigned", ["t0-2"]],
        ["poll", {"t0-2": [[2, 22]]}], ["commit", {"t0-2": 3}]]
    assert done.type == "ok"


def test_a_poll_that_reads_nothing_commits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer()
    c, _ = joined(fake, monkeypatch)
    done = c.invoke(POLL)
    assert (done.type, done.value) == ("ok", [["poll", {}], ["commit", {}]])
    assert fake.commits == []


def refused(tps: list[TopicPartition]) -> list[TopicPartition]:
    raise KafkaException(KafkaError(K.REBALANCE_IN_PROGRESS))


def partition_error(tps: list[TopicPartition]) -> list[TopicPartition]:
    out = TopicPartition(tps[0].topic, tps[0].partition, tps[0].offset)
    out.error = KafkaError(K.ILLEGAL_GENERATION)  # type: ignore[misc]
    return [out]


@pytest.mark.parametrize("answer", [refused, partition_error], ids=["raised", "in-partition"])
def test_a_commit_that_errs_is_info_and_keeps_the_offsets_it_sent(
        answer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([("assign", [tp(1)]), rec(1, 4, 40)], commit_answer=answer)
    c, _ = joined(fake, monkeypatch)
    done = c.invoke(POLL)
    assert done.type == "info"
    assert done.value[-1] == ["commit", {"t0-1": 5}]
    assert done.value[-2] == ["poll", {"t0-1": [[4, 40]]}]


def test_a_poll_that_raises_is_fail_with_its_commit_unattempted_and_replaces_the_client(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([rec(1, 4, 40)], fail_on_poll=KafkaError(K._FATAL, fatal=True))
    c, _ = joined(fake, monkeypatch)
    done = c.invoke(POLL)
    assert done.type == "fail" and done.reset
    assert done.value == [["poll", {"t0-1": [[4, 40]]}], ["commit"]]
    assert fake.commits == []


def test_subscribing_again_to_the_same_topics_keeps_the_membership(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer()
    c, _ = joined(fake, monkeypatch)
    c.invoke({"f": "subscribe", "value": ["t0-2", "t0-3"], "group": "g1"})
    c.invoke({"f": "subscribe", "value": ["t0-7", "t1-0"], "group": "g1"})
    assert fake.subscriptions == [["run1-t0"], ["run1-t0", "run1-t1"]]


def test_a_revocation_at_close_is_not_recorded_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([("assign", [tp(1)])])
    c, _ = joined(fake, monkeypatch)
    c.invoke(POLL)
    c.close()
    assert fake.closed


def test_a_committed_read_answers_offsets_and_null_from_a_consumer_of_that_group(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer(committed_offsets={("run1-t0", 1): 12})
    c, configs = member(fake, monkeypatch, group_protocol="consumer")
    op = {"f": "committed", "value": [["committed", ["t0-1", "t0-2"]]], "group": "g0"}
    done = c.invoke(op)
    assert (done.type, done.value) == ("ok", [["committed", {"t0-1": 12, "t0-2": None}]])
    assert configs[0]["group.id"] == "run1-g0"
    assert "group.protocol" not in configs[0]  # a lookup never joins
    assert fake.closed


def test_a_committed_read_that_raises_is_fail_and_left_as_invoked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer()

    def broken(tps: list[TopicPartition], timeout: float = -1) -> list[TopicPartition]:
        raise KafkaException(KafkaError(K._TIMED_OUT))

    fake.committed = broken  # type: ignore[method-assign]
    c, _ = member(fake, monkeypatch)
    op = {"f": "committed", "value": [["committed", ["t0-1"]]], "group": "g0"}
    done = c.invoke(op)
    assert (done.type, done.value) == ("fail", op["value"])


def test_members_use_the_group_protocol_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    _, configs = joined(FakeGroupConsumer(), monkeypatch, group_protocol="consumer")
    assert configs[0]["group.protocol"] == "consumer"
    assert "session.timeout.ms" not in configs[0]
    _, classic = joined(FakeGroupConsumer(), monkeypatch)
    assert "group.protocol" not in classic[0]


def test_an_auto_commit_member_joins_its_group_and_commits_in_the_background(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeGroupConsumer([rec(1, 0, 10)])
    c, configs = member(fake, monkeypatch, commit="auto")
    op = {"f": "subscribe", "value": ["t0-1"], "group": "g1", "auto-commit": True}
    assert c.invoke(op).type == "ok"
    assert configs[0]["group.id"] == "run1-g1" and configs[0]["enable.auto.commit"] is True
    assert c.invoke({"f": "poll", "value": [["poll"]]}).value == [["poll", {"t0-1": [[0, 10]]}]]
    assert fake.commits == []


class Clock:
    """Virtual time: it moves only when the member sleeps, or a test moves it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def stalling(fake: FakeGroupConsumer, clock: Clock, seconds: float = 9.0) -> members.Member:
    m = members.Member(lambda t, p: f"{t.removeprefix('run1-')}-{p}",
                       lambda k: ("run1-" + k.rpartition("-")[0], int(k.rpartition("-")[2])),
                       0, members.Stall(seconds, sleep=clock.sleep),
                       max_poll_interval_s=6.0, clock=clock)
    fake.subscribe(["run1-t0"], on_assign=m.on_assign, on_revoke=m.on_revoke)
    return m


def not_a_member(tps: list[TopicPartition]) -> list[TopicPartition]:
    raise KafkaException(KafkaError(K.UNKNOWN_MEMBER_ID, "Broker: Unknown member"))


def test_a_member_that_stalls_past_its_poll_interval_is_refused_and_its_commit_fails() -> None:
    fake = FakeGroupConsumer([("assign", [tp(1)]), rec(1, 0, 10)])
    clock = Clock()
    m = stalling(fake, clock)
    done = m.poll_commit(fake, 0.1, 100)  # 0 s into its life: no stall yet
    assert (done.type, clock.slept) == ("ok", [])
    clock.now += 10.0
    fake.events = [rec(1, 1, 11)]
    fake.commit_answer = not_a_member
    done = m.poll_commit(fake, 0.1, 100)
    # it stalled once, between the poll and the commit, 9 s against a 6 s interval: the
    # group had evicted it, so its refused commit certainly did not apply
    assert clock.slept == [9.0]
    assert done.type == "fail" and "UNKNOWN_MEMBER_ID" in str(done.error)
    assert done.value == [["poll", {"t0-1": [[1, 11]]}], ["commit", {"t0-1": 2}]]
    fake.events = [rec(1, 2, 12)]
    done = m.poll_commit(fake, 0.1, 100)  # the same refusal without a stall: may have applied
    assert (done.type, clock.slept) == ("info", [9.0])


def test_a_stall_shorter_than_the_poll_interval_leaves_a_refusal_info() -> None:
    fake = FakeGroupConsumer([("assign", [tp(1)]), rec(1, 0, 10)],
                             commit_answer=not_a_member)
    clock = Clock()
    m = stalling(fake, clock, seconds=5.0)
    clock.now += 10.0
    done = m.poll_commit(fake, 0.1, 100)
    assert clock.slept == [5.0] and done.type == "info"


def test_stall_member_stalls_thread_0s_member_and_shortens_the_poll_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    c, configs = joined(FakeGroupConsumer(), monkeypatch, stall_member_s=9.0)
    assert configs[0]["max.poll.interval.ms"] == 6000 == configs[0]["session.timeout.ms"]
    member = c.reader.member
    assert member is not None and member.stall is not None and member.stall.seconds == 9.0
    assert member.max_poll_interval_s == 6.0
    other = QueueClient(ClientOptions(bootstrap="x:9092", sub_via="subscribe", commit="sync",
                                      stall_member_s=9.0), topics(), thread=1, process=4)
    assert other.reader.stall_s == 0.0
    _, plain = joined(FakeGroupConsumer(), monkeypatch)
    assert "max.poll.interval.ms" not in plain[0]
