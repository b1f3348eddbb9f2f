"""KRaft controller quorum changes as faults: remove a voter, add it back (KIP-853).

An operator replacing a controller's disk or host removes it from the voter set
and adds it back; removing the active controller makes the quorum elect another
one while the brokers keep writing. Kafka 3.9+ does this on a dynamic quorum
(``ClusterSpec.kraft_quorum = "dynamic"``) with ``kafka-metadata-quorum``, run
here from the distribution under test inside the cluster's own nodes
(``cluster.admin_tools``):

* ``remove-controller`` ``"active-controller"`` (the default) or a node ->
  ``{"node", "directory-id", "ran-on", "tool-s", "attempts", "before": {leader,
  voters, observers}, "after": {...}, "applied-s"}``: the voter's directory id is
  read from ``describe --status`` first; ``applied-s`` is the seconds from the
  first tool's start until a ``describe --status`` no longer lists the node as a
  voter; a refused removal is run again (``ADD_ATTEMPTS``), its output kept.
  The removed node keeps running, as an observer.
* ``add-controller`` (the heal; ``None``: every controller node of the cluster
  missing from the voter set, or one node) runs ``add-controller`` ON that node,
  with its own ``server.properties`` as the command config (the tool reads the
  node id, metadata directory id and controller endpoint from it) ->
  ``{"added": {node: {"ran-on", "tool-s", "attempts"}}, "before", "after",
  "applied-s"}`` (from the first tool's start until ``describe --status`` lists every
  node added as a voter). Kafka refuses to add a voter whose log has not caught up; the add
  is run again (``ADD_ATTEMPTS``), as an operator would, and so is a refused removal.

The heal needs no memory of what was removed (the cluster's controller nodes
minus the voters now), so a fresh process heals a crashed run's quorum.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cluster.admin_tools import QuorumStatus, quorum_args, quorum_status, tool_node
from cluster.broker_config import CONFIG_PATH
from cluster.tool_run import run_tool
from nemesis.leadership import timed
from nemesis.nodes import Resolver, completion
from nemesis.polling import Poller

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

REMOVE, ADD = "remove-controller", "add-controller"
#: The target naming the quorum's leader, as ``describe --status`` reports it.
ACTIVE = "active-controller"
#: Seconds a voter change may take to show in ``describe --status``.
APPLY_TIMEOUT_S = 60.0
#: Times ``add-controller`` or ``remove-controller`` is run when Kafka refuses it, and the
#: seconds between. The tool asks the controllers themselves (``quorum_args``), which
#: still refuse a change while the quorum elects a leader.
ADD_ATTEMPTS = 3
ADD_WAIT_S = 5.0


def describe(node: KafkaNode) -> tuple[QuorumStatus | None, str]:
    """The quorum as the controllers answer ``describe --status`` (the tool run on
    ``node``), and the tool's tail."""
    run = run_tool(node, quorum_args(node.version, node.kafka_home, "describe", "--status",
                                     controllers=node.controllers), None)
    return quorum_status(run.output), " | ".join(run.tail(3))


