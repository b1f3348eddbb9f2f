"""Power loss: a broker's node loses every write it never fsynced, and stays down until powered on.

SIGKILL inside Docker loses nothing (the host's page cache outlives the
container), so this fault needs the power-loss filesystem under the broker's
data directory (``ClusterSpec.power_loss_fs``, ``cluster.power_loss_fs``). On
each target node, in this order: the filesystem is told ``lose`` first (it
drops what is pending and answers only EIO from then on, so nothing the broker
still flushes reaches the disk), the broker is SIGKILLed, and the dead mount
is taken away. ``power-on`` (default ``all``) mounts what the disk kept and
starts the broker, as ``start`` does for a kill.

A broker already stopped (killed earlier) still loses its node's unsynced
writes: its data sat in the filesystem's memory, as a killed process's writes
sit in a real page cache. ZooKeeper's data is not on the filesystem and its
server keeps running: only the broker loses power.

Values: ``{"lost": {"n2": {"pid": 412, "files": 3, "bytes": 81920, "entries": 1}}}``
(``pid`` null when the broker was already down; files, bytes and entries are what
was dropped: files with unsynced data or names, bytes in unsynced pages, names
not yet durable), ``{"started": {"n2": 977}}``. A cluster built without the
filesystem is refused: the completion says so and nothing is done; there is no
fallback that truncates logs to Kafka's recovery point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cluster import power_loss_fs
from nemesis.nodes import completion
from nemesis.process import KillNemesis, _target

if TYPE_CHECKING:
    from cluster import Cluster
    from cluster.daemon import State
    from cluster.kafka_node import KafkaNode

#: The refusal when the cluster has no power-loss filesystem.
NO_FS = ("power-loss needs the power-loss filesystem under the brokers' data: run with "
         "--power-loss-fs (insync run turns it on by itself when --nemesis has power-loss)")


def cut_power(node: KafkaNode) -> tuple[State, dict[str, Any]]:
    """Drop what ``node`` never fsynced, kill its broker, take the dead mount away: the
    broker's state (as the kill found it) and what was dropped."""
    dropped = (power_loss_fs.lose(node.data_mount) if power_loss_fs.is_mounted(node.data_mount)
               else {"files": 0, "bytes": 0, "entries": 0})  # already cut, never powered on
    state, pid = node.kill_if_up()
    power_loss_fs.unmount(node.data_mount)
    return state, {"pid": pid, **dropped}


class PowerLossNemesis(KillNemesis):
    """``power-loss`` cuts the target nodes' power; ``power-on`` (default ``all``) restores it."""

    start_f, stop_f = "power-loss", "power-on"

    def invoke(self, cluster: Cluster, op: Mapping[str, Any]) -> dict[str, Any]:
        if op["f"] == self.stop_f:
            return self._act(cluster, _target(op, "all"), "started", lambda n: n.start_if_down())
        target = _target(op, "one")
        if not all(n.spec.power_loss_fs for n in cluster.nodes.values()):
            return completion({"target": target}, NO_FS)
        return self._act(cluster, target, "lost", cut_power, fault=True)
