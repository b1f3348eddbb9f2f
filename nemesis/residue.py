"""What faults left behind on a node: the check that teardown really healed.

Used by tests and available to the runner after teardown. Each finding is one
human-readable line; an empty list means the node is clean.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cluster.kafka_node import FAKETIME_CONTROL
from cluster.remote import sh
from nemesis import net
from nemesis.clock import STROBE_PIDFILE
from nemesis.nodes import on_nodes

if TYPE_CHECKING:
    from cluster.kafka_node import KafkaNode
    from cluster.lifecycle import Cluster

SHAPING_QDISCS = ("netem", "tbf", "htb")


def node_residue(node: KafkaNode) -> list[str]:
    """Leftover rules, qdiscs, stopped processes, clock offsets, strobe loops, dead brokers."""
    found: list[str] = []
    rules = sh(node.remote, f"{net.IPT} -S").stdout
    found += [f"iptables: {r}" for r in rules.splitlines() if "INSYNC" in r]
    qdiscs = sh(node.remote, "tc qdisc show").stdout
    found += [f"qdisc: {q}" for q in qdiscs.splitlines()
              if any(f"qdisc {k} " in q for k in SHAPING_QDISCS)]
    procs = sh(node.remote, "ps -eo pid=,stat=,comm=").stdout
    for line in procs.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].startswith("T"):
            found.append(f"stopped process: {line.strip()}")
    ctl = sh(node.remote, f"cat {FAKETIME_CONTROL} 2>/dev/null", check=False).stdout.strip()
    if ctl and ctl not in ("+0", "+0.000"):
        found.append(f"faketime offset: {ctl!r}")
    strobe = sh(node.remote, f"cat {STROBE_PIDFILE} 2>/dev/null", check=False).stdout.strip()
    if strobe:
        found.append(f"strobe loop pidfile: {strobe}")
    if node.state() == "stopped":
        found.append("broker not running")
    return found


def residue(cluster: Cluster) -> dict[str, list[str]]:
    """Findings per node (nodes that could not be checked say so); ``{}`` when all clean."""
    found, errors = on_nodes(node_residue, cluster, cluster.nodes)
    out = {n: f for n, f in found.items() if f}
    out.update({n: [f"could not check: {e}"] for n, e in errors.items()})
    return dict(sorted(out.items()))
