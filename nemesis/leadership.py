"""Planned leader moves: leader elections and partition reassignments on demand.

Most leadership changes a production cluster sees are an operator's: a
preferred-leader election after a restart, a reassignment that moves a
partition's replicas to other brokers. KAFKA-20554 loses acks=1 records on
exactly these. Both run Kafka's own tools inside a node, from the
distribution under test (``cluster.admin_tools``), and each op records what
the tool said and what the metadata shows before and after:

* ``elect-leader`` ``{"type": "preferred"|"unclean", "key"?}`` (no key: every
  workload partition; ``group-coordinator:GROUP``: the group's ``__consumer_offsets``
  partition, so that its coordinator moves on an operator's election) ->
  ``{"type", "keys", "partitions", "ran-on", "tool-s", "elected", "not-needed",
  "failed", "leaders-changed": {key: [from, to]}}``, with ``attempts`` and
  ``waited-s`` when a preferred election ran again because Kafka refused it with a
  preferred replica out of the ISR (``PREFERRED_ATTEMPTS``).
  What the tool says it did (``elected``) and what the metadata shows
  (``leaders-changed``, from a look before the tool's JVM started to a look
  after it ended) are recorded apart: the tool takes seconds, and the brokers'
  own leader check may move the same leaders meanwhile (seen on 4.1.2: every
  partition ``not-needed``, 12 leaders changed during the 30 s the tool ran).
  ``elect-preferred``
  (the heal) is a preferred election of every workload partition, which puts
  the leaders back on their preferred replicas.
* ``reassign`` ``{"key"?, "replicas"?, "timeout-s"?}`` (no key: one drawn
  workload partition; no replicas: ``moved``'s plan) -> ``{"key", "from",
  "to", "done", "reassign-s", "leader-before", "leader-after"}``;
  ``reassign-back`` moves every partition this nemesis moved back to the
  replicas it had first. A ``group-coordinator:GROUP`` key moves the group's
  ``__consumer_offsets`` partition (recorded by its own key,
  ``__consumer_offsets-N``). A fresh process (teardown after a crash) does not
  know them: the completion of each ``reassign`` in the history does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cluster.admin_tools import (
    election_args,
    election_outcome,
    partitions_json,
    reassign_args,
    reassignment_json,
    tool_file,
    tool_node,
)
from cluster.metadata import PartitionState
from cluster.tool_run import ToolRun, run_tool
from nemesis.nodes import Resolver, completion
from nemesis.polling import Poller
from nemesis.targets import GROUP_COORDINATOR, OFFSETS_TOPIC, Facts, group_partition

if TYPE_CHECKING:
    from cluster import Cluster

ELECT, ELECT_PREFERRED = "elect-leader", "elect-preferred"
REASSIGN, REASSIGN_BACK = "reassign", "reassign-back"
#: A workload partition's key, as the history writes it (``t0-1``).
KEY = re.compile(r"^[A-Za-z0-9._-]+-[0-9]+$")
#: Seconds a reassignment may take to complete (replicas caught up, old ones removed).
REASSIGN_TIMEOUT_S = 60.0
#: Times a preferred election is run when Kafka answers that a preferred replica is not
#: available, and the seconds it waits before each retry for that replica to be back in
#: the ISR: a follower briefly out of the ISR (a short ``replica.lag.time.max.ms``, a
#: loaded host) fails an operator's election, and an operator's runbook waits and runs it
#: again rather than giving up.
PREFERRED_ATTEMPTS = 3
PREFERRED_WAIT_S = 15.0
#: What kafka-leader-election prints when a preferred replica is out of the ISR or fenced.
PREFERRED_NOT_AVAILABLE = "PreferredLeaderNotAvailable"


def is_key(value: Any) -> bool:
    """A workload partition's key (``t0-1``), or ``group-coordinator:GROUP``."""
    if not isinstance(value, str):
        return False
    return bool(KEY.match(value)) or (value.startswith(GROUP_COORDINATOR)
                                      and len(value) > len(GROUP_COORDINATOR))


def resolve_key(facts: Facts, key: str) -> str:
    """``group-coordinator:GROUP`` -> the key of the group's ``__consumer_offsets``
    partition now (``KeyError`` before the topic exists); another key as it is."""
    if not key.startswith(GROUP_COORDINATOR):
        return key
    p = group_partition(facts, key.removeprefix(GROUP_COORDINATOR))
    if p is None:
        raise KeyError(key)
    return p.key


def partitions_of(facts: Facts, keys: Iterable[str]) -> dict[str, PartitionState]:
    """The workload's partitions, with ``__consumer_offsets``' when ``keys`` name one of
    them (the offsets topic is asked for only then)."""
    parts = dict(facts.partitions())
    if facts.offsets is not None and any(k.startswith(OFFSETS_TOPIC) for k in keys):
        parts.update({p.key: p for p in facts.offsets().values()})
    return parts


