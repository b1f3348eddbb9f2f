"""Process faults on the broker JVM: SIGKILL/start (crash-restart) and SIGSTOP/SIGCONT.

Kill keeps the data directory: the broker restarts from what it had fsynced
(or not). Pause models a long GC or a stalled VM: the process holds its
sockets but answers nothing, so followers fall out of the ISR after
``replica.lag.time.max.ms`` and a paused leader is fenced by the controller.
Values record the pids hit: ``{"killed": {"n2": 412}}``, ``{"started": {"n2": 977}}``,
``{"paused": {...}}``, ``{"resumed": {...}}``; nodes that were already in the
requested state are listed apart, never silently counted as done. A kill or
pause narrows a target that would take every node or a quorum majority down,
together with the faults already in force (``nemesis.in_force``), and records
it; when nothing is left it is withheld (``"withheld": true, "because"``).
Every kill, pause, start and resume is entered in the run's ledger of faults
in force (``Resolver.in_force``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from nemesis.errors import TeardownIncomplete
from nemesis.in_force import How
from nemesis.nodes import Hit, Resolver, completion, on_nodes, on_nodes_timed

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.daemon import State
    from cluster.kafka_node import KafkaNode

#: One command per node: the state the broker was found in, and what was done to it (the
#: pid acted on; power-loss: what was dropped), ``None`` when its state called for nothing.
Act = Callable[["KafkaNode"], "tuple[State, Any]"]


def _target(op: Mapping[str, Any], default: str) -> Any:
    value = op.get("value")
    if isinstance(value, Mapping):
        return value.get("target", default)
    return default if value is None else value


class _ProcessNemesis:
    """Shared shape: resolve the target, act on each node in parallel, record pids."""

    start_f: str
    stop_f: str
    start_key: str
    stop_key: str
    #: how the ledger counts a node this fault hit, and the state that means it already is
    how: How
    already: str

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or Resolver()

    def fs(self) -> frozenset[str]:
        return frozenset({self.start_f, self.stop_f})

    def setup(self, cluster: Cluster) -> None:
        """Heal what a crashed earlier run may have left: no fault is in force afterwards."""
        self.teardown(cluster)

    def _act(
        self, cluster: Cluster, target: Any, key: str, act: Act, *, fault: bool = False,
    ) -> dict[str, Any]:
        """Act on ``target``'s nodes; ``fault``: narrowed and counted down (else a heal).

        ``act`` is one command per node that judges the broker's state and acts only
        if it calls for it (``KafkaNode.kill_if_up`` ...): no probe round trip first.
        """
        try:  # a fault spares the cluster and the KRaft quorum unless asked (nemesis.in_force)
            hit: Hit | None = None
            seen: dict[str, Any] = {}
            if fault:
                # one look at the metadata, before the fault changes it, for both
                facts = self.resolver.facts(cluster).once()
                seen = self.resolver.seen(cluster, target, facts)
                hit = self.resolver.take_down(cluster, target, self.how, facts)
                names = hit.nodes
            else:
                names = self.resolver.nodes(cluster, target)
        except Exception as err:  # metadata unavailable, bad target: recorded
            return completion({"target": target}, f"{type(err).__name__}: {err}")

        landed = on_nodes_timed(act, cluster, names)  # per node: never raises
        results, errors = landed.results, landed.errors
        if hit is not None:  # only what was hit (or found so already) stays down
            self.resolver.settle(self.how, hit, [n for n, (state, pid) in results.items()
                                                 if pid is not None or state == self.already])
        else:  # a heal: the nodes it reached are no longer down
            self.resolver.in_force.update(lambda s: s.healed(self.how, results))
        value: dict[str, Any] = {
            key: {n: pid for n, (_, pid) in results.items() if pid is not None}
        }
        skipped = {n: state for n, (state, pid) in results.items() if pid is None}
        if skipped:
            value["skipped"] = skipped  # node → the state it was in instead
        value["target"] = target
        value.update(seen)
        value.update(hit.record if hit else {})
        acted = [n for n, (_, pid) in results.items() if pid is not None]
        return completion(landed.recorded(value, acted), errors)

    def _healed(self, cluster: Cluster, heal: Callable[[KafkaNode], None], label: str) -> None:
        """Teardown: ``heal`` every node; those it reached are no longer down."""
        done, errors = on_nodes(heal, cluster, cluster.nodes)
        self.resolver.in_force.update(lambda s: s.healed(self.how, done))
        if errors:
            raise TeardownIncomplete({f"{label} {n}": e for n, e in errors.items()})

    def teardown(self, cluster: Cluster) -> None:
        raise NotImplementedError


class KillNemesis(_ProcessNemesis):
    """``kill`` SIGKILLs the target brokers; ``start`` (default ``all``) restarts dead ones."""

    start_f, stop_f = "kill", "start"
    how, already = "killed", "stopped"

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == "kill":
            # a paused JVM dies of SIGKILL too
            return self._act(cluster, _target(op, "one"), "killed",
                             lambda n: n.kill_if_up(), fault=True)
        return self._act(cluster, _target(op, "all"), "started", lambda n: n.start_if_down())

    def teardown(self, cluster: Cluster) -> None:
        def restart(node: KafkaNode) -> None:
            node.start_if_down()

        self._healed(cluster, restart, "start")


class PauseNemesis(_ProcessNemesis):
    """``pause`` SIGSTOPs the target brokers; ``resume`` (default ``all``) SIGCONTs them."""

    start_f, stop_f = "pause", "resume"
    how, already = "paused", "paused"

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == "pause":
            return self._act(cluster, _target(op, "one"), "paused",
                             lambda n: n.pause_if_running(), fault=True)
        return self._act(cluster, _target(op, "all"), "resumed", lambda n: n.resume_if_paused())

    def teardown(self, cluster: Cluster) -> None:
        def resume(node: KafkaNode) -> None:
            node.resume()  # SIGCONT whatever its state: harmless on a running JVM
            if node.zookeeper is not None:
                node.zookeeper.resume()

        self._healed(cluster, resume, "resume")
