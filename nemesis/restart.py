"""A controlled restart of brokers, one at a time, as an operator's runbook does it.

An operator restarts a broker for a config change or an upgrade: SIGTERM,
which makes Kafka shut down cleanly (in KRaft and ZooKeeper mode alike the
broker first asks the controller to move its leaderships away: *controlled
shutdown*), wait for the JVM to exit, start it again, and before touching the
next broker wait until every partition's ISR is whole again, so that no two
brokers are ever out of it at once. That last wait is bounded
(``isr-timeout-s``, 180 s): when the ISR does not come back in time the restart
stops there, as a runbook says to, and the nodes it did not reach are
recorded as not restarted (``not-restarted``, ``stopped-because``): the
runbook's outcome, not an ``error`` of the nemesis. ``duration-s`` is the whole
operation's: reports count the operation in force from its invoke (the
restart *is* the fault while it runs; ``results.coverage``).

These are the leadership changes a production cluster sees most, and planned:
KAFKA-20554 loses acks=1 records on them. Each step is recorded with what it
really did and how long it took::

    {"target": "all", "nodes": ["n1", "n2", "n3"], "duration-s": 41.2,
     "steps": [{"node": "n1", "stopped-pid": 412, "stop-s": 2.1, "clean": true,
                "started-pid": 977, "start-s": 0.3, "isr-whole": true, "isr-s": 6.4}, ...]}

A broker found paused or down (another fault's doing) is not restarted
(``skipped``: node -> state); a broker that outlives ``stop-timeout-s`` after
SIGTERM is SIGKILLed (``"clean": false``) and the op's ``error`` says so.
``end-restart`` starts any broker a failed restart left down, except those a
``kill`` or ``power-loss`` keeps down (the run's ledger).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cluster.daemon import RUNNING
from harness.base.errors import ClusterError
from nemesis.errors import TeardownIncomplete
from nemesis.nodes import Resolver, completion, on_nodes, on_nodes_timed
from nemesis.polling import Poller

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode
    from nemesis.targets import Facts

START, STOP = "restart", "end-restart"
#: What a rolling upgrade does to a broker between its stop and its start (write its
#: config, switch its build): the fields it returns go into the node's step.
Swap = Callable[["KafkaNode"], dict[str, Any]]
#: Seconds a broker may take to exit after SIGTERM (a controlled shutdown moves its
#: leaderships first; Kafka's own ``controlled.shutdown`` retries take up to ~15 s).
STOP_TIMEOUT_S = 120.0
#: Seconds to wait for the ISR of every workload partition to be whole after a start
#: (on a loaded 2-core Docker host a restarted 4.1.2 broker took ~90 s to register again).
ISR_TIMEOUT_S = 180.0
#: At most this many of the gaps still open at the timeout are recorded (and the count).
GAPS_SHOWN = 8


def settings(value: Any) -> tuple[Any, float, float]:
    """(target, stop timeout, ISR timeout) of a restart's value: a target, or a table."""
    if isinstance(value, Mapping):
        return (value.get("target", "one"), float(value.get("stop-timeout-s", STOP_TIMEOUT_S)),
                float(value.get("isr-timeout-s", ISR_TIMEOUT_S)))
    return ("one" if value is None else value), STOP_TIMEOUT_S, ISR_TIMEOUT_S


def isr_gaps(facts: Facts, node: str) -> list[str]:
    """What keeps the cluster from being whole after ``node`` restarted: the node not
    registered yet, and every workload partition whose ISR lacks one of its replicas."""
    gaps = []
    if facts.brokers is not None and node not in facts.brokers():
        gaps.append(f"broker {node}")
    for key, p in sorted(facts.partitions().items()):
        out = [r for r in p.replicas if r not in p.isr]
        if out:
            gaps.append(f"{key} isr lacks {','.join(out)}")
    return gaps


@dataclass
class Rolled:
    """What a rolling restart did: the steps of the nodes it restarted, the nodes it found
    paused or down, what went wrong, and where and why it stopped."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    left: list[str] = field(default_factory=list)
    stopped: str = ""

    def record(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value`` with ``skipped``, ``not-restarted`` and ``stopped-because`` added."""
        if self.skipped:
            value["skipped"] = self.skipped
        if self.left:
            value["not-restarted"] = self.left
            value["stopped-because"] = self.stopped
        return value

    @property
    def whole(self) -> bool:
        """Every node was restarted, and every restart went right."""
        return not (self.skipped or self.left or self.errors)


