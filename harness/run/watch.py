"""The host watch: a run stops with one line when its own host fails it.

A run depends on more than Kafka: the history's disk, and the nodes the
provisioner made (containers on the local engine, hosts over SSH). When one of
those fails mid-run, going on would only produce ops that fail for the
harness's reasons, and a fault nobody injected or recorded (a node container
removed, every container killed by an engine restart) would be judged as
Kafka's doing. So one thread looks, while the phases run:

- every :data:`HISTORY_EVERY_S`, whether the history writer has failed (a full
  disk: ``HistoryWriter.failed``);
- every :data:`NODES_EVERY_S`, whether each node still answers
  (``cluster.remote.Reachable``: one container inspect per node, or ``true``
  over SSH); a node counts as lost after :data:`MISSES` answers in a row that
  say so, so one slow answer on a loaded machine stops nothing.

The first failure found halts the interpreter (``Interpreter.halted``) with a
:class:`HostFault`: the main thread raises it at its next turn, and the runner
unwinds as for any error (faults healed on the nodes still there, logs
collected, ``--teardown`` honoured). The drain did not finish, so the verdict
is ``unknown`` unless the history already proves the run invalid
(``harness.base.drain``); the history so far is kept and ``insync check``
judges it the same way.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from cluster.remote import Reachable
from harness.base.errors import EnvironmentProblem

if TYPE_CHECKING:
    from cluster.model import Cluster

LOG = logging.getLogger("insync.run")

#: How often the history writer's state is looked at (a flag: costs nothing).
HISTORY_EVERY_S = 1.0
#: How often every node is asked whether it still answers.
NODES_EVERY_S = 5.0
#: Answers in a row saying a node is lost before the run stops.
MISSES = 2
#: How long one node's answer may take.
PROBE_TIMEOUT_S = 20.0
#: After nodes were lost, how long cleanup waits for an engine that does not answer.
ENGINE_BACK_S = 90.0
RETRY_S = 5.0
T = TypeVar("T")


class HostFault(EnvironmentProblem):
    """The run's own host failed it: a node lost to the harness, or the history's disk.

    ``lost`` names the nodes that can no longer be reached, so cleanup does not
    try to heal or read them."""

    def __init__(self, message: str, lost: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.lost = lost


class Halts(Protocol):
    """What the watch stops: ``harness.run.interpreter.Interpreter``."""

    halted: BaseException | None


class Writes(Protocol):
    """What the watch reads of the history: ``harness.base.history_writer.HistoryWriter``."""

    failed: OSError | None


def history_fault(history: Writes, path: object) -> HostFault | None:
    """A ``HostFault`` if the history can no longer be written, else None."""
    err = history.failed
    if err is None:
        return None
    why = err.strerror or str(err)
    return HostFault(f"the history can no longer be written ({why}: {path}); "
                     "the lines written so far are kept")


@dataclass
class NodeProbe:
    """Each node's run of answers saying it is lost; a fault once one reaches ``misses``."""

    nodes: Mapping[str, object]  # node name -> its Remote
    misses: int = MISSES
    timeout_s: float = PROBE_TIMEOUT_S
    _missed: dict[str, int] = field(default_factory=dict)

    def look(self) -> HostFault | None:
        lost: dict[str, str] = {}
        for name, remote in self.nodes.items():
            if not isinstance(remote, Reachable):
                continue
            why = remote.unreachable(self.timeout_s)
            self._missed[name] = 0 if why is None else self._missed.get(name, 0) + 1
            if why is not None:
                LOG.warning("node %s: %s (%d in a row)", name, why, self._missed[name])
                if self._missed[name] >= self.misses:
                    lost[name] = why
        if not lost:
            return None
        by_why: dict[str, list[str]] = {}
        for name, why in lost.items():  # an engine gone loses every node for one reason
            by_why.setdefault(why, []).append(name)
        said = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_why.items())
        return HostFault(f"lost node(s) outside insync's faults: {said}", tuple(lost))


@dataclass
class HostWatch:
    """The thread that looks (see the module docstring); ``stop`` ends it."""

    target: Halts
    history: Writes
    history_path: object
    nodes: NodeProbe | None
    clock: Callable[[], float] = time.monotonic
    fault: HostFault | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="host-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=PROBE_TIMEOUT_S + 5)

    def end(self, cluster: Cluster | None) -> Cluster | None:
        """Stop watching; ``cluster`` without the nodes found lost: cleanup has no fault
        to heal and no log to read there, and the run's one line already says why."""
        self.stop()
        fault = self.fault
        if fault is None or not fault.lost or cluster is None:
            return cluster
        kept = {n: node for n, node in cluster.nodes.items() if n not in fault.lost}
        return replace(cluster, nodes=kept)

    def retried(self, step: Callable[[], T], say: Callable[[str], None]) -> T:
        """``step``, tried again for up to :data:`ENGINE_BACK_S` while no engine answers
        (``EnvironmentProblem``), when the run stopped because its nodes were lost: an
        engine that restarts is back within seconds, and removing the cluster then
        leaves nothing behind. Any other failure, or a fault of another kind, raises."""
        give_up = self.clock() + (ENGINE_BACK_S if self.fault and self.fault.lost else 0)
        for attempt in itertools.count():
            try:
                return step()
            except EnvironmentProblem as err:
                if self.clock() >= give_up:
                    raise
                LOG.info("waiting for the engine: %s", err)
                if attempt == 0:
                    say("waiting for the Docker engine to answer, to remove the cluster")
                time.sleep(RETRY_S)
        raise AssertionError("unreachable")  # itertools.count() never ends

    def look(self, *, nodes: bool) -> HostFault | None:
        """One look; halts the target on the first fault found (and remembers it)."""
        fault = history_fault(self.history, self.history_path)
        if fault is None and nodes and self.nodes is not None:
            fault = self.nodes.look()
        if fault is not None and self.fault is None:
            self.fault = fault
            LOG.error("host fault: %s", fault.message)
            self.target.halted = fault
        return fault

    def _loop(self) -> None:
        next_nodes = self.clock() + NODES_EVERY_S
        while not self._stop.wait(HISTORY_EVERY_S):
            due = self.clock() >= next_nodes
            if due:
                next_nodes = self.clock() + NODES_EVERY_S
            try:
                if self.look(nodes=due) is not None:
                    return
            except Exception as err:  # a probe's own bug must not end the run
                LOG.warning("host watch: %s", err, exc_info=True)


def watch_host(target: Halts, history: Writes, history_path: object,
               cluster: Cluster | None) -> HostWatch:
    """Start watching the history and ``cluster``'s nodes for the run ``target`` drives."""
    nodes = None if cluster is None else NodeProbe(
        {name: node.remote for name, node in cluster.nodes.items()})
    watch = HostWatch(target, history, history_path, nodes)
    watch.start()
    return watch
