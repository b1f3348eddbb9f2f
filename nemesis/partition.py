"""Network partitions: iptables DROP rules between Kafka nodes, recorded as exact grudges.

``start-partition`` takes a shape (``one``, ``majority``, ``majorities-ring``,
``minority-third``, ``one-way``, ``leaders``/``primaries``, ``controller``) or an
explicit ``{"isolate": target}``, ``{"components": [[...], ...]}`` or
``{"grudge": {node: [nodes]}}``; it replaces any partition in force. Its value
records the cut: ``{"shape": ..., "isolated": [["n1"], ["n2", "n3"]]}`` for a
component partition, ``{"shape": ..., "grudge": {"n1": ["n2"]}}`` (node → nodes
it cannot hear from) otherwise. Clients (arriving at each node from its
``client_source``) keep reaching every node, unless ``partition_clients``:
then they side with the majority, i.e. they are cut off from every node that
hears from fewer than a majority of the nodes (itself included), and the value
lists those under ``clients-cut``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import nemesis.grudge as g
from cluster.remote import sh
from nemesis.errors import NemesisError, TeardownIncomplete
from nemesis.net import (
    PARTITION_CHAIN,
    drop_from,
    ensure_chain,
    flush,
    remove_chain,
)
from nemesis.nodes import Resolver, completion, on_nodes

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode

START, STOP = "start-partition", "stop-partition"


class PartitionNemesis:
    """Cuts the network between nodes; heals by flushing insync's chain."""

    def __init__(self, resolver: Resolver | None = None, *, partition_clients: bool = False):
        self.resolver = resolver or Resolver()
        self.partition_clients = partition_clients

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        def prepare(node: KafkaNode) -> None:
            sh(node.remote, f"{ensure_chain(PARTITION_CHAIN)}; "
                            f"{flush(PARTITION_CHAIN)}")

        _, errors = on_nodes(prepare, cluster, cluster.nodes)
        if errors:
            raise NemesisError(f"cannot prepare iptables: {errors}")

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == STOP:
            return self._heal(cluster)
        try:
            value, grudge = self._grudge(cluster, op.get("value"))
        except Exception as err:  # bad shape, metadata unavailable: recorded, not fatal
            return completion({"requested": op.get("value")}, f"{type(err).__name__}: {err}")
        nodes = list(cluster.nodes)
        if self.partition_clients:
            cut = clients_cut(grudge, nodes)
            value["clients-cut"] = cut
        else:
            cut = []
        addresses = {n: cluster.nodes[n].address for n in nodes}

        def apply(node: KafkaNode) -> None:
            sources = [addresses[m] for m in sorted(grudge.get(node.name, ()))]
            if node.name in cut:
                if not node.client_source:
                    raise ValueError(f"on {node.name}: no address the clients come from")
                sources.append(node.client_source)
            sh(node.remote, drop_from(PARTITION_CHAIN, sources))

        _, errors = on_nodes(apply, cluster, nodes)
        return completion(value, errors)

    def _grudge(self, cluster: Cluster, spec: Any) -> tuple[dict[str, Any], g.Grudge]:
        """What to cut for ``spec``, and the value describing it."""
        nodes = list(cluster.nodes)
        rng = self.resolver.rng
        if isinstance(spec, Mapping) and "grudge" in spec:
            grudge = g.normalize(spec["grudge"])
            return {"shape": "grudge", "grudge": g.as_json(grudge)}, grudge
        components: g.Components | g.Grudge
        if isinstance(spec, Mapping) and "components" in spec:
            shape = "components"
            components = [list(c) for c in spec["components"]]
            listed = [n for c in components for n in c]
            rest = [n for n in nodes if n not in listed]
            components = [c for c in [*components, rest] if c]
        elif isinstance(spec, Mapping) and "isolate" in spec:
            shape = f"isolate {spec['isolate']}"
            components = g.isolate(self.resolver.nodes(cluster, spec["isolate"]), nodes)
        elif spec in ("leaders", "primaries"):
            shape = str(spec)
            leaders = self.resolver.nodes(cluster, "leaders")
            if not leaders:
                raise ValueError("no partition of the workload has a leader right now")
            components = g.isolate(leaders, nodes, each=True)
        elif spec == "controller":
            shape = "controller"
            components = g.isolate(self.resolver.nodes(cluster, "controller"), nodes)
        elif isinstance(spec, str):
            shape = spec
            components = g.plain_shape(spec, nodes, rng)
        else:
            raise ValueError(f"not a partition: {spec!r}")
        if isinstance(components, dict):
            grudge = g.normalize(components)
            return {"shape": shape, "grudge": g.as_json(grudge)}, grudge
        unknown = sorted({n for c in components for n in c} - set(nodes))
        if unknown:
            raise ValueError(f"unknown nodes {unknown}")
        grudge = g.normalize(g.complete_grudge(components))
        return {"shape": shape, "isolated": components}, grudge

    def _heal(self, cluster: Cluster) -> dict[str, Any]:
        done, errors = on_nodes(
            lambda n: sh(n.remote, flush(PARTITION_CHAIN)), cluster, cluster.nodes
        )
        return completion({"healed": sorted(done)}, errors)

    def teardown(self, cluster: Cluster) -> None:
        _, errors = on_nodes(
            lambda n: sh(n.remote, remove_chain(PARTITION_CHAIN)), cluster, cluster.nodes
        )
        if errors:
            raise TeardownIncomplete({f"partition {n}": e for n, e in errors.items()})


def clients_cut(grudge: Mapping[str, frozenset[str]], nodes: list[str]) -> list[str]:
    """Nodes that hear from fewer than a majority of the nodes, itself included."""
    need = g.majority(len(nodes))
    return [n for n in nodes if len(nodes) - len(grudge.get(n, frozenset())) < need]
