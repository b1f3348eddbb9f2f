"""Rolling upgrades and downgrades onto another build, as Kafka's upgrade notes say to.

An operator upgrades a cluster in place, under load: put the new release's
files on every host, restart the brokers one at a time onto them (the
controlled restart of ``nemesis.restart``, waiting for a whole ISR between
nodes), and only when every broker runs the new build, raise the level the
brokers speak to each other:

* ZooKeeper mode: the first roll pins ``inter.broker.protocol.version`` to the
  level in force, so new brokers speak the old protocol to old ones; a second
  roll sets it to the new build's line;
* KRaft (3.3+): ``kafka-features upgrade --metadata <line>``, run with the new
  build's own tool on a node (``cluster.admin_tools``), after the roll.

Raising the level is what cannot be undone: Kafka documents a downgrade only
to a build that still speaks the level in force. So ``downgrade`` refuses,
before anything starts, when the cluster's ``inter.broker.protocol.version``
or finalized ``metadata.version`` is newer than the target build's line, and
``upgrade`` takes ``bump = false`` to roll without raising it (the state in
which Kafka's notes say to verify the new build before finalizing it).

Op values (``kafka-version``, ``kafka-dist`` as on the command line; a bare
string is a ``kafka-version``): ``upgrade {"kafka-version": "4.1.2", "bump"?,
"stop-timeout-s"?, "isr-timeout-s"?}``; ``downgrade`` the same, or with no
build: back to the run's own. Every broker is rolled, in node order; one
already on the target build is left alone (``already``). The completion::

    {"to": "4.1.2", "version": "4.1.2", "nodes": [...], "prepare-s", "ship": {node:
     {"copied", "bytes", "ship-s"}}, "levels-before": {...}, "steps": [{"node", "from",
     "to", "stop-s", "start-s", "isr-s", "took-s", ...}], "bump": {...}, "duration-s"}

or ``{"refused": why}`` (and the same ``error``) when it was refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cluster import builds as real
from cluster.admin_tools import features_args, finalized_metadata, tool_node
from cluster.builds import IBP, Build, level_number, line_text
from cluster.tool_run import ToolRun, run_tool
from nemesis.nodes import Resolver, completion, on_nodes_timed
from nemesis.restart import ISR_TIMEOUT_S, STOP_TIMEOUT_S, RestartNemesis

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode
    from cluster.spec import ClusterSpec

UPGRADE, END_UPGRADE = "upgrade", "end-upgrade"
DOWNGRADE, END_DOWNGRADE = "downgrade", "end-downgrade"
#: The keys an op's table may hold.
KEYS = ("kafka-version", "kafka-dist", "bump", "stop-timeout-s", "isr-timeout-s")


class Builds(Protocol):
    """What an upgrade does to nodes besides restarting them (``cluster.builds``, and
    Kafka's ``kafka-features``): a protocol, so the sequencing is tested on fakes."""

    def prepare(self, spec: ClusterSpec) -> Build: ...
    def ship(self, node: KafkaNode, build: Build) -> dict[str, Any]: ...
    def configure(self, node: KafkaNode, build: Build, pinned: dict[str, str]) -> None: ...
    def switch(self, node: KafkaNode, build: Build) -> None: ...
    def protocol_of(self, node: KafkaNode) -> str: ...
    def features(self, node: KafkaNode, *command: str) -> ToolRun: ...


class NodeBuilds:
    """The real thing: ``cluster.builds`` on the nodes, ``kafka-features`` from the build
    the node runs."""

    def prepare(self, spec: ClusterSpec) -> Build:
        return real.prepare(spec)

    def ship(self, node: KafkaNode, build: Build) -> dict[str, Any]:
        return real.ship(node, build)

    def configure(self, node: KafkaNode, build: Build, pinned: dict[str, str]) -> None:
        real.configure(node, build, pinned)

    def switch(self, node: KafkaNode, build: Build) -> None:
        real.switch(node, build)

    def protocol_of(self, node: KafkaNode) -> str:
        return real.protocol_of(node)

    def features(self, node: KafkaNode, *command: str) -> ToolRun:
        return run_tool(node, features_args(node.version, node.kafka_home, *command), None)


def build_of(value: Any) -> tuple[str | None, str | None]:
    """(kafka-version, kafka-dist) an op's value names (both None: the run's own build)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        return value.get("kafka-version"), value.get("kafka-dist")
    return None, None


class UpgradeNemesis:
    """``upgrade`` (or ``downgrade``) rolls every broker onto another build; its heal
    (``end-upgrade``, ``end-downgrade``) starts what a roll left down."""

    def __init__(self, direction: str = UPGRADE, resolver: Resolver | None = None,
                 builds: Builds | None = None, restart: RestartNemesis | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.direction = direction
        self.heal_f = END_UPGRADE if direction == UPGRADE else END_DOWNGRADE
        self.resolver = resolver or Resolver()
        self.builds = builds or NodeBuilds()
        self.restart = restart or RestartNemesis(self.resolver, clock=clock)
        self.clock = clock

    def fs(self) -> frozenset[str]:
        return frozenset({self.direction, self.heal_f})

    def setup(self, cluster: Cluster) -> None:
        """Nothing is rolled yet: nothing to prepare."""

    def teardown(self, cluster: Cluster) -> None:
        """A broker a roll left down is started (``RestartNemesis.teardown``); the builds
        the brokers run stay as the roll left them: that is the upgrade."""
        self.restart.teardown(cluster)

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == self.heal_f:
            return self.restart.start_left_down(cluster)
        began = self.clock()
        out = self._roll(cluster, op.get("value"), began)
        if isinstance(out.get("value"), dict):
            out["value"]["duration-s"] = round(self.clock() - began, 2)
        return out

    def _roll(self, cluster: Cluster, value: Any, began: float) -> dict[str, Any]:
        args = value if isinstance(value, Mapping) else {}
        stop_s = float(args.get("stop-timeout-s", STOP_TIMEOUT_S))
        isr_s = float(args.get("isr-timeout-s", ISR_TIMEOUT_S))
        bump = bool(args.get("bump", True)) and self.direction == UPGRADE
        version, dist = build_of(value)
        try:
            build = self.builds.prepare(real.target_spec(cluster.spec, version, dist))
        except Exception as err:  # no such release, wrong mode, unknown key: refused
            return _refused({}, f"{type(err).__name__}: {err}")
        record: dict[str, Any] = {"to": build.name, "version": build.version.version,
                                  "nodes": list(cluster.nodes),
                                  "prepare-s": round(self.clock() - began, 2)}
        todo = [n for n in cluster.nodes if self._build_on(cluster, n) != build.name]
        if len(todo) < len(cluster.nodes):
            record["already"] = [n for n in cluster.nodes if n not in todo]
        levels, unread = self._levels(cluster)
        record["levels-before"] = levels
        if unread:  # a downgrade must know it; an upgrade goes on, without the bump
            record["levels-unread"] = unread
        why = (unread if self.direction == DOWNGRADE else "") or self._refusal(
            cluster, todo, build, levels)
        if why:
            return _refused(record, why)
        if not todo:
            return completion(record)
        shipping = time.monotonic()
        shipped = on_nodes_timed(lambda n: self.builds.ship(n, build), cluster, todo)
        record["ship"] = {n: {**r, "ship-s": round(shipped.at[n] - shipping, 2)}
                          for n, r in sorted(shipped.results.items())}
        if shipped.errors:
            return completion(record, {n: f"not shipped, nothing restarted: {e}"
                                       for n, e in shipped.errors.items()})
        pinned = {IBP: levels[IBP]} if IBP in levels else {}
        rolled = self.restart.roll(cluster, todo, stop_s, isr_s, self._swap(build, pinned))
        record["steps"] = _took(rolled.steps)
        rolled.record(record)
        if all(self._build_on(cluster, n) == build.name for n in cluster.nodes):
            cluster.version = build.version
        if bump:
            record["bump"] = self._bump(cluster, build, levels, rolled.whole,
                                        stop_s=stop_s, isr_s=isr_s)
        errors = dict(rolled.errors)
        if bump and record["bump"].get("error"):
            errors["bump"] = record["bump"]["error"]
        return completion(record, errors)

    def _build_on(self, cluster: Cluster, name: str) -> str:
        return real.build_on(cluster.nodes[name])

    def _swap(self, build: Build, pinned: dict[str, str]) -> Callable[[KafkaNode], dict[str, Any]]:
        def swap(node: KafkaNode) -> dict[str, Any]:
            before = node.version.version
            self.builds.configure(node, build, pinned)
            self.builds.switch(node, build)
            return {"from": before, "to": build.version.version, **(
                {"pinned": dict(pinned)} if pinned else {})}
        return swap

    def _levels(self, cluster: Cluster) -> tuple[dict[str, str], str]:
        """The level the brokers speak now (ZooKeeper: the protocol, read from a node's
        config; KRaft: the finalized metadata.version, asked of ``kafka-features``), and
        why it could not be read."""
        try:
            if cluster.spec.mode == "zookeeper":
                return {IBP: self.builds.protocol_of(tool_node(cluster))}, ""
            run = self.builds.features(tool_node(cluster), "describe")
        except Exception as err:  # no broker up, no tool in this version
            return {}, f"cannot read the level in force: {type(err).__name__}: {err}"
        level = finalized_metadata(run.output) if run.exit_code == 0 else None
        if level is None:
            return {}, ("cannot read the finalized metadata.version: kafka-features "
                        f"describe exited {run.exit_code}: {run.reason()}")
        return {"metadata.version": level}, ""

    def _refusal(self, cluster: Cluster, todo: list[str], build: Build,
                 levels: dict[str, str]) -> str:
        """Why this roll must not start (empty: it may), in one line."""
        target = build.version
        for name in todo:
            runs = cluster.nodes[name].version
            if self.direction == UPGRADE and runs.order > target.order:
                return (f"{name} runs Kafka {runs.version}, newer than {target.version}: "
                        "that is a downgrade")
            if self.direction == DOWNGRADE and runs.order < target.order:
                return (f"{name} runs Kafka {runs.version}, older than {target.version}: "
                        "that is an upgrade")
        if IBP in cluster.spec.broker_config:
            return f"the run sets {IBP} itself (--broker-config): the roll pins and bumps it"
        if cluster.spec.mode == "zookeeper" and any(
                cluster.nodes[n].version.number < (0, 11) for n in todo):
            return ("from before 0.11 Kafka's notes also pin log.message.format.version, "
                    "which this roll does not: upgrade from 0.11 or newer")
        for key, level in levels.items():
            if self.direction == DOWNGRADE and level_number(level) > level_number(
                    line_text(target)):
                return (f"{key} {level} is in force and Kafka {target.version} does not "
                        "speak it: Kafka documents no downgrade past a raised "
                        f"{'protocol' if key == IBP else 'metadata'} level")
        return ""

    def _bump(self, cluster: Cluster, build: Build, levels: dict[str, str], whole: bool, *,
              stop_s: float, isr_s: float) -> dict[str, Any]:
        """Raise the level to the build's line once every broker runs it."""
        to = line_text(build.version)
        if not whole:
            return {"done": False, "because": "the roll did not reach every broker whole"}
        if not levels:
            return {"done": False, "because": "the level in force could not be read"}
        if level_number(next(iter(levels.values()))) >= level_number(to):
            return {"done": False, "because": f"the level in force is already {to}"}
        began = self.clock()
        if IBP in levels:
            rolled = self.restart.roll(cluster, list(cluster.nodes), stop_s, isr_s,
                                       self._swap(build, {IBP: to}))
            out: dict[str, Any] = {"setting": IBP, "from": levels[IBP], "to": to,
                                   "steps": _took(rolled.steps), "done": rolled.whole}
            rolled.record(out)
            if rolled.errors:
                out["error"] = "; ".join(f"{n}: {e}" for n, e in rolled.errors.items())
        else:
            out = self._metadata(cluster, levels["metadata.version"], to)
        out["seconds"] = round(self.clock() - began, 2)
        return out

    def _metadata(self, cluster: Cluster, before: str, to: str) -> dict[str, Any]:
        out: dict[str, Any] = {"feature": "metadata.version", "from": before, "to": to}
        try:
            node = tool_node(cluster)
            run = self.builds.features(node, "upgrade", "--metadata", to)
            after = self.builds.features(node, "describe")
        except Exception as err:  # no broker up
            return {**out, "done": False, "error": f"{type(err).__name__}: {err}"}
        out.update({"ran-on": run.node, "tool-s": run.seconds,
                    "finalized": finalized_metadata(after.output)})
        out["done"] = run.exit_code == 0
        if run.exit_code != 0:
            out["output"] = run.tail()
            out["error"] = (f"kafka-features upgrade exited {run.exit_code}: "
                            f"{run.reason()}")
        return out


def _took(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` with each node's whole time (``took-s``: stop, start, ISR wait) added."""
    for step in steps:
        step["took-s"] = round(sum(step.get(k, 0.0) for k in ("stop-s", "start-s", "isr-s")), 2)
    return steps


def _refused(record: dict[str, Any], why: str) -> dict[str, Any]:
    """Nothing was done: the op says why, in ``refused`` and its ``error``."""
    return completion({**record, "refused": why}, why)
