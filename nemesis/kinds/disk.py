"""The ``disk`` kind: a broker's disk turns slow, fails, fills up or rots (``lazyfs.faults``).

The faults live in the power-loss filesystem under the broker's data
(``--power-loss-fs``, which ``insync run`` turns on by itself for this kind),
and are started and healed through its control file
(``cluster.power_loss_fs.disk_fault``). Kafka meets them as a real disk's:
an IOException takes the log directory offline, and a broker with one log
directory shuts down.

``start-disk`` ``{"target": "leaders", "kind": "full", "bytes": 0}`` (any of a
fault's fields, ``cluster.lazyfs.faults``) → ``{"target", "nodes", "fault":
{...}, "disk": {node: [faults in force]}}``; ``stop-disk`` heals every node and
starts again each broker that stopped while its disk failed (the operator
replaced the disk): ``{"healed": {node: [what each fault did: hits, bytes
used]}, "restarted": {node: pid}}``. A broker a ``kill`` took down (the run's
ledger of faults in force) is left to its ``start``. A cluster without the
filesystem is refused: the completion says so and nothing is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster import power_loss_fs
from cluster.lazyfs.faults import parse
from nemesis.errors import TeardownIncomplete
from nemesis.kinds import choice, chosen, target_of
from nemesis.nodes import Resolver, completion, on_nodes, on_nodes_timed
from nemesis.targets import is_target

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.kafka_node import KafkaNode
    from harness.gen.core import Rng
    from nemesis.protocol import Nemesis
    from nemesis.settings import NemesisOptions

START, STOP = "start-disk", "stop-disk"
#: Drawn targets (without ``--nemesis-targets``): one broker, or a leader of a key.
DISK_TARGETS = ("one", "leaders")
#: The faults the random generator draws from, one level each turn.
DRAWN: tuple[dict[str, Any], ...] = (
    {"kind": "slow", "ms": 20}, {"kind": "slow", "ms": 200}, {"kind": "slow", "ms": 1000},
    {"kind": "error", "ops": ["fsync"], "once": True},
    {"kind": "error", "ops": ["write"]},
    {"kind": "error"},
    {"kind": "full", "bytes": 0}, {"kind": "full", "bytes": 4 << 20},
    {"kind": "corrupt", "files": "*.log"},
)
#: The refusal when the cluster has no power-loss filesystem.
NO_FS = ("disk faults need the power-loss filesystem under the brokers' data: run with "
         "--power-loss-fs (insync run turns it on by itself when --nemesis has disk)")


def start_op(opts: NemesisOptions, rng: Rng) -> dict[str, Any]:
    """A drawn fault of ``DRAWN`` on a drawn target (``DISK_TARGETS`` unless named)."""
    target, rng = choice(rng, chosen(opts.targets, is_target, DISK_TARGETS))
    fault, rng = choice(rng, DRAWN)
    seed, _ = rng.below(2**31)
    return {"f": START, "value": {"target": target, **fault, "seed": seed}}


def validate(f: str, value: Any, nodes: int | None) -> str | None:
    """A fault ``cluster.lazyfs.faults.parse`` takes, on a target naming nodes."""
    if f == STOP:
        return None
    if not isinstance(value, Mapping):
        return f"a disk fault is a table with kind = slow|error|full|corrupt, got {value!r}"
    fault = {k: v for k, v in value.items() if k != "target"}
    try:
        parse(fault)
    except (ValueError, TypeError, OverflowError) as err:
        return str(err) or f"bad disk fault {fault!r}"
    return target_of(value, nodes)


def make_nemesis(resolver: Resolver, opts: NemesisOptions) -> Nemesis:
    return DiskNemesis(resolver)


def residue(node: KafkaNode) -> list[str]:
    """Disk faults still in force in a node's filesystem."""
    if not (node.spec.power_loss_fs and power_loss_fs.is_mounted(node.data_mount)):
        return []
    return [f"disk fault in force: {f}" for f in power_loss_fs.disk_state(node.data_mount)]


class DiskNemesis:
    """``start-disk`` puts a fault in the target brokers' filesystems; ``stop-disk`` heals."""

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or Resolver()

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, cluster: Cluster) -> None:
        self.teardown(cluster)

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if not all(n.spec.power_loss_fs for n in cluster.nodes.values()):
            return completion({"op": op["f"]}, NO_FS)
        if op["f"] == STOP:
            return self._heal(cluster)
        args = dict(op.get("value") or {}) if isinstance(op.get("value"), Mapping) else {}
        target = args.pop("target", "one")
        try:
            parse(args)  # the filesystem checks it again; a bad one is refused here at once
            hit = self.resolver.hit(cluster, target)
        except Exception as err:  # a bad fault, metadata unavailable, bad target: recorded
            return completion({"target": target, "fault": args}, f"{type(err).__name__}: {err}")
        landed = on_nodes_timed(lambda n: power_loss_fs.disk_fault(n.data_mount, args), cluster,
                                hit.nodes)
        value = landed.recorded({"target": target, "nodes": sorted(landed.results),
                                 "fault": args, "disk": dict(sorted(landed.results.items())),
                                 **hit.record})
        return completion(value, landed.errors)

    def _heal(self, cluster: Cluster) -> dict[str, Any]:
        killed = self.resolver.in_force.state.killed
        mounted = [n for n, node in cluster.nodes.items()
                   if power_loss_fs.is_mounted(node.data_mount)]

        def heal(node: KafkaNode) -> tuple[list[dict[str, Any]], int | None]:
            healed = power_loss_fs.heal_disk(node.data_mount)
            if node.name in killed or not healed:
                return healed, None
            _, pid = node.start_if_down()  # it shut down on the failed disk
            return healed, pid

        landed = on_nodes_timed(heal, cluster, mounted)
        value: dict[str, Any] = {"healed": {n: h for n, (h, _) in sorted(landed.results.items())
                                            if h}}
        restarted = {n: pid for n, (_, pid) in sorted(landed.results.items()) if pid is not None}
        if restarted:
            value["restarted"] = restarted
        return completion(landed.recorded(value), landed.errors)

    def teardown(self, cluster: Cluster) -> None:
        def heal(node: KafkaNode) -> None:
            if node.spec.power_loss_fs and power_loss_fs.is_mounted(node.data_mount):
                power_loss_fs.heal_disk(node.data_mount)

        _, errors = on_nodes(heal, cluster, cluster.nodes)
        if errors:
            raise TeardownIncomplete({f"disk {n}": e for n, e in errors.items()})
