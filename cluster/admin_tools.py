"""Kafka's own admin tools, run inside a node from the distribution under test.

Planned operations (a preferred or unclean leader election, a partition
reassignment) are what an operator runs with ``kafka-leader-election`` and
``kafka-reassign-partitions``. insync runs the same classes, from the jars the
node's broker runs (``java -cp <jars> <class>``, ``cluster.jvm.tool_argv``),
on a node whose broker is up, against ``localhost``: Docker and SSH nodes
alike, and whatever moved between versions (the class, ``versions.ERAS``)
is one field of the version.

The tools read their partition lists from a JSON file: it is written and the
tool run in ONE command (``cluster.tool_run.run_tool``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cluster import jvm
from cluster.daemon import RUN_DIR
from cluster.spec import BROKER_PORT
from harness.base.errors import ClusterError, UsageError

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from cluster.model import Cluster
    from cluster.versions import KafkaVersion

ELECTIONS = ("preferred", "unclean")


def partitions_json(keys: Iterable[tuple[str, int]]) -> str:
    """``{"partitions": [{"topic", "partition"}, ...]}``, as kafka-leader-election reads it."""
    return json.dumps({"partitions": [{"topic": t, "partition": p} for t, p in keys]})


def reassignment_json(moves: Mapping[tuple[str, int], Sequence[int]]) -> str:
    """The ``--reassignment-json-file`` plan: each partition's new replicas (broker ids)."""
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in moves.items()]})


def election_args(version_main: str | None, election: str, path: str,
                  kafka_home: str) -> list[str]:
    """``kafka-leader-election``'s arguments for the partitions listed in ``path``."""
    if version_main is None:
        raise UsageError("this Kafka version has no leader election tool",
                         hint="kafka-leader-election exists from Kafka 2.4 on")
    if election not in ELECTIONS:
        raise UsageError(f"unknown election {election!r}", hint="use preferred or unclean")
    return [version_main, "--bootstrap-server", f"localhost:{BROKER_PORT}",
            "--admin.config", jvm.admin_config(kafka_home, jvm.OPS_ADMIN_CONFIG),
            "--election-type", election, "--path-to-json-file", path]


def reassign_args(version_main: str | None, path: str, kafka_home: str) -> list[str]:
    """``kafka-reassign-partitions --execute`` of the plan in ``path``."""
    if version_main is None:
        raise UsageError("this Kafka version has no reassignment tool over the Admin API",
                         hint="kafka-reassign-partitions --bootstrap-server exists from 2.6 on")
    return [version_main, "--bootstrap-server", f"localhost:{BROKER_PORT}",
            "--command-config", jvm.admin_config(kafka_home, jvm.OPS_ADMIN_CONFIG),
            "--reassignment-json-file", path, "--execute"]


def features_main(version: KafkaVersion) -> str | None:
    """``kafka-features``'s class in ``version``: ``kafka.admin`` from 3.3, when KRaft's
    ``metadata.version`` became something an operator upgrades (KIP-778), and the
    ``kafka-tools`` one that the 3.9 script runs and 4.x alone ships (both read in the
    releases' jars); None before 3.3."""
    if version.number < (3, 3):
        return None
    if version.number < (3, 9):
        return "kafka.admin.FeatureCommand"
    return "org.apache.kafka.tools.FeatureCommand"


def features_args(version: KafkaVersion, kafka_home: str, *command: str) -> list[str]:
    """``kafka-features`` ``command`` (``describe``; ``upgrade --metadata 4.1``) against
    ``localhost``, as ``version`` (installed at ``kafka_home``) runs it."""
    main = features_main(version)
    if main is None:
        raise UsageError(f"Kafka {version.version} has no kafka-features tool",
                         hint="metadata.version exists from Kafka 3.3 on (KRaft)")
    return [main, "--bootstrap-server", f"localhost:{BROKER_PORT}",
            "--command-config", jvm.admin_config(kafka_home, jvm.OPS_ADMIN_CONFIG), *command]


def finalized_metadata(output: str) -> str | None:
    """The ``metadata.version`` level ``kafka-features describe`` says is finalized."""
    for line in output.splitlines():
        if "metadata.version" in line:
            found = re.search(r"FinalizedVersionLevel:\s*(\S+)", line)
            if found:
                return found.group(1)
    return None