def looking(facts: Facts, keys: Iterable[str]) -> Callable[[], dict[str, PartitionState]]:
    """A look at ``keys``' partitions for a wait: metadata unavailable for a moment is an
    empty look (the wait looks again), not an error."""
    wanted = list(keys)

    def look() -> dict[str, PartitionState]:
        try:
            return partitions_of(facts, wanted)
        except Exception:  # metadata unavailable for a moment: look again
            return {}
    return look


def real_topic(prefix: str, p: PartitionState) -> str:
    """``p``'s topic as the cluster names it: a workload topic carries the run's prefix,
    Kafka's ``__consumer_offsets`` does not."""
    return p.topic if p.topic == OFFSETS_TOPIC else prefix + p.topic


def moved(p: PartitionState, brokers: Sequence[str]) -> tuple[str, ...]:
    """The replicas a reassignment moves ``p`` to when none are named: its leader replaced
    by the first broker not among its replicas (the leader moves away), or, when every
    broker holds one (RF = brokers), the same replicas rotated so that the preferred
    leader is the next one (the leader moves at the next preferred election)."""
    replicas = p.replicas
    spare = [b for b in brokers if b not in replicas]
    leader = p.leader if p.leader in replicas else replicas[0]
    if spare:
        return (*(r for r in replicas if r != leader), spare[0])
    i = replicas.index(leader)
    return replicas[i + 1:] + replicas[:i + 1]


def timed(op_fn: Callable[[Cluster, Mapping[str, Any]], dict[str, Any]], cluster: Cluster,
          op: Mapping[str, Any]) -> dict[str, Any]:
    """``op_fn``'s completion with the whole operation's ``duration-s`` in its value: the
    operation is the fault while it runs (reports count it from its invoke)."""
    began = time.monotonic()
    out = op_fn(cluster, op)
    if isinstance(out.get("value"), dict):
        out["value"]["duration-s"] = round(time.monotonic() - began, 2)
    return out


def _ids(nodes: Sequence[str]) -> list[int]:
    return [int(n.removeprefix("n")) for n in nodes]


