"""``Topics``: the queue workload's topics, prefixed per run and created on demand."""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref
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
    """An admin client whose creations all fail with ``code``: by default as 0.10.2's and
    4.1's did after every broker had been down ("Failed while waiting for controller")."""

    def __init__(self, log: list[str], code: int = KafkaError._TIMED_OUT) -> None:
        self.log, self.code = log, code

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        out: dict[str, Future[Any]] = {}
        for topic in topics:
            self.log.append(f"failing {topic.topic}")
            f: Future[Any] = Future()
            f.set_exception(KafkaException(KafkaError(self.code, "refused")))
            out[topic.topic] = f
        return out


def test_a_timed_out_creation_is_asked_again_at_once_through_a_fresh_admin_client() -> None:
    log: list[str] = []
    admins = iter([_FailingAdmin(log), NoAdmin()])
    t = topics()
    t._admin_factory = lambda: next(admins)  # type: ignore[assignment,return-value]
    t.ensure(0)  # no error: the second client created t0
    assert log == ["failing run1-t0", "failing run1-t1", "failing run1-t2"]
    assert "run1-t0" in t.created
    t.ensure(1)  # t1's request failed with the first client: asked again, by the second
    t.ensure(3)
    with pytest.raises(StopIteration):  # which is kept while it answers
        next(admins)


def test_a_refused_creation_ends_the_call_and_keeps_the_client() -> None:
    # A cluster short of brokers refuses at once; asked again by every op, a fresh client
    # each time would have made hundreds a second.
    log: list[str] = []
    made: list[object] = []

    def admin() -> _FailingAdmin:
        made.append(object())
        return _FailingAdmin(log, KafkaError.INVALID_REPLICATION_FACTOR)

    t = topics()
    t._admin_factory = admin  # type: ignore[assignment]
    t.refused_s = 0.05
    for _ in range(3):
        with pytest.raises(KafkaException):
            t.ensure(0)
    assert log.count("failing run1-t0") == 1  # the refusal stands for refused_s: not asked
    time.sleep(0.06)
    for _ in range(2):
        with pytest.raises(KafkaException, match="refused"):
            t.ensure(0)
    assert len(made) == 1
    assert log.count("failing run1-t0") == 2  # asked again once refused_s had passed


class _RefusingWhileDown:
    """An admin client that refuses every creation (``INVALID_REPLICATION_FACTOR``, as a
    cluster with a broker down refuses replication factor 3) while ``down`` is set."""

    def __init__(self, log: list[str], down: list[bool]) -> None:
        self.log, self.down = log, down

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        out: dict[str, Future[Any]] = {}
        for topic in topics:
            self.log.append(("refused " if self.down[0] else "created ") + topic.topic)
            f: Future[Any] = Future()
            if self.down[0]:
                f.set_exception(KafkaException(KafkaError(KafkaError.INVALID_REPLICATION_FACTOR)))
            else:
                f.set_result(None)
            out[topic.topic] = f
        return out


def test_a_refused_lookahead_topic_is_asked_again_before_a_key_needs_it() -> None:
    # Refused while a broker was down, a reserve topic stayed uncreated until a key needed
    # it; by then the next fault could be in force, and the key's sends were refused.
    log: list[str] = []
    down = [False]
    t = topics()
    t.ask_s = 0.05
    t._admin_factory = lambda: _RefusingWhileDown(log, down)  # type: ignore[assignment,return-value]
    t.ensure(0)  # t0, and t1 and t2 in reserve
    down[0] = True
    t.ensure(1)  # t1's first use: t3 is asked for, and refused
    assert log[-1] == "refused run1-t3"
    t.ensure(1)  # t1 is ready: the reserve is looked at, and t3 asked for again
    t.ensure(1)  # within ask_s: not looked at
    assert log.count("refused run1-t3") == 2
    down[0] = False
    time.sleep(0.06)
    t.ensure(1)  # the ops go on writing to ready topics: t3 is asked for again, and made
    assert log[-1] == "created run1-t3"
    time.sleep(0.06)
    t.ensure(1)  # made: never asked for again
    assert log.count("created run1-t3") == 1
    assert "run1-t3" in t.created


def test_asking_again_stops_when_the_time_is_up() -> None:
    log: list[str] = []
    t = topics()
    t.timeout_s = 0.05
    t._admin_factory = lambda: _FailingAdmin(log)  # type: ignore[assignment,return-value]
    with pytest.raises(KafkaException):
        t.ensure(0)
    assert log.count("failing run1-t0") >= 2  # asked, then asked again, then gave up


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
        timer.name = "librdkafka-like"  # answers come on the client library's own thread
        timer.daemon = True
        timer.start()
        return out

    def __del__(self) -> None:
        DESTROYED_ON.append(threading.current_thread().name)
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


DESTROYED_ON: list[str] = []


class _SlowCreatingAdmin:
    """Creates ``fail_first`` at once with a timeout, answers the rest 50 ms later unless it
    is collected first (then ``_DESTROY``, as a destroyed librdkafka handle's are)."""

    def __init__(self, name: str, log: list[str], fail_first: str | None = None) -> None:
        self.name, self.log, self.fail_first = name, log, fail_first
        self.pending: list[Future[Any]] = []

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        out: dict[str, Future[Any]] = {}
        for topic in topics:
            self.log.append(f"{self.name} {topic.topic}")
            f: Future[Any] = Future()
            if topic.topic == self.fail_first:
                f.set_exception(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
            else:
                self.pending.append(f)
            out[topic.topic] = f
        pending = list(self.pending)
        timer = threading.Timer(0.05, lambda: [f.set_result(None) for f in pending
                                               if not f.done()])
        timer.name = "librdkafka-like"  # answers come on the client library's own thread
        timer.daemon = True
        timer.start()
        return out

    def __del__(self) -> None:
        DESTROYED_ON.append(threading.current_thread().name)
        for f in self.pending:
            if not f.done():
                f.set_exception(KafkaException(KafkaError(KafkaError._DESTROY)))


def test_a_replaced_admin_client_lives_until_its_requests_are_answered() -> None:
    # t0 timed out and the client was replaced; its requests for t1 and t2 were still in
    # flight and must be answered, not destroyed with the client (then asked again).
    log: list[str] = []
    names = iter(["first", "second"])  # made on demand: nothing else holds a client

    made: list[weakref.ref[_SlowCreatingAdmin]] = []

    def admin() -> _SlowCreatingAdmin:
        name = next(names)
        client = _SlowCreatingAdmin(name, log, fail_first="run1-t0" if name == "first" else None)
        made.append(weakref.ref(client))
        return client

    t = topics()
    t._admin_factory = admin  # type: ignore[assignment]
    t.ensure(0)
    t.ensure(1)
    t.ensure(2)
    assert log[:4] == ["first run1-t0", "first run1-t1", "first run1-t2", "second run1-t0"]
    assert "second run1-t1" not in log and "second run1-t2" not in log  # not asked again
    # answered, the replaced client is let go at a worker's next request. Its answers'
    # callbacks run on the answering thread just after the waiter wakes, so the request
    # that lets it go may come first: ask again until it is gone (a local CI failed once
    # when one request was assumed to be enough).
    deadline = time.monotonic() + 5.0
    while made[0]() is not None and time.monotonic() < deadline:
        t.ensure(3)
        gc.collect()
        time.sleep(0.01)
    assert made[0]() is None
    assert made[1]() is t._admin
    # and never on the answering thread: librdkafka aborts the process for that
    assert DESTROYED_ON and "librdkafka-like" not in DESTROYED_ON

