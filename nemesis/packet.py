"""Packet faults: what this kernel can really do, and an honest error for the rest.

* **loss** (probability p): ``iptables -m statistic --mode random`` DROPs in the
  ``INSYNC-LOSS`` chain, for packets from the other Kafka nodes (clients are
  spared); works without netem.
* **rate** (kbit/s): a ``tbf`` root qdisc on the node's eth0 (egress, so it also
  slows replies to clients); works without netem.
* **delay**, **jitter**, **duplicate**: need ``tc netem``. ``setup`` probes each
  node for it; where it is missing, the op still applies what it can and its
  completion carries ``error`` naming what was not applied. With netem, delay,
  duplication and rate go into one netem qdisc.

``start-packet`` ``{"target": t, "loss": 0.1, "rate-kbit": 1000, "delay-ms": 50,
"jitter-ms": 10, "duplicate": 0.05}`` → ``{"nodes": [...], "applied": {...},
"not-applied": {...}}``; ``stop-packet`` clears every node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster.remote import sh
from nemesis.errors import TeardownIncomplete
from nemesis.net import (
    LOSS_CHAIN,
    drop_from,
    flush,
    netem_probe,
    remove_chain,
    tc_clear,
    tc_replace,
)
from nemesis.nodes import Resolver, completion, on_nodes, on_nodes_timed

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

START, STOP = "start-packet", "stop-packet"
NETEM_ONLY = ("delay-ms", "jitter-ms", "duplicate")
KNOWN = ("loss", "rate-kbit", *NETEM_ONLY)


def netem_args(behaviour: Mapping[str, float]) -> list[str]:
    """``tc ... netem`` arguments for delay, jitter, duplication and rate."""
    args = ["netem"]
    if behaviour.get("delay-ms"):
        args += ["delay", f"{behaviour['delay-ms']:g}ms"]
        if behaviour.get("jitter-ms"):
            args.append(f"{behaviour['jitter-ms']:g}ms")
    if behaviour.get("duplicate"):
        args += ["duplicate", f"{100 * behaviour['duplicate']:g}%"]
    if behaviour.get("rate-kbit"):
        args += ["rate", f"{behaviour['rate-kbit']:g}kbit"]
    return args


def tbf_args(rate_kbit: float) -> list[str]:
    return ["tbf", "rate", f"{rate_kbit:g}kbit", "burst", "32kbit", "latency", "400ms"]


class PacketNemesis:
    """Random loss and bandwidth limits everywhere; delay/duplication where netem exists."""

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or Resolver()
        self.netem: dict[str, bool] = {}

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        """Clear leftovers, then probe every node for netem."""
        self.teardown(cluster)
        probed, _ = on_nodes(
            lambda n: sh(n.remote, netem_probe(), check=False).ok, cluster, cluster.nodes
        )
        self.netem = {n: probed.get(n, False) for n in cluster.nodes}

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == STOP:
            cleared = on_nodes_timed(self._clear, cluster, cluster.nodes)
            return completion(cleared.recorded({"healed": sorted(cleared.results)}),
                              cleared.errors)
        args = op.get("value") or {}
        target = args.get("target", "all")
        behaviour = {k: float(args[k]) for k in KNOWN if args.get(k)}
        unknown = sorted(set(args) - {"target", *KNOWN})
        try:
            hit = self.resolver.hit(cluster, target)
        except Exception as err:
            return completion({"target": target}, f"{type(err).__name__}: {err}")
        names = hit.nodes
        addresses = {n: cluster.nodes[n].address for n in cluster.nodes}

        def apply(node: KafkaNode) -> dict[str, Any]:
            applied: dict[str, float] = {}
            missing: dict[str, float] = {}
            scripts = []
            args: list[str] = []  # drop_from's (the peers' addresses): the only arguments
            if "loss" in behaviour:
                peers = [a for n, a in addresses.items() if n != node.name]
                drop, args = drop_from(LOSS_CHAIN, peers, behaviour["loss"],
                                       keep_ports=node.control_ports)
                scripts.append(drop)
                applied["loss"] = behaviour["loss"]
            shaping = {k: v for k, v in behaviour.items() if k != "loss"}
            if self.netem.get(node.name) and shaping:
                scripts.append(tc_replace(netem_args(shaping)))
                applied.update(shaping)
            else:
                if "rate-kbit" in shaping:
                    scripts.append(tc_replace(tbf_args(shaping["rate-kbit"])))
                    applied["rate-kbit"] = shaping["rate-kbit"]
                missing = {k: v for k, v in shaping.items() if k in NETEM_ONLY}
            if len(scripts) == 1:
                sh(node.remote, scripts[0], *args)
            elif scripts:  # one command per node, stopping at the first that fails
                sh(node.remote, " && ".join(f"{{ {script}; }}" for script in scripts), *args)
            return {"applied": applied, "not-applied": missing}

        landed = on_nodes_timed(apply, cluster, names)
        done, errors = landed.results, landed.errors
        value: dict[str, Any] = landed.recorded({
            "target": target, "nodes": sorted(done),
            "applied": {n: d["applied"] for n, d in sorted(done.items())}, **hit.record})
        problems: dict[str, str] = dict(errors)
        missing = {n: d["not-applied"] for n, d in sorted(done.items()) if d["not-applied"]}
        if missing:
            value["not-applied"] = missing
            for n, m in missing.items():
                problems[n] = f"netem is unavailable on this kernel: {', '.join(m)} not applied"
        if unknown:
            problems["request"] = f"unknown packet behaviours {unknown}; known: {list(KNOWN)}"
        return completion(value, problems)

    @staticmethod
    def _clear(node: KafkaNode) -> None:
        sh(node.remote, f"{flush(LOSS_CHAIN)}; {tc_clear()}")

    def teardown(self, cluster: Cluster) -> None:
        def clear(node: KafkaNode) -> None:
            sh(node.remote, f"{remove_chain(LOSS_CHAIN)}; {tc_clear()}")

        _, errors = on_nodes(clear, cluster, cluster.nodes)
        if errors:
            raise TeardownIncomplete({f"packet {n}": e for n, e in errors.items()})
