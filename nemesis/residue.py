"""What faults left behind on a node: the check that teardown really healed.

Used by tests and available to the runner after teardown. Each finding is one
human-readable line; an empty list means the node is clean. Every fault kind
in the registry probes for its own leftovers (``FaultImpl.residue``), whether
or not this run used it: a crashed earlier run may have left any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.base import faults
from nemesis.kinds import load
from nemesis.nodes import on_nodes

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode


def node_residue(node: KafkaNode) -> list[str]:
    """Each kind's leftovers (rules, qdiscs, stopped processes, clocks), then a dead broker.

    A broker that is not running is reported whatever stopped it (a kill never
    restarted, or a crash), so no kind owns that finding.
    """
    found = [line for kind in faults.FAULT_KINDS for line in load(kind).residue(node)]
    if node.state() == "stopped":
        found.append("broker not running")
    return found


def residue(cluster: Cluster) -> dict[str, list[str]]:
    """Findings per node (nodes that could not be checked say so); ``{}`` when all clean."""
    found, errors = on_nodes(node_residue, cluster, cluster.nodes)
    out = {n: f for n, f in found.items() if f}
    out.update({n: [f"could not check: {e}"] for n, e in errors.items()})
    return dict(sorted(out.items()))
