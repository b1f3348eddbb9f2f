"""What the runner needs from a workload, as one record.

As in Jepsen, a workload is a bundle: a client, a generator, a final
generator and a checker. insync's also carries what ``insync run`` must know
to take it on without naming it: the options it adds to the run's one
``OPTIONS`` table, how it checks and completes them, its block of
``test.json``, what a run must prepare on the cluster (its topics), and how
the runner tells that the final drain has read everything back.

The runner (a floor above) finds a workload in ``workloads.WORKLOADS`` by
``--workload`` and uses only this record:

* :class:`RunEnv`: what a run hands its workload (where Kafka is, a token
  unique to the run, the topics' durability settings);
* :class:`WorkloadRun`: the workload within one run; ``setup`` before the
  clients start, a client per process, ``teardown`` at the end;
* :class:`DrainTracker`: fed every completion, says when the drain is done
  (with :class:`EndOffsets`, an optional power, also when it read every key to its end);
* :class:`CheckerSpec`: which checker judges the history, with what options.

The settings ``S`` a workload's functions take is its own frozen dataclass
of options; the run's options inherit every registered workload's, so the
runner passes them whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from harness.base.history import Op
from harness.base.values import Spec
from harness.gen.core import GenLike
from workloads.client import Client

if TYPE_CHECKING:
    from cluster.versions import KafkaVersion

S = TypeVar("S")


@dataclass(frozen=True)
class RunEnv:
    """What a run gives its workload, beyond the workload's own options.

    ``token`` is unique to the run: prefix topic names, consumer group and
    transactional ids with it, so a reused cluster never mixes two runs.
    ``topic_config`` holds the run's durability settings of every topic the
    workload creates (``min.insync.replicas``, ``unclean.leader.election.enable``).
    """

    bootstrap: str
    token: str
    seed: int
    replication_factor: int
    topic_config: Mapping[str, str] = field(default_factory=dict)

    @property
    def topic_prefix(self) -> str:
        """What the run's topic names start with: the history's ``t0`` is ``<prefix>t0``
        on the cluster (the nemesis maps its targets and waits back through it)."""
        return f"{self.token}-"


class WorkloadRun(Protocol):
    """One run's instance of a workload: what it made on the cluster, and its clients."""

    def setup(self) -> None:
        """Prepare the cluster before any client starts (create the first topics)."""
        ...

    def client(self, thread: int, process: int) -> Client:
        """A fresh client for ``process`` on worker ``thread`` (called from that thread)."""
        ...

    def teardown(self) -> None:
        """Remove what this run made on a cluster that stays (its topics); best effort."""
        ...


@runtime_checkable
class ReplicaKeys(Protocol):
    """An optional power of a ``WorkloadRun``: partitions whose replicas the runner reads
    and compares after the run (``checkers.replicas``), before the topics go."""

    def replica_keys(self) -> dict[str, tuple[str, int]]:
        """Key (as the history names it) -> the real topic and partition."""
        ...


@runtime_checkable
class OpTimeout(Protocol):
    """An optional power of a ``WorkloadRun``: how long one client op may take. The
    interpreter abandons an op still running that long after it began (``info``, the
    thread's client replaced: ``harness.run.workers``), so no stuck client holds a phase."""

    @property
    def op_timeout_s(self) -> float:
        ...


class EndOffsetReader(Protocol):
    """Looks up where keys' logs end now; used from one thread, closed when done."""

    def ends(self, keys: Collection[str]) -> dict[str, int | None]:
        """Key -> its end offset (the offset the next record would take) as a consumer
        sees it; None where it cannot be told now (no leader, a timeout)."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class EndOffsets(Protocol):
    """An optional power of a ``WorkloadRun``: the end offsets of its keys, so the drain
    can stop once it has read every key to its end instead of waiting out its time
    limit for values no consumer can read (``harness.run.drain_end``)."""

    def end_offset_reader(self) -> EndOffsetReader:
        ...


class DrainTracker(Protocol):
    """When the final drain has read back everything it must: a value, fed every completion."""

    def observe(self, op: Op) -> DrainTracker:
        """The tracker after one more completion (client or nemesis)."""
        ...

    def reread(self) -> DrainTracker:
        """The tracker for the drain itself: from now on only the drain's reads count."""
        ...

    @property
    def complete(self) -> bool:
        """Whether the drain may stop now."""
        ...

    def unread_count(self) -> int:
        """How many things the drain has still to read (for the summary)."""
        ...

    def unread_keys(self) -> Collection[str]:
        """The keys the drain has still to read something of."""
        ...

    @property
    def reads(self) -> int:
        """How many completions so far returned records (whether the drain still reads)."""
        ...

    def read_to(self, ends: Mapping[str, int | None]) -> bool:
        """Whether every key in ``unread_keys`` has been read up to its end offset in
        ``ends`` (a key missing or None there: no)."""
        ...


@dataclass(frozen=True)
class CheckerSpec:
    """Which checker judges the workload's histories, and with what keyword options.

    ``name`` is a key of the runner's table of checkers: a workload names its
    checker rather than importing it, because ``workloads`` and ``checkers``
    share a floor with no arrow between them (ARCHITECTURE.md).
    ``"history"`` is ``checkers.check_file``, the checker of docs/HISTORY.md.
    """

    name: str = "history"
    options: Mapping[str, Any] = field(default_factory=dict)


def _accept(settings: Any, version: KafkaVersion) -> None:
    """No combination of options to refuse."""


def _nothing_automatic(settings: Any, version: KafkaVersion) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Workload(Generic[S]):
    """A workload: everything ``insync run`` needs to run it, and nothing it must know.

    ``options``: its rows of the run's ``OPTIONS`` table (flags, run.toml keys,
    replay); each row's field, with its default, is in ``settings`` (``S``).
    ``validate`` refuses bad combinations of them (a ``UsageError`` line);
    ``automatic`` decides the values left to it (``resolved()`` records them);
    both are given the brokers' :class:`~cluster.versions.KafkaVersion`, so a
    client feature the version lacks is off by default and refused when asked;
    ``name_parts`` spell the default test name; ``block`` is its part of
    ``test.json``'s ``workload`` block. ``generator`` and ``final_generator``
    are pure (``harness.gen``); ``tracker`` is a fresh :class:`DrainTracker`;
    ``open`` makes its :class:`WorkloadRun` (no I/O until ``setup``).
    """

    name: str
    settings: type[S]
    options: tuple[Spec, ...]
    open: Callable[[RunEnv, S], WorkloadRun]
    generator: Callable[[S], GenLike]
    final_generator: Callable[[S], GenLike]
    tracker: Callable[[], DrainTracker]
    block: Callable[[S], dict[str, Any]]
    name_parts: Callable[[S], list[str]]
    checker: CheckerSpec = CheckerSpec()
    validate: Callable[[S, KafkaVersion], None] = _accept
    automatic: Callable[[S, KafkaVersion], dict[str, Any]] = _nothing_automatic
