"""Worker threads: each performs one op at a time and records it the moment it happens.

A client worker owns one client thread's connection. Given an op, it first lets
the client prepare (create the topics the op names; nothing is recorded yet, so
that wait is not part of the op), writes the ``invoke``, performs the op,
writes the completion, and only then reports to the interpreter. Any exception
inside an op becomes ``info`` (it may have happened); an ``info`` or a client
asking to be reset closes the client, and the interpreter gives the thread a
fresh process number, whose first op builds a fresh client.

Every client op has a deadline, which the interpreter enforces: an op still
running its op timeout after it was handed over is *abandoned*
(:meth:`ClientWorker.abandon`): the interpreter records it ``info`` (``fail`` if
it never got past ``prepare``, so nothing reached Kafka), and the thread goes on
as a fresh process on a fresh worker. The abandoned worker records nothing more:
when its call returns it closes its client and ends. A fresh transactional
producer's ``init_transactions`` fences the abandoned one (the transactional id
is the thread's), as Jepsen's client is replaced after an indefinite error. So
no client, however stuck in librdkafka, holds a phase (or a heal) past one op
timeout.

The nemesis worker does the same for faults: an ``invoke`` with process
``"nemesis"``, ``Nemesis.invoke``, then an ``info`` line saying what was really
done (or the error). It never raises either.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.base.contract import NEMESIS
from harness.base.history import Op
from harness.base.history_writer import HistoryWriter
from workloads.client import Client, Completed
from workloads.outcomes import describe

if TYPE_CHECKING:
    from cluster import Cluster
    from nemesis.protocol import Nemesis

LOG = logging.getLogger("insync.run")

ClientFactory = Callable[[int, int], Client]
"""``(thread, process) -> Client``: a fresh client for a process of a thread."""

_STAMPED = frozenset({"index", "time", "process", "type", "f", "value"})
WARM_UP = "_warm-up"  # not an op: never recorded


@dataclass(frozen=True, slots=True)
class Event:
    """A completion as the interpreter learns it: which thread is free again, and why."""

    thread: int | str
    op: Op
    reset: bool = False


class _Worker:
    """A thread fed one op at a time through its inbox; ``None`` stops it."""

    def __init__(self, name: str, events: queue.Queue[Event]) -> None:
        self.events = events
        self.inbox: queue.SimpleQueue[Op | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def submit(self, op: Op) -> None:
        self.inbox.put(op)

    def stop(self) -> None:
        self.inbox.put(None)

    def join(self, timeout: float | None) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def _loop(self) -> None:
        try:
            while (op := self.inbox.get()) is not None:
                self.handle(op)
        finally:
            self.finish()

    def handle(self, op: Op) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Release what the worker holds, when it stops."""


