"""The ``power-loss`` kind on fake nodes: the filesystem is told ``lose`` before the broker dies,
the node stays down with no mount until ``power-on``, and a cluster without the filesystem is
refused. (The real filesystem is tested in ``tests/cluster/lazyfs``.)"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from cluster import Cluster
from cluster.spec import ClusterSpec
from harness.base.faults import fault_kind
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.power_loss import NO_FS, PowerLossNemesis
from nemesis.settings import NemesisOptions
from tests.nemesis.fakes import FakeNode, cluster_of, landed
from tests.support.shell_text import script_text

DROPPED = {"files": 2, "bytes": 8192, "entries": 1}


@dataclass
class PowerNode(FakeNode):
    """A node whose data directory is a lazyfs mount served by its own daemon (pid 900)."""

    mounted: bool = True
    daemon: int | None = 900
    events: list[str] = field(default_factory=list)

    def handle(self, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        script = script_text(argv)
        if argv[3:4] == ("insync-signal",):  # cluster.daemon.SIGNAL_SCRIPT: pidfile, signal
            pidfile, sig = argv[4], argv[5]
            if "lazyfs.pid" in pidfile:
                if self.daemon is None:
                    return 0, "stopped\n", ""
                pid = self.daemon
                if sig == "KILL":
                    self.events.append("kill-daemon")
                    self.daemon = None
                return 0, f"running {pid}\n", ""
            if sig == "KILL" and self.pid is not None and self.stat != "Z":
                self.events.append("kill-broker")
        if argv[:2] == ("kill", "-KILL") and int(argv[2]) == self.daemon:
            self.events.append("kill-daemon")
            self.daemon = None
            return 0, "", ""
        if argv[:2] == ("kill", "-KILL") and int(argv[2]) == self.pid:
            self.events.append("kill-broker")
        if "lazyfs.pid" in script:  # the daemon's own pidfile: start or probe
            self.scripts.append(script)
            if "setsid" in script:
                self.daemon, self.mounted = 900, True
                self.events.append("mount")
                return 0, "900\n", ""
            return 0, "" if self.daemon is None else "900 Sl\n", ""
        if "fuse.lazyfs" in script and "stat" in script:  # is_mounted
            return (0, "", "") if self.mounted and self.daemon else (1, "", "")
        if "echo lose" in script:
            self.events.append("lose")
            self.mounted = False  # EIO from now on: no longer counts as mounted
            return 0, json.dumps({"lost": True, "dropped": DROPPED}) + "\n", ""
        if "fusermount3 -u -z" in script:
            self.events.append("unmount")
        if "setsid" in script:
            self.events.append("start-broker")
        return super().handle(argv, stdin)


def power_cluster(*, fs: bool = True) -> tuple[Cluster, dict[str, PowerNode]]:
    spec = ClusterSpec(name="fake", nodes=3, power_loss_fs=fs)
    fakes = {name: PowerNode(name) for name in spec.node_names}
    return cluster_of(spec, {name: f.handle for name, f in fakes.items()}), fakes


def test_power_loss_drops_pending_writes_before_the_broker_dies() -> None:
    cluster, fakes = power_cluster()
    out = PowerLossNemesis(Resolver()).invoke(cluster, {"f": "power-loss", "value": "n2"})
    assert landed(out) == {"value": {"lost": {"n2": {"pid": 100, **DROPPED}}, "target": "n2"}}
    assert fakes["n2"].events == ["lose", "kill-broker", "kill-daemon", "unmount"]
    assert fakes["n1"].events == [] and fakes["n3"].events == []


def test_the_node_stays_down_until_power_on_mounts_then_starts() -> None:
    cluster, fakes = power_cluster()
    nem = PowerLossNemesis(Resolver())
    nem.invoke(cluster, {"f": "power-loss", "value": "n1"})
    assert load(fault_kind("power-loss")).residue(cluster.nodes["n1"]) == [
        "power-loss filesystem not mounted (power never restored)"]
    fakes["n1"].events.clear()
    out = nem.invoke(cluster, {"f": "power-on", "value": None})
    assert out["value"]["started"] == {"n1": 501}
    assert fakes["n1"].events == ["unmount", "mount", "start-broker"]  # a stale mount goes first
    assert load(fault_kind("power-loss")).residue(cluster.nodes["n1"]) == []


def test_a_broker_killed_earlier_still_loses_what_its_node_never_synced() -> None:
    cluster, fakes = power_cluster()
    cluster.nodes["n3"].kill()
    fakes["n3"].events.clear()
    out = PowerLossNemesis(Resolver()).invoke(cluster, {"f": "power-loss", "value": "n3"})
    assert out["value"]["lost"] == {"n3": {"pid": None, **DROPPED}}
    assert fakes["n3"].events == ["lose", "kill-daemon", "unmount"]


def test_without_the_filesystem_power_loss_is_refused_and_nothing_is_done() -> None:
    cluster, fakes = power_cluster(fs=False)
    out = PowerLossNemesis(Resolver()).invoke(cluster, {"f": "power-loss", "value": "n1"})
    assert out == {"value": {"target": "n1"}, "error": NO_FS}
    assert all(f.events == [] and f.signals == [] for f in fakes.values())


def test_a_run_with_power_loss_asks_for_the_filesystem_and_others_do_not() -> None:
    assert NemesisOptions(faults=("power-loss",)).needs_power_loss_fs
    assert not NemesisOptions(faults=("kill", "partition")).needs_power_loss_fs