class QuorumNemesis:
    """``remove-controller`` takes a voter out of the KRaft quorum; ``add-controller``
    puts the cluster's controllers back in."""

    def __init__(self, resolver: Resolver | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.resolver = resolver or Resolver()
        self.clock, self.sleep = clock, sleep

    def fs(self) -> frozenset[str]:
        return frozenset({REMOVE, ADD})

    def setup(self, cluster: Cluster) -> None:
        """The quorum is whole at the start: nothing to prepare."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if cluster.spec.kraft_quorum != "dynamic":
            return completion({"kraft-quorum": cluster.spec.kraft_quorum},
                              "the controller quorum is static: voters change only in a "
                              "cluster made with --kraft-quorum dynamic")
        return timed(self._remove if op["f"] == REMOVE else self._add, cluster, op)

    def teardown(self, cluster: Cluster) -> None:
        """Add back every controller missing from the voter set."""
        if cluster.spec.kraft_quorum == "dynamic":
            self._add(cluster, {"f": ADD, "value": None})

    def _remove(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        target = op.get("value") or ACTIVE
        record: dict[str, Any] = {"target": target}
        try:
            node = tool_node(cluster)
            before, said = describe(node)
        except Exception as err:  # no broker up: recorded
            return completion(record, f"{type(err).__name__}: {err}")
        if before is None:
            return completion(record, f"describe --status failed on {node.name}: {said}")
        record["before"] = before.record()
        nid = before.leader if target == ACTIVE else int(str(target).removeprefix("n"))
        if nid is None or nid not in before.voters:
            return completion(record, f"{target} is not a voter of the quorum now")
        record.update({"node": f"n{nid}", "directory-id": before.voters[nid]})
        began = self.clock()
        args = quorum_args(node.version, node.kafka_home, REMOVE, "--controller-id", str(nid),
                           "--controller-directory-id", before.voters[nid],
                           controllers=node.controllers)
        problem = self._retried(node, args, REMOVE, record)
        if problem:
            return completion(record, problem)
        after = self._until(cluster, lambda s: nid not in s.voters, began, record)
        return completion(record, None if after else f"n{nid} still a voter after "
                          f"{APPLY_TIMEOUT_S:.0f} s")

    def _add(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        record: dict[str, Any] = {}
        try:
            before, said = describe(tool_node(cluster))
        except Exception as err:  # no broker up: recorded
            return completion(record, f"{type(err).__name__}: {err}")
        if before is None:
            return completion(record, f"describe --status failed: {said}")
        record["before"] = before.record()
        value = op.get("value")
        wanted = [value] if isinstance(value, str) else cluster.spec.controller_nodes
        missing = [n for n in wanted if cluster.spec.node_id(n) not in before.voters]
        added: dict[str, Any] = {}
        record["added"] = added
        errors: dict[str, str] = {}
        began = self.clock()
        for name in missing:
            problem = self._add_one(cluster, cluster.nodes[name], added)
            if problem:
                errors[name] = problem
        ids = {cluster.spec.node_id(n) for n in missing if n not in errors}
        if ids:
            self._until(cluster, lambda s: ids <= set(s.voters), began, record)
        elif missing:  # every add refused: the quorum as left, and nothing applied
            self._look(cluster, record)
        return completion(record, errors or None)

    def _add_one(self, cluster: Cluster, node: KafkaNode, added: dict[str, Any]) -> str | None:
        """``add-controller`` on ``node`` from its own config, run again while refused."""
        args = quorum_args(node.version, node.kafka_home, ADD, controllers=node.controllers,
                           command_config=node.at(CONFIG_PATH))
        entry: dict[str, Any] = {}
        added[node.name] = entry
        return self._retried(node, args, ADD, entry)

    def _retried(self, node: KafkaNode, args: list[str], what: str,
                 entry: dict[str, Any]) -> str | None:
        """Run the quorum tool on ``node`` until it succeeds, at most ``ADD_ATTEMPTS``
        times: ``entry`` gets where and how long it last ran, the attempts and, after a
        refusal, the tool's last lines. None when it succeeded, else the error."""
        for attempt in range(1, ADD_ATTEMPTS + 1):
            run = run_tool(node, args, None)
            entry.update({"ran-on": run.node, "tool-s": run.seconds, "attempts": attempt})
            if run.exit_code == 0:
                return None
            entry["output"] = run.tail()
            if attempt < ADD_ATTEMPTS:
                self.sleep(ADD_WAIT_S)
        return f"{what} exited {run.exit_code}"

    def _until(self, cluster: Cluster, done: Callable[[QuorumStatus], bool], began: float,
               record: dict[str, Any]) -> QuorumStatus | None:
        """Look at the quorum (``nemesis.polling``'s one wait loop) until ``done``, at most
        ``APPLY_TIMEOUT_S`` from ``began``; the last status seen recorded as ``after``, and
        ``applied-s`` from ``began`` when it held."""
        left = max(0.0, APPLY_TIMEOUT_S - (self.clock() - began))
        polled = Poller(clock=self.clock, sleep=self.sleep).until(
            lambda: self._look(cluster, record), lambda s: s is not None and done(s), left)
        if not polled.held:
            return None
        record["applied-s"] = round(self.clock() - began, 2)
        return polled.last

    @staticmethod
    def _look(cluster: Cluster, record: dict[str, Any]) -> QuorumStatus | None:
        """The quorum now (None while no node runs the tool or no controller answers),
        recorded as ``after``."""
        try:
            status, _ = describe(tool_node(cluster))
        except Exception:  # no answer for a moment: the caller looks again
            return None
        if status is not None:
            record["after"] = status.record()
        return status