def tool_file(node: KafkaNode, name: str) -> str:
    """Where a tool's input file ``name`` goes on ``node`` (its run directory)."""
    return node.at(f"{RUN_DIR}/{name}")


def tool_node(cluster: Cluster) -> KafkaNode:
    """The first node (in node order) whose broker is running: where the tools run."""
    for node in cluster.nodes.values():
        if node.state() == "running":
            return node
    raise ClusterError("no broker is running to run Kafka's admin tools on")


def election_outcome(output: str) -> dict[str, Any]:
    """What kafka-leader-election said per partition: ``elected``, ``not-needed``
    (a valid leader already led it), ``failed`` (partition -> reason)."""
    out: dict[str, Any] = {}
    for raw in output.splitlines():
        line = raw.strip()
        if line.startswith("Successfully completed leader election"):
            out["elected"] = _listed(line)
        elif line.startswith("Valid replica already elected for partitions"):
            out["not-needed"] = _listed(line)
        elif line.startswith("Error completing leader election"):
            key, _, why = line.partition("partition: ")[2].partition(": ")
            out.setdefault("failed", {})[key.strip()] = why.strip()
    return out


def _listed(line: str) -> list[str]:
    return sorted(p.strip() for p in line.partition("partitions")[2].split(",") if p.strip())


def quorum_args(version: KafkaVersion, kafka_home: str, *command: str, controllers: str,
                command_config: str | None = None) -> list[str]:
    """``kafka-metadata-quorum`` ``command`` (``describe --status``; ``remove-controller
    --controller-id 2 --controller-directory-id D``; ``add-controller``) sent to the
    ``controllers`` (``host:port,...``, KIP-919), not through a broker: a broker forwards
    a voter change to the controller it last knew as active, and after the quorum's
    leader moves while the old one stays up, that one answers NOT_LEADER_OR_FOLLOWER,
    which the broker does not take as a moved controller (only DescribeQuorum's answer
    is translated to NOT_CONTROLLER). A controller names the leader from its own raft
    state. ``add-controller`` reads the controller it adds (node id, directory id,
    endpoint) from ``command_config``: that node's own server.properties."""
    if version.quorum_tool_main is None:
        raise UsageError(f"Kafka {version.version} has no metadata quorum tool",
                         hint="kafka-metadata-quorum exists from Kafka 3.3 on (KRaft)")
    config = command_config or jvm.admin_config(kafka_home, jvm.OPS_ADMIN_CONFIG)
    return [version.quorum_tool_main, "--bootstrap-controller", controllers,
            "--command-config", config, *command]


@dataclass(frozen=True)
class QuorumStatus:
    """What ``kafka-metadata-quorum describe --status`` says: the leader (active
    controller), and each voter's and observer's node id -> directory id."""

    leader: int | None
    voters: Mapping[int, str]
    observers: Mapping[int, str]

    def record(self) -> dict[str, Any]:
        """As a completion records it: node names, the leader's and the voters'."""
        return {"leader": None if self.leader is None else f"n{self.leader}",
                "voters": [f"n{i}" for i in sorted(self.voters)],
                "observers": [f"n{i}" for i in sorted(self.observers)]}


def quorum_status(output: str) -> QuorumStatus | None:
    """``describe --status`` read (``LeaderId``, ``CurrentVoters``, ``CurrentObservers``:
    JSON lists of ``{"id", "directoryId", ...}``); None if the output has no voter list
    (the tool failed)."""
    leader = re.search(r"^LeaderId:\s*(-?\d+)", output, re.MULTILINE)
    voters, observers = _members(output, "CurrentVoters"), _members(output, "CurrentObservers")
    if voters is None:
        return None
    lid = int(leader.group(1)) if leader else -1
    return QuorumStatus(lid if lid >= 0 else None, voters, observers or {})


def _members(output: str, field: str) -> dict[int, str] | None:
    line = re.search(rf"^{field}:\s*(\[.*\])\s*$", output, re.MULTILINE)
    if line is None:
        return None
    try:
        members = json.loads(line.group(1))
        return {int(m["id"]): str(m.get("directoryId", "")) for m in members}
    except (ValueError, KeyError, TypeError):
        return None
