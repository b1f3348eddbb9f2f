"""Network partitions: iptables DROP rules between Kafka nodes, recorded as exact grudges.

``start-partition`` takes a shape (``one``, ``majority``, ``majorities-ring``,
``minority-third``, ``one-way``, ``bridge``, ``leaders[:N]``/``primaries[:N]``,
``controller``) or an explicit ``{"isolate": target}``, ``{"components": [[...],
...]}`` or ``{"grudge": {node: [nodes]}}``; it replaces any partition in force.
Its value records the cut: ``{"shape": ..., "isolated": [["n1"], ["n2", "n3"]]}``
for a component partition, ``{"shape": ..., "grudge": {"n1": ["n2"]}}`` (node →
nodes it cannot hear from) otherwise, plus ``rewritten-from`` when a shape that
degenerates on this cluster was rewritten (``nemesis.shapes``). Clients
(arriving at each node from its ``client_source``) keep reaching every node,
unless ``partition_clients``: then they side with the majority, i.e. they are
cut off from every node that hears from fewer than a majority of the nodes
(itself included), and the value lists those under ``clients-cut``.

The cut is judged with the nodes other faults keep down (killed, paused:
``nemesis.in_force``) and entered in the run's ledger of faults in force; a
partition withheld because of them cuts nothing and leaves any cut in force
as it was. ``stop-partition`` takes the healed nodes' rules out of the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import nemesis.grudge as g
from cluster.remote import sh
from nemesis.errors import NemesisError, TeardownIncomplete
from nemesis.in_force import InForce
from nemesis.net import (
    PARTITION_CHAIN,
    drop_from,
    ensure_chain,
    flush,
    remove_chain,
)
from nemesis.nodes import Resolver, completion, on_nodes, on_nodes_timed
from nemesis.shapes import Cut, plan

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

        done, errors = on_nodes(prepare, cluster, cluster.nodes)
        self.resolver.in_force.update(lambda s: s.uncut(done))
        if errors:
            raise NemesisError(f"cannot prepare iptables: {errors}")

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == STOP:
            return self._heal(cluster)
        try:  # decided and entered in the ledger in one step: nothing can slip in between
            planned = self.resolver.in_force.decide(
                lambda s: self._decide(cluster, op.get("value"), s))
        except Exception as err:  # bad shape, metadata unavailable: recorded, not fatal
            return completion({"requested": op.get("value")}, f"{type(err).__name__}: {err}")
        if not planned.applied:
            return completion(planned.value)
        value, grudge = planned.value, planned.grudge
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
            script, args = drop_from(PARTITION_CHAIN, sources, keep_ports=node.control_ports)
            sh(node.remote, script, *args)

        landed = on_nodes_timed(apply, cluster, nodes)  # one command per node
        return completion(landed.recorded(value), landed.errors)

    def _decide(self, cluster: Cluster, spec: Any, state: InForce) -> tuple[Cut, InForce]:
        """What to cut for ``spec`` with ``state`` in force (``nemesis.shapes``), and the
        state with it in force (the new cut replaces the old)."""
        cut = plan(spec, list(cluster.nodes), cluster.spec.controller_nodes, self.resolver.rng,
                   lambda target: self.resolver.nodes(cluster, target), in_force=state)
        return cut, (state.cut(cut.grudge) if cut.applied else state)

    def _heal(self, cluster: Cluster) -> dict[str, Any]:
        landed = on_nodes_timed(
            lambda n: sh(n.remote, flush(PARTITION_CHAIN)), cluster, cluster.nodes
        )
        self.resolver.in_force.update(lambda s: s.uncut(landed.results))
        return completion(landed.recorded({"healed": sorted(landed.results)}), landed.errors)

    def teardown(self, cluster: Cluster) -> None:
        done, errors = on_nodes(
            lambda n: sh(n.remote, remove_chain(PARTITION_CHAIN)), cluster, cluster.nodes
        )
        self.resolver.in_force.update(lambda s: s.uncut(done))
        if errors:
            raise TeardownIncomplete({f"partition {n}": e for n, e in errors.items()})


def clients_cut(grudge: Mapping[str, frozenset[str]], nodes: list[str]) -> list[str]:
    """Nodes that hear from fewer than a majority of the nodes, itself included."""
    need = g.majority(len(nodes))
    return [n for n in nodes if len(nodes) - len(grudge.get(n, frozenset())) < need]
