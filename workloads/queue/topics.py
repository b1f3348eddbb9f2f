"""Topics for the queue workload's keys, created as the generator asks for them.

The generator names keys ``t<N>-<partition>`` and keeps opening new ones as old
ones use up their write budget, so the set of topics is not known up front.
Brokers run with ``auto.create.topics.enable=false`` (an auto-created topic
would get the broker's defaults, not the run's replication settings), so insync
creates each topic itself, with the run's ``--replication-factor``,
``min.insync.replicas`` and ``unclean.leader.election.enable``, the first time a
key in it appears, and the next ``lookahead`` topics in the background so a
client rarely waits.

Each run prefixes its topic names (``<prefix>t0``) so a reused cluster never
shows one run the records of another: keys in the history stay ``t0-1``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from time import monotonic
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from harness.base.contract import parse_key

LOG = logging.getLogger("insync.topics")
#: Creation errors worth asking again for, through a fresh admin client.
_ASK_AGAIN = frozenset({KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT,
                        KafkaError.NOT_CONTROLLER, KafkaError._TRANSPORT,
                        KafkaError._DESTROY})


def topic_number(topic: str) -> int:
    """``"t12"`` → 12."""
    if not topic.startswith("t") or not topic[1:].isdigit():
        raise ValueError(f"not a workload topic: {topic!r}")
    return int(topic[1:])


class Topics:
    """Creates the run's topics on demand; thread-safe (every worker calls ``ensure``)."""

    def __init__(
        self,
        admin: Callable[[], AdminClient],
        *,
        prefix: str,
        partitions: int,
        replication_factor: int,
        config: Mapping[str, str],
        lookahead: int = 4,
        timeout_s: float = 30.0,
        ask_s: float = 5.0,
        refused_s: float = 1.0,
    ) -> None:
        self._admin_factory = admin
        self._admin: AdminClient | None = None
        self.prefix = prefix
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.config = dict(config)
        self.lookahead = lookahead
        self.timeout_s = timeout_s
        self.ask_s = ask_s  # one creation request's answer, before asking again
        self._lock = threading.Lock()
        self._futures: dict[int, Future[Any]] = {}
        self._released: list[object] = []  # clients to let go of, on a thread of ours
        self._asked_by: dict[int, int] = {}  # id() of the client each request went through
        self._ready: set[int] = set()
        self._ahead_at = 0.0  # when the lookahead topics may next be looked at
        self.refused_s = refused_s  # how long a refusal stands for later calls
        self._refused: dict[int, tuple[float, KafkaException]] = {}  # until when, and why
        self._warm_up: Future[Any] | None = None
        self._real: dict[str, tuple[str, int]] = {}  # key → real topic and partition
        self._keys: dict[tuple[str, int], str] = {}  # real topic and partition → key

    def name(self, topic: str) -> str:
        """The real topic name of a workload topic (``t3`` → ``<prefix>t3``)."""
        return self.prefix + topic

    def real(self, key: str) -> tuple[str, int]:
        """The real topic and partition of a key (remembered: asked for every record sent)."""
        real = self._real.get(key)
        if real is None:
            topic, partition = parse_key(key)
            real = self._real[key] = (self.name(topic), partition)
        return real

    def key(self, real_topic: str, partition: int) -> str:
        """The key a record of ``real_topic`` / ``partition`` belongs to (remembered: asked
        for every record read)."""
        key = self._keys.get((real_topic, partition))
        if key is None:
            key = self._keys[(real_topic, partition)] = (
                f"{real_topic.removeprefix(self.prefix)}-{partition}")
        return key

    def ensure_keys(self, keys: Iterable[str]) -> None:
        """Return once every topic ``keys`` name exists (creating it if needed)."""
        for n in sorted({topic_number(parse_key(k)[0]) for k in keys}):
            self.ensure(n)

    def ensure(self, n: int) -> None:
        """Return once topic ``n`` exists, asking again while :attr:`timeout_s` lasts.

        Each request may wait :attr:`ask_s` for an answer; one that timed out, or met a
        moved or absent controller, is asked again through a fresh admin client (asking
        twice is harmless: an existing topic is success). After every broker had been
        down at once, the run's admin client kept answering "Failed while waiting for
        controller" until its request timed out, well after the cluster was back (0.10.2
        and 4.1 catalogue runs, 2026-11-23): every client thread blocked in topic
        creation for up to 30 s, and the main phase wrote nothing after recovery.
        Other refusals (no broker to hold a replica) end the op at once, and for
        :attr:`refused_s` every later call for that topic ends with the same refusal
        without asking: a key whose topic cannot be made while a broker is down is
        written by one thread, whose refused sends come back at once, and each had
        asked again (a 2.8 controller-failover run: about 230 refusals a second, each a
        CreateTopics request to a controller busy recovering).
        """
        if n in self._ready:
            self._keep_ahead(n)
            return
        refused = self._refused.get(n)
        if refused is not None and monotonic() < refused[0]:
            raise refused[1]
        deadline = monotonic() + self.timeout_s
        future = self._request(n)  # held: a failed attempt elsewhere may drop the entry
        for ahead in range(n + 1, n + self.lookahead + 1):
            self._request(ahead)
        while True:
            try:
                future.result(timeout=max(0.0, deadline - monotonic()) + self.ask_s)
            except KafkaException as err:
                if self._settle(n, future, err):
                    return  # it was there already
                if _code(err) not in _ASK_AGAIN:
                    self._refused[n] = (monotonic() + self.refused_s, err)
                    raise
                if monotonic() >= deadline:
                    raise
                LOG.info("creating topic %s: %s; asking again", self.name(f"t{n}"), err)
                future = self._request(n)
            else:
                self._settle(n, future, None)
                return

    def _settle(self, n: int, future: Future[Any], error: BaseException | None) -> bool:
        """Note how the creation of topic ``n`` ended (``error``: None if it succeeded):
        made, or there already, is ready (True); anything else is dropped so that the
        next call asks again, through a fresh admin client after a timeout or a moved
        controller (False)."""
        if error is None or _code(error) == KafkaError.TOPIC_ALREADY_EXISTS:
            with self._lock:
                self._ready.add(n)
            return True
        self._forget(n, future, fresh_client=_code(error) in _ASK_AGAIN)
        return False

    def _keep_ahead(self, n: int) -> None:
        """Ask again, at most once per :attr:`ask_s`, for each of the ``lookahead`` topics
        after ``n`` whose creation failed. Asked for once, a lookahead topic refused while a
        broker was down (replication factor 3 on two brokers) stayed uncreated until a key
        needed it, so the next fault found no topic in reserve: a 2.8 controller-failover
        run's fresh keys were refused for 34 s, its old keys stalled."""
        now = monotonic()
        if now < self._ahead_at:
            return
        self._ahead_at = now + self.ask_s
        for ahead in range(n + 1, n + self.lookahead + 1):
            future = self._futures.get(ahead)
            if ahead in self._ready or future is None or not future.done():
                continue
            if not self._settle(ahead, future, future.exception()):
                self._request(ahead)

    def _forget(self, n: int, future: Future[Any], *, fresh_client: bool) -> None:
        """Drop a failed creation of topic ``n`` (the next call asks again), unless another
        thread already did; with ``fresh_client``, the admin client that asked for it too.
        Not for a plain refusal: a cluster short of brokers refused hundreds of creations
        a second (0.10.2, INVALID_REPLICATION_FACTOR), each a new client had it been
        replaced. A replaced client stays alive while any of its requests is pending:
        each of its futures holds it (:meth:`_request`)."""
        with self._lock:
            if self._futures.get(n) is future:
                del self._futures[n]
                asked_by = self._asked_by.pop(n, None)
                if fresh_client and asked_by == id(self._admin):  # not replaced already
                    self._admin = None

    def warm_up_topic(self) -> str:
        """A one-partition topic for connecting clients before the run (not a key)."""
        name = self.name("warmup")
        with self._lock:
            if self._warm_up is None:
                if self._admin is None:
                    self._admin = self._admin_factory()
                topic = NewTopic(
                    name,
                    num_partitions=1,
                    replication_factor=self.replication_factor,
                    config=dict(self.config),
                )
                self._warm_up = self._admin.create_topics([topic], request_timeout=self.timeout_s)[
                    name
                ]
            future = self._warm_up
        try:
            future.result(timeout=self.timeout_s)
        except KafkaException as err:
            kerr = err.args[0] if err.args else None
            if not (
                isinstance(kerr, KafkaError) and kerr.code() == KafkaError.TOPIC_ALREADY_EXISTS
            ):
                raise
        return name

    def _request(self, n: int) -> Future[Any]:
        """The creation of topic ``n``, asked for now unless it already was."""
        with self._lock:
            self._released.clear()  # replaced clients whose requests are answered: here,
            # on a worker's thread, never on librdkafka's (``_Holding``)
            if n in self._futures:
                return self._futures[n]
            if self._admin is None:
                self._admin = self._admin_factory()
            topic = NewTopic(
                self.name(f"t{n}"),
                num_partitions=self.partitions,
                replication_factor=self.replication_factor,
                config=dict(self.config),
            )
            admin = self._admin
            future = admin.create_topics([topic], request_timeout=self.ask_s)[topic.topic]
            # A collected client fails whatever it still has in flight: a client replaced
            # after a failure lives until each of its requests has an answer.
            future.add_done_callback(_Holding(admin, self._released))
            self._futures[n] = future
            self._asked_by[n] = id(admin)
            LOG.debug("creating topic %s", topic.topic)
            return self._futures[n]

    @property
    def created(self) -> list[str]:
        """Real names of every topic this run asked for."""
        with self._lock:
            names = [self.name(f"t{n}") for n in sorted(self._futures)]
            return names + ([self.name("warmup")] if self._warm_up is not None else [])

    def delete_all(self, timeout_s: float = 30.0, attempts: int = 2) -> None:
        """Delete the run's topics (a reused cluster should not fill up); best effort.

        Each attempt asks through a fresh admin client: the run's own one may still name
        the controller a fault script moved (0.10.2 answered every delete of five runs
        with ``NOT_CONTROLLER``, and the topics of every earlier run stayed on the
        reused cluster, each broker restart recovering all of them). A topic whose
        deletion failed is asked for again, once by default."""
        names = self.created
        for attempt in range(attempts):
            if not names:
                return
            admin = self._admin_factory()  # held until every answer is in: a client
            # collected mid-request fails all of them ("_DESTROY: Handle is terminating")
            futures = admin.delete_topics(names, request_timeout=timeout_s)
            failed: list[str] = []
            for name, future in futures.items():
                try:
                    future.result(timeout=timeout_s)
                except Exception as err:  # the run is over: say what is left behind
                    if attempt and _code(err) == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        continue  # the earlier attempt's deletion went through after all
                    last = attempt == attempts - 1
                    LOG.log(logging.WARNING if last else logging.INFO,
                            "could not delete topic %s%s: %s", name,
                            "" if last else " (asking again)", err)
                    failed.append(name)
            del admin
            names = failed


def _code(err: BaseException) -> object:
    """The Kafka error code ``err`` carries, if it is a ``KafkaException``."""
    kerr = err.args[0] if isinstance(err, KafkaException) and err.args else None
    return kerr.code() if isinstance(kerr, KafkaError) else None


class _Holding:
    """A done-callback that keeps ``client`` alive until the future is done, then hands it
    to ``released`` (a future keeps its callbacks: holding on would keep every replaced
    client). It must not drop the reference itself: it runs on librdkafka's own thread,
    and a client destroyed there aborts the process ("calling rd_kafka_destroy() from
    librdkafka owned thread is prohibited", a 0.11.0 catalogue run, 2026-11-23).
    ``released`` is emptied by the workers' own threads (:meth:`Topics._request`)."""

    def __init__(self, client: object, released: list[object]) -> None:
        self.client: object | None = client
        self.released = released

    def __call__(self, _done: Future[Any]) -> None:
        if self.client is not None:
            self.released.append(self.client)  # list.append: atomic under the GIL
            self.client = None