class RestartNemesis:
    """``restart`` restarts the target's brokers one at a time; ``end-restart`` starts
    what a failed restart left down."""

    def __init__(self, resolver: Resolver | None = None, poller: Poller | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.resolver = resolver or Resolver()
        self.poller = poller or Poller()
        self.clock = clock

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        self.teardown(cluster)

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == STOP:
            return self._heal(cluster)
        target, stop_s, isr_s = settings(op.get("value"))
        began = self.clock()
        try:
            names = self.resolver.nodes(cluster, target)
        except Exception as err:  # metadata unavailable, bad target: recorded
            return completion({"target": target}, f"{type(err).__name__}: {err}")
        rolled = self.roll(cluster, names, stop_s, isr_s)
        value: dict[str, Any] = {"target": target, "nodes": names, "steps": rolled.steps,
                                 "duration-s": round(self.clock() - began, 2)}
        return completion(rolled.record(value), rolled.errors)

    def roll(self, cluster: Cluster, names: Sequence[str], stop_s: float, isr_s: float,
             swap: Swap | None = None) -> Rolled:
        """Restart ``names`` one at a time (``swap`` each between its stop and its start),
        stopping at the first whose ISR does not come back or that went wrong."""
        rolled = Rolled()
        for i, name in enumerate(names):
            step, state, error = self._one(cluster, cluster.nodes[name], stop_s, isr_s, swap)
            if state is not None:
                rolled.skipped[name] = state
                continue
            rolled.steps.append(step)
            if error:
                rolled.errors[name] = error
            if error or not step.get("isr-whole", True):
                rolled.stopped = error or f"{name}: ISR not whole {isr_s:g} s after its restart"
                rolled.left = list(names[i + 1:])
                break
        return rolled

    def _one(self, cluster: Cluster, node: KafkaNode, stop_s: float, isr_s: float,
             swap: Swap | None) -> tuple[dict[str, Any], str | None, str]:
        """Restart one broker: (its step, the state it was left in when not running,
        what went wrong: empty when the step was whole)."""
        step: dict[str, Any] = {"node": node.name}
        t0 = self.clock()
        error = ""
        try:
            state, pid = node.broker.signal_if("TERM", RUNNING, reap_s=stop_s)
            if pid is None:
                return step, state, ""
            step.update({"stopped-pid": pid, "clean": True})
        except ClusterError as err:  # outlived the SIGTERM: an operator kills it
            _, pid = node.kill_if_up()
            step.update({"stopped-pid": pid, "clean": False})
            error = f"did not exit within {stop_s:g} s of SIGTERM: SIGKILLed ({err})"
        t1 = self.clock()
        step["stop-s"] = round(t1 - t0, 2)
        if swap is not None:
            try:
                step.update(swap(node))
            except Exception as err:  # started on what it had; the roll stops here
                error = error or f"did not switch builds: {type(err).__name__}: {err}"
            t1 = self.clock()
        try:
            _, started = node.start_if_down()
        except Exception as err:  # recorded; the heal starts it again
            step["start-s"] = round(self.clock() - t1, 2)
            return step, None, f"did not start: {type(err).__name__}: {err}"
        t2 = self.clock()
        step.update({"started-pid": started, "start-s": round(t2 - t1, 2)})
        facts = self.resolver.facts(cluster)

        def look() -> list[str]:
            try:
                return isr_gaps(facts, node.name)
            except Exception as err:  # metadata unavailable while it comes back
                return [f"metadata: {type(err).__name__}: {err}"]

        polled = self.poller.until(look, lambda gaps: not gaps, isr_s)
        step.update({"isr-whole": polled.held, "isr-s": polled.seconds})
        if not polled.held:  # the runbook's outcome, not a failure of the nemesis
            step["isr-missing"] = polled.last[:GAPS_SHOWN]
            step["isr-missing-count"] = len(polled.last)
        return step, None, error

    def _heal(self, cluster: Cluster) -> dict[str, Any]:
        return self.start_left_down(cluster)

    def start_left_down(self, cluster: Cluster) -> dict[str, Any]:
        """Start every broker left down but those a ``kill`` or ``power-loss`` keeps down."""
        kept = self.resolver.in_force.state.killed
        names = [n for n in cluster.nodes if n not in kept]
        landed = on_nodes_timed(lambda n: n.start_if_down(), cluster, names)
        started = {n: pid for n, (_, pid) in sorted(landed.results.items()) if pid is not None}
        return completion(landed.recorded({"started": started}, started), landed.errors)

    def teardown(self, cluster: Cluster) -> None:
        """Nothing a restart leaves is a fault of its own: a broker it left down is
        started by ``end-restart`` or by the ``kill`` kind's teardown; here only those
        the ledger does not keep down."""
        kept = self.resolver.in_force.state.killed
        _, errors = on_nodes(lambda n: n.start_if_down(), cluster,
                             [n for n in cluster.nodes if n not in kept])
        if errors:
            raise TeardownIncomplete({f"end-restart {n}": e for n, e in errors.items()})
