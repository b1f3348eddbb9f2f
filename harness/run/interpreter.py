"""The interpreter: asks a generator what to do next, hands ops to workers, feeds back.

As in Jepsen, the interpreter owns the clock and the process numbers. One
thread (the caller's) runs :meth:`Interpreter.run`; worker threads run the ops
and write them to the history, and report each completion on one queue. The
interpreter then tells the generator (``gen.update``), frees the thread and,
after an ``info`` or a client reset, retires the thread's process number
(``ProcessTable.retire``) so the next op of that thread runs as a fresh process.

With ``op_timeout_s``, a client op still running that long after it was handed
over is abandoned (``ClientWorker.abandon``): recorded ``info`` at its deadline
(``fail`` if it was still being prepared), its process retired, its thread given
a fresh worker, and where its thread was stuck is logged (``harness.run.stuck``). No
phase then waits on a stuck client for more than one op timeout, and the simulator
(``harness.gen.simulate``, ``op_timeout``) does the same.

It waits on that queue rather than sleeping: until an op's scheduled time,
until a pending generator's wake time, or until a completion arrives, whichever
is first. A completion arriving before an op's time makes it ask the generator
again (the op it had may no longer be what the generator would choose).

That queue is a ``queue.Queue``, not the faster ``queue.SimpleQueue``: before
Python 3.13, ``SimpleQueue.get(timeout=t)`` whose deadline passes inside the call
(the thread preempted for more than ``t``, likely with the microsecond waits an
op due "now" asks for) waits on with a negative timeout, which means forever,
until the next put. With every worker idle there is none: a fast test's 0.5 s
loop can hang for over 10 minutes; under CPU load, 20 of 147,846 waits
of 2 µs blocked until the next put (``tests/harness/test_interpreter_waits.py``).
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from harness.base.contract import NEMESIS
from harness.base.history import Op, ProcessTable
from harness.base.history_writer import HistoryWriter
from harness.gen.core import Context, Gen, GenLike, Pending, Rng, Thread, lift
from harness.run.stuck import where
from harness.run.workers import ClientFactory, ClientWorker, Event, NemesisWorker

if TYPE_CHECKING:
    from cluster import Cluster
    from nemesis.protocol import Nemesis

LOG = logging.getLogger("insync.run")

#: Longest wait on the completion queue, so a stop request (and an op past its
#: deadline) is noticed quickly.
MAX_WAIT_S = 0.1

Observer = Callable[[Op], None]


class Interpreter:
    """Client workers, a nemesis worker, and the loop that drives them."""

    def __init__(
        self,
        *,
        history: HistoryWriter,
        concurrency: int,
        client_factory: ClientFactory,
        seed: int,
        nemesis: Nemesis | None = None,
        cluster: Cluster | None = None,
        start_ns: int,
        clock: Callable[[], int] = time.monotonic_ns,
        observers: Iterable[Observer] = (),
        op_timeout_s: float | None = None,
    ) -> None:
        self.history = history
        self.table = ProcessTable(concurrency)
        self.events: queue.Queue[Event] = queue.Queue()
        self.client_factory = client_factory
        self.clients = [
            ClientWorker(t, client_factory, history, self.events) for t in range(concurrency)
        ]
        self.op_timeout_s = op_timeout_s
        self._due: dict[int, int] = {}  # client thread → its op's deadline (clock ns)
        self._next_due = 0  # the clock (ns) at which the deadlines are next looked at
        self.abandoned = 0  # how many ops were abandoned at their deadline
        self.nemesis = NemesisWorker(nemesis, cluster, history, self.events)
        self.threads: tuple[Thread, ...] = (*range(concurrency), NEMESIS)
        self.free: set[Thread] = set(self.threads)
        self.root = Rng(seed)
        self.step = 0
        self.clock = clock
        self.start_ns = start_ns
        self.observers = list(observers)
        self._workers: dict[Thread, Any] | None = None  # thread → process, until a retire
        self._free: frozenset[Thread] | None = None  # the free threads, until one changes
        self._rng: tuple[int, Rng] = (-1, self.root)  # (step, the context's rng at that step)
        self.stopping = False  # set from outside (a signal): stop asking, finish what runs
        #: Set from another thread (``harness.run.watch``): the run cannot go on (its host
        #: failed it); the loop raises it at its next turn, within ``MAX_WAIT_S``.
        self.halted: BaseException | None = None

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        for worker in (*self.clients, self.nemesis):
            worker.start()

    def warm_up(self, timeout_s: float = 60.0) -> int:
        """Let every client worker connect (producer ids, transactions) before the clock
        starts, so a freshly started cluster's coordinator loading is not the run's first
        seconds. Returns how many warmed up in time; the others connect on their first op.
        """
        ready: queue.Queue[tuple[int, BaseException | None]] = queue.Queue()
        for worker in self.clients:
            worker.warm_up(
                self.table.process(worker.index), lambda thread, err: ready.put((thread, err))
            )
        deadline = time.monotonic() + timeout_s
        ok = 0
        for _ in self.clients:
            try:
                _, err = ready.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            ok += err is None
        return ok

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop every worker after its current op; True if all stopped within the timeout."""
        workers = (*self.clients, self.nemesis)
        for worker in workers:
            worker.stop()
        deadline = time.monotonic() + timeout_s
        return all(w.join(max(0.0, deadline - time.monotonic())) for w in workers)

    @property
    def busy(self) -> int:
        return len(self.threads) - len(self.free)

    def now(self) -> int:
        return self.clock() - self.start_ns

    def context(self) -> Context:
        """What the generator may know now. Asked several times per op, so what it is
        made of is built again only when it changes: the thread → process map after a
        retire (generators never change it), the free threads after a dispatch or a
        completion, the randomness once per question (``step``)."""
        if self._workers is None:
            workers: dict[Thread, Any] = {NEMESIS: NEMESIS}
            workers.update(self.table.snapshot().items())
            self._workers = workers
        if self._free is None:
            self._free = frozenset(self.free)
        if self._rng[0] != self.step:
            self._rng = (self.step, self.root.fork(self.step))
        return Context(self.now(), self.threads, self._free, self._workers, self._rng[1])

    # -- the loop -----------------------------------------------------------------

    def run(self, gen: GenLike, *, stop: Callable[[], bool] | None = None) -> Gen | None:
        """Run ``gen`` until it is exhausted (or ``stop()`` holds) and nothing is in flight.

        Returns the generator as it ended, having seen every completion, including
        those of ops still in flight when it stopped giving ops: the runner takes
        the phases still to come from it (``harness.gen.plan.Ahead``).
        """
        g: Gen | None = lift(gen)
        asking = g is not None
        while True:
            if self.halted is not None:
                raise self.halted
            g = self._take_events(g)
            if self._due and self.clock() >= self._next_due:
                g = self._expire(g)
            if asking and (self.stopping or (stop is not None and stop())):
                asking = False
            if not asking or g is None:
                if not self.busy:
                    return g
                g = self._wait(g, MAX_WAIT_S)
                continue
            ctx = self.context()
            self.step += 1
            answer = g.op(ctx)
            if answer is None:
                asking = False
                continue
            x, nxt = answer
            if isinstance(x, Pending):
                g = nxt
                wake = MAX_WAIT_S if x.wake is None else (x.wake - self.now()) / 1e9
                g = self._wait(g, min(MAX_WAIT_S, wake))
                continue
            due = (x["time"] - self.now()) / 1e9
            if due > 0:
                event = self._get(min(MAX_WAIT_S, due))
                if event is not None or due > MAX_WAIT_S:
                    if event is not None:
                        g = self._complete(g, event)
                    continue  # ask again: the answer may differ now
            g = self._dispatch(x, nxt)

    def _dispatch(self, op: Op, nxt: Gen | None) -> Gen | None:
        process = op["process"]
        thread: Thread = NEMESIS if process == NEMESIS else self.table.thread_of(process)
        if thread not in self.free or (
            thread != NEMESIS and self.table.process(int(thread)) != process
        ):
            raise RuntimeError(
                f"the generator chose process {process!r}, which is busy or retired: {op}"
            )
        self.free.discard(thread)
        self._free = None
        g = None if nxt is None else nxt.update(self.context(), op)
        if thread == NEMESIS:
            self.nemesis.submit(op)
        else:
            if self.op_timeout_s is not None:
                self._due[int(thread)] = self.clock() + round(self.op_timeout_s * 1e9)
            self.clients[int(thread)].submit(op)
        return g

    def _expire(self, g: Gen | None) -> Gen | None:
        """Abandon every client op past its deadline (see ``ClientWorker.abandon``)."""
        now = self.clock()
        self._next_due = now + round(MAX_WAIT_S * 1e9)
        assert self.op_timeout_s is not None
        for thread, due in list(self._due.items()):
            if now < due:
                continue
            stuck = where(self.clients[thread].thread)  # read while it is still in the call
            completion = self.clients[thread].abandon(self.op_timeout_s)
            if completion is None:
                continue  # it completed meanwhile, or has not begun: its event decides
            LOG.info("thread %s: %s %s abandoned after %g s, %s", thread, completion["f"],
                     completion["process"], self.op_timeout_s, stuck)
            self.abandoned += 1
            worker = ClientWorker(thread, self.client_factory, self.history, self.events)
            worker.start()
            self.clients[thread] = worker
            g = self._complete(g, Event(thread, completion, reset=True))
        return g

    def _get(self, timeout_s: float) -> Event | None:
        try:
            return self.events.get(timeout=max(0.0, timeout_s))
        except queue.Empty:
            return None

    def _wait(self, g: Gen | None, timeout_s: float) -> Gen | None:
        event = self._get(timeout_s)
        return g if event is None else self._complete(g, event)

    def _take_events(self, g: Gen | None) -> Gen | None:
        events = self.events
        while not events.empty():  # not get_nowait(): its Empty costs a raise per question
            g = self._complete(g, events.get())  # only this thread takes from the queue
        return g

    def _complete(self, g: Gen | None, event: Event) -> Gen | None:
        if g is not None:
            g = g.update(self.context(), event.op)
        for observe in self.observers:
            observe(event.op)
        self.free.add(event.thread)
        self._free = None
        if event.thread != NEMESIS:
            self._due.pop(int(event.thread), None)
        if event.thread != NEMESIS and event.reset:
            self.table.retire(int(event.thread))
            self._workers = None
        return g