class ElectNemesis:
    """``elect-leader`` runs kafka-leader-election; ``elect-preferred`` heals with a
    preferred election of every workload partition."""

    def __init__(self, resolver: Resolver | None = None, prefix: str = "",
                 poller: Poller | None = None) -> None:
        self.resolver = resolver or Resolver()
        self.prefix = prefix
        self.poller = poller or Poller()

    def fs(self) -> frozenset[str]:
        return frozenset({ELECT, ELECT_PREFERRED})

    def setup(self, cluster: Cluster) -> None:
        """An election leaves nothing in force: nothing to prepare."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        return timed(self._elect, cluster, op)

    def _elect(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        value = op.get("value")
        args = dict(value) if isinstance(value, Mapping) else {}
        if isinstance(value, str) and op["f"] == ELECT:
            args["type"] = value
        election = "preferred" if op["f"] == ELECT_PREFERRED else args.get("type", "preferred")
        key = args.get("key") if op["f"] == ELECT else None
        record: dict[str, Any] = {"type": election}
        try:
            facts = self.resolver.facts(cluster)
            key = None if key is None else resolve_key(facts, key)
            parts = partitions_of(facts, [key] if key is not None else [])
            chosen = [parts[key]] if key is not None else [parts[k] for k in sorted(parts)]
            record.update({"keys": [key] if key is not None else "all",
                           "partitions": len(chosen)})
            before = {p.key: p.leader for p in chosen}
            run = self._run(cluster, facts, election, chosen, record)
            after = partitions_of(facts, before)
        except KeyError:
            return completion(record, f"no workload partition {key!r}")
        except Exception as err:  # metadata unavailable, no broker up: recorded
            return completion(record, f"{type(err).__name__}: {err}")
        outcome = {k: self._unprefixed(v) for k, v in election_outcome(run.output).items()}
        record.update({"ran-on": run.node, "tool-s": run.seconds, **outcome,
                       "leaders-changed": {k: [b, after[k].leader] for k, b in before.items()
                                           if k in after and after[k].leader != b}})
        if run.exit_code != 0:
            record["output"] = run.tail()
            return completion(record, f"kafka-leader-election exited {run.exit_code}: "
                                      f"{run.reason()}")
        return completion(record)

    def _run(self, cluster: Cluster, facts: Facts, election: str,
             chosen: Sequence[PartitionState], record: dict[str, Any]) -> ToolRun:
        """kafka-leader-election on ``chosen``; a preferred election that Kafka refuses
        because a preferred replica is not available runs again, up to
        ``PREFERRED_ATTEMPTS`` times, once that replica is back in the ISR (or after
        ``PREFERRED_WAIT_S``). ``record`` gets the attempts and the seconds waited."""
        waited = 0.0
        for attempt in range(1, PREFERRED_ATTEMPTS + 1):
            node = tool_node(cluster)
            path = tool_file(node, "insync-election.json")
            run = run_tool(node, election_args(cluster.version.leader_election_main, election,
                                               path, node.kafka_home),
                           (path, partitions_json((real_topic(self.prefix, p), p.partition)
                                                  for p in chosen)))
            refused = (election == "preferred" and run.exit_code != 0
                       and PREFERRED_NOT_AVAILABLE in run.output)
            if not refused or attempt == PREFERRED_ATTEMPTS:
                break
            waited += self._await_preferred(facts, [p.key for p in chosen])
        if attempt > 1:
            record.update({"attempts": attempt, "waited-s": round(waited, 2)})
        return run

    def _await_preferred(self, facts: Facts, keys: Sequence[str]) -> float:
        """Seconds spent waiting for every preferred replica of ``keys`` to be in its ISR."""
        polled = self.poller.until(
            looking(facts, keys), lambda now: all(k in now and now[k].replicas[:1] != ()
                                  and now[k].replicas[0] in now[k].isr for k in keys),
            PREFERRED_WAIT_S)
        return polled.seconds

    def _unprefixed(self, v: Any) -> Any:
        if isinstance(v, list):
            return [k.removeprefix(self.prefix) for k in v]
        return {k.removeprefix(self.prefix): why for k, why in v.items()}

    def teardown(self, cluster: Cluster) -> None:
        """An election leaves nothing to heal."""


class ReassignNemesis:
    """``reassign`` moves a partition's replicas; ``reassign-back`` moves them back."""

    def __init__(self, resolver: Resolver | None = None, prefix: str = "",
                 poller: Poller | None = None) -> None:
        self.resolver = resolver or Resolver()
        self.prefix = prefix
        self.poller = poller or Poller()
        #: key -> the replicas it had before this nemesis first moved it
        self.original: dict[str, tuple[str, ...]] = {}

    def fs(self) -> frozenset[str]:
        return frozenset({REASSIGN, REASSIGN_BACK})

    def setup(self, cluster: Cluster) -> None:
        """Nothing is moved yet: nothing to prepare."""

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        return timed(self._reassign, cluster, op)

    def _reassign(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        value = op.get("value")
        args = dict(value) if isinstance(value, Mapping) else {}
        timeout = float(args.get("timeout-s", REASSIGN_TIMEOUT_S))
        try:
            facts = self.resolver.facts(cluster)
            if op["f"] == REASSIGN_BACK:
                parts = partitions_of(facts, self.original)
                plan = {k: r for k, r in self.original.items() if k in parts}
            else:
                key = args.get("key") or self.resolver.rng.choice(sorted(facts.partitions()))
                key = resolve_key(facts, key)
                parts = partitions_of(facts, [key])
                if key not in parts:
                    return completion({"key": key}, f"no workload partition {key!r}")
                p = parts[key]
                to = tuple(args["replicas"]) if "replicas" in args else moved(
                    p, list(cluster.nodes))
                plan = {key: to}
        except Exception as err:  # metadata unavailable: recorded
            return completion({}, f"{type(err).__name__}: {err}")
        if not plan:
            return completion({"restored": {}})
        return self._move(cluster, parts, plan, timeout, back=op["f"] == REASSIGN_BACK)

    def _move(self, cluster: Cluster, parts: Mapping[str, PartitionState],
              plan: Mapping[str, tuple[str, ...]], timeout: float, *, back: bool
              ) -> dict[str, Any]:
        facts = self.resolver.facts(cluster)
        record: dict[str, Any] = {
            "moves": {k: {"from": list(parts[k].replicas), "to": list(r)} for k, r in plan.items()},
            "leaders-before": {k: parts[k].leader for k in plan}}
        try:
            node = tool_node(cluster)
            path = tool_file(node, "insync-reassignment.json")
            text = reassignment_json({(real_topic(self.prefix, parts[k]), parts[k].partition):
                                      _ids(r) for k, r in plan.items()})
            run = run_tool(node, reassign_args(cluster.version.reassign_main, path,
                                               node.kafka_home), (path, text))
        except Exception as err:  # no broker up, no tool in this version: recorded
            return completion(record, f"{type(err).__name__}: {err}")
        record.update({"ran-on": run.node, "tool-s": run.seconds})
        if run.exit_code != 0:
            record["output"] = run.tail()
            return completion(record, f"kafka-reassign-partitions exited {run.exit_code}: "
                                      f"{run.reason()}")
        if not back:
            for k in plan:
                self.original.setdefault(k, parts[k].replicas)

        polled = self.poller.until(
            looking(facts, plan),
            lambda now: all(k in now and now[k].replicas == r for k, r in plan.items()), timeout)
        record.update({"done": polled.held, "reassign-s": polled.seconds,
                       "leaders-after": {k: polled.last[k].leader if k in polled.last else None
                                         for k in plan}})
        if back and polled.held:
            for k in plan:
                self.original.pop(k, None)
        if back:
            record["restored"] = {k: list(r) for k, r in plan.items()}
        if not polled.held:
            return completion(record, f"the reassignment was not complete within {timeout:g} s")
        return completion(record)

    def teardown(self, cluster: Cluster) -> None:
        """Moves back what this nemesis moved (what a fresh process knows: nothing)."""
        if self.original:
            self.invoke(cluster, {"f": REASSIGN_BACK, "value": None})