class ClientWorker(_Worker):
    """Runs one client thread's ops against its current client."""

    def __init__(
        self,
        thread: int,
        factory: ClientFactory,
        history: HistoryWriter,
        events: queue.Queue[Event],
    ) -> None:
        super().__init__(f"client-{thread}", events)
        self.index = thread
        self.factory = factory
        self.history = history
        self.client: Client | None = None
        self.client_process: int | None = None
        # What the interpreter may see of the op in hand, under ``_lock``: whether it is
        # being prepared or invoked (its invoke row), done, or abandoned.
        self._lock = threading.Lock()
        self._stage: str = "idle"
        self._invoke: Op | None = None

    def warm_up(self, process: int, done: Callable[[int, BaseException | None], None]) -> None:
        """Build this thread's first client before the clock starts (see ``Client``)."""
        self.inbox.put({"f": WARM_UP, "process": process, "done": done})

    def _warm_up(self, op: Op) -> None:
        error: BaseException | None = None
        try:
            self.client = self.factory(self.index, op["process"])
            self.client_process = op["process"]
            warm = getattr(self.client, "warm_up", None)
            if warm is not None:
                warm()
        except Exception as err:  # the first op will build a fresh client and find out
            LOG.info("thread %s could not warm up: %s", self.index, err)
            self._close()
            error = err
        op["done"](self.index, error)

    def handle(self, op: Op) -> None:
        if op["f"] == WARM_UP:
            self._warm_up(op)
            return
        process = op["process"]
        invoke = {"process": process, "type": "invoke", "f": op["f"], "value": op.get("value")}
        if not op.keys() <= _STAMPED:  # hints such as the drain's "seek"
            invoke.update((k, v) for k, v in op.items() if k not in _STAMPED)
        with self._lock:
            if self._stage == "abandoned":
                return
            self._stage, self._invoke = "prepare", invoke
        try:
            if self.client is None or self.client_process != process:
                self._close()
                self.client = self.factory(self.index, process)
                self.client_process = process
            self.client.prepare(op)
            plan = getattr(self.client, "plan", None)
            if plan is not None:  # the client decides what the op will do, from its state
                op = plan(op)
                invoke = {**invoke, "value": op.get("value")}
                invoke.update((k, v) for k, v in op.items() if k not in _STAMPED)
                with self._lock:
                    if self._stage == "abandoned":
                        return
                    self._invoke = invoke
        except Exception as err:  # nothing reached Kafka: the op certainly did not happen
            LOG.info("process %s could not prepare %s: %s", process, op["f"], err)
            written = self._invoked(invoke)
            if written is not None:
                done = Completed("fail", op.get("value"), f"not started: {describe(err)}")
                self._report(written, done)
            return
        written = self._invoked(invoke)
        if written is None:
            return
        try:
            done = self.client.invoke(op)
        except Exception as err:  # unknown: it may have happened
            LOG.debug("process %s: %s raised", process, op["f"], exc_info=True)
            # no value, as for an abandoned op: what it read and committed is unknown
            done = Completed("info", None, describe(err))
        self._report(written, done)

    def _invoked(self, invoke: Op) -> Op | None:
        """Write the op's invoke row; None if the interpreter has abandoned the op."""
        with self._lock:
            if self._stage == "abandoned":
                return None
            self._stage = "invoked"
            self._invoke = self.history.append(invoke)
            return self._invoke

    def _report(self, invoke: Op, done: Completed) -> None:
        with self._lock:
            if self._stage == "abandoned":  # recorded by the interpreter, thread replaced
                self._close()
                return
            completion = self.history.complete(invoke, done.type, done.value, done.error,
                                              done.fields)
            self._stage, self._invoke = "idle", None
        reset = done.reset or done.type == "info"
        if reset:
            self._close()
        self.events.put(Event(self.index, completion, reset))

    def abandon(self, timeout_s: float) -> Op | None:
        """Give up on the op in hand, past its deadline: record its completion here and
        return it, or None if it has completed meanwhile (its event is on its way). From
        now on this worker records nothing; it ends once the call it is in returns."""
        with self._lock:
            if self._stage == "idle":
                return None
            stage, invoke = self._stage, self._invoke
            self._stage, self._invoke = "abandoned", None
            assert invoke is not None
            why = f"no completion within the op timeout ({timeout_s:g} s): client replaced"
            if stage == "prepare":  # nothing reached Kafka: the op certainly did not happen
                invoke = self.history.append(invoke)
                completion = self.history.complete(invoke, "fail", invoke.get("value"),
                                                   f"not started: {why}")
            else:  # no value: what it did is unknown (HISTORY.md reads its invoke's value;
                # HISTORY-GROUPS.md an unknown read and, for its ["commit"], an unknown commit)
                completion = self.history.complete(invoke, "info", None, why)
        self.stop()
        return completion

    def _close(self) -> None:
        client, self.client, self.client_process = self.client, None, None
        if client is not None:
            try:
                client.close()
            except Exception as err:  # a broken client: nothing more to lose
                LOG.debug("closing a client of thread %s: %s", self.index, err)

    def finish(self) -> None:
        self._close()


class NemesisWorker(_Worker):
    """Applies nemesis ops, recording each as an ``invoke`` and an ``info``."""

    def __init__(
        self,
        nemesis: Nemesis | None,
        cluster: Cluster | None,
        history: HistoryWriter,
        events: queue.Queue[Event],
    ) -> None:
        super().__init__("nemesis", events)
        self.nemesis = nemesis
        self.cluster = cluster
        self.history = history

    def handle(self, op: Op) -> None:
        f, value = op["f"], op.get("value")
        self.history.nemesis_invoke(f, value)
        done_value: Any = None
        error: Any = None
        try:
            if self.nemesis is None or self.cluster is None:
                raise RuntimeError(f"no nemesis to apply {f!r}")
            result = self.nemesis.invoke(self.cluster, op)
            done_value, error = result.get("value"), result.get("error")
        except Exception as err:  # a fault that failed to apply is recorded, not fatal
            LOG.warning("nemesis %s failed: %s", f, err)
            error = describe(err)
        completion = self.history.nemesis(f, done_value, error)
        self.events.put(Event(NEMESIS, completion))
