"""``Topics``: the queue workload's topics, prefixed per run and created on demand."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from kafka_fakes import NoAdmin, topics

from workloads.queue.topics import topic_number


def test_topic_names_are_prefixed_and_keys_map_back() -> None:
    t = topics()
    assert t.real("t3-5") == ("run1-t3", 5)
    assert t.key("run1-t3", 5) == "t3-5"
    assert topic_number("t12") == 12
    with pytest.raises(ValueError):
        topic_number("x1")


def test_ensure_creates_the_topic_and_the_next_ones() -> None:
    t = topics()
    t.ensure_keys(["t0-1", "t0-2"])
    assert t.created == ["run1-t0", "run1-t1", "run1-t2"]


class _FailingAdmin:
    """An admin client whose creations all fail as 0.10.2's did after a power loss."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        out: dict[str, Future[Any]] = {}
        for topic in topics:
            self.log.append(f"failing {topic.topic}")
            f: Future[Any] = Future()
            f.set_exception(KafkaException(KafkaError(
                KafkaError._TIMED_OUT, "Failed while waiting for controller")))
            out[topic.topic] = f
        return out


def test_a_failed_creation_is_asked_again_through_a_fresh_admin_client() -> None:
    log: list[str] = []
    admins = iter([_FailingAdmin(log), NoAdmin()])
    t = topics()
    t._admin_factory = lambda: next(admins)  # type: ignore[assignment,return-value]
    with pytest.raises(KafkaException):
        t.ensure(0)
    assert log == ["failing run1-t0", "failing run1-t1", "failing run1-t2"]
    t.ensure(0)  # the failing client is dropped: the second one creates t0
    assert "run1-t0" in t.created
    with pytest.raises(StopIteration):  # and it is kept for later topics
        next(admins)
    t.ensure(3)


class _DeletingAdmin:
    """An admin client whose deletions fail with ``errors[name]`` (a Kafka error code)."""

    def __init__(self, log: list[list[str]], errors: dict[str, int]) -> None:
        self.log, self.errors = log, errors

    def delete_topics(self, names: list[str], request_timeout: float) -> dict[str, Future[Any]]:
        self.log.append(list(names))
        out: dict[str, Future[Any]] = {}
        for name in names:
            f: Future[Any] = Future()
            if name in self.errors:
                f.set_exception(KafkaException(KafkaError(self.errors[name])))
            else:
                f.set_result(None)
            out[name] = f
        return out


def test_delete_all_asks_a_fresh_admin_and_asks_again_for_what_failed(
        caplog: pytest.LogCaptureFixture) -> None:
    # The run's admin may still name a controller the faults moved: every attempt makes
    # a new one, and the second asks only for what the first could not delete.
    log: list[list[str]] = []
    admins = iter([
        _DeletingAdmin(log, {"run1-t0": KafkaError.NOT_CONTROLLER,
                             "run1-t1": KafkaError.REQUEST_TIMED_OUT}),
        _DeletingAdmin(log, {"run1-t1": KafkaError.UNKNOWN_TOPIC_OR_PART}),
    ])
    t = topics()
    t.ensure(0)  # asks for t0, t1, t2 through the run's admin (NoAdmin)
    t._admin_factory = lambda: next(admins)  # type: ignore[assignment,return-value]
    with caplog.at_level(logging.INFO, logger="insync.topics"):
        t.delete_all()
    assert log == [["run1-t0", "run1-t1", "run1-t2"], ["run1-t0", "run1-t1"]]
    # t1's timed-out deletion went through after all: not reported as left behind
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_delete_all_reports_what_is_left_after_the_last_attempt(
        caplog: pytest.LogCaptureFixture) -> None:
    log: list[list[str]] = []
    t = topics()
    t.ensure(0)
    t._admin_factory = lambda: _DeletingAdmin(  # type: ignore[assignment,return-value]
        log, {"run1-t2": KafkaError.NOT_CONTROLLER})
    with caplog.at_level(logging.INFO, logger="insync.topics"):
        t.delete_all()
    assert log == [["run1-t0", "run1-t1", "run1-t2"], ["run1-t2"]]
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "run1-t2" in warned[0]


class _AnsweringLaterAdmin:
    """Answers deletions a little later, as librdkafka does, unless it is collected first:
    then every pending answer is ``_DESTROY``, as a destroyed librdkafka handle's are."""

    def __init__(self, log: list[list[str]]) -> None:
        self.log = log
        self.pending: list[Future[Any]] = []

    def delete_topics(self, names: list[str], request_timeout: float) -> dict[str, Future[Any]]:
        self.log.append(list(names))
        out = {name: Future() for name in names}
        self.pending = list(out.values())
        pending = self.pending  # the timer holds the answers, not the client
        timer = threading.Timer(0.05, lambda: [f.set_result(None) for f in pending
                                               if not f.done()])
        timer.daemon = True
        timer.start()
        return out

    def __del__(self) -> None:
        for f in self.pending:
            if not f.done():
                f.set_exception(KafkaException(KafkaError(KafkaError._DESTROY)))


def test_delete_all_holds_its_admin_client_until_every_answer_is_in(
        caplog: pytest.LogCaptureFixture) -> None:
    # Dropped right after the call, a fresh client's deletions all failed "Handle is
    # terminating" (a 0.10.2 catalogue run, 2026-11-23): both attempts, every topic.
    log: list[list[str]] = []
    t = topics()
    t.ensure(0)
    t._admin_factory = lambda: _AnsweringLaterAdmin(log)  # type: ignore[assignment,return-value]
    with caplog.at_level(logging.INFO, logger="insync.topics"):
        t.delete_all()
    assert log == [["run1-t0", "run1-t1", "run1-t2"]]
    assert not [r.getMessage() for r in caplog.records if "could not delete" in r.getMessage()]

