"""The ``disk`` kind on fake nodes whose filesystems are the real fault model (``lazyfs.faults``):
what each op sends, records and heals; a broker that died on its disk is started again; a cluster
without the filesystem, and a bad fault, are refused. (The filesystem itself is tested in
``tests/cluster/lazyfs``.)"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cluster import Cluster
from cluster.broker_config import DATA_DIR
from cluster.lazyfs import CONTROL
from cluster.lazyfs.faults import Disk, parse
from cluster.spec import ClusterSpec
from harness.base.faults import fault_kind, fault_spans
from harness.gen import nemesis as nemesis_gen
from harness.gen import phases, simulate, time_limit
from harness.gen.core import Rng
from nemesis import build_package
from nemesis.kinds import disk, load
from nemesis.nodes import Resolver
from nemesis.settings import NemesisOptions
from results.coverage import coverage
from tests.nemesis.fakes import cluster_of
from tests.nemesis.test_nemesis_power_loss import PowerNode

FULL = {"kind": "full", "bytes": 0}


@dataclass
class DiskNode(PowerNode):
    """A node whose control file is served by a real ``Disk``."""

    disk: Disk = field(default_factory=Disk)
    sent: list[str] = field(default_factory=list)

    def _state(self) -> str:
        return json.dumps({"lost": False, "disk": self.disk.state()}) + "\n"

    def handle(self, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        if argv[3:4] == ("insync-lazyfs",):
            command = argv[4]
            self.sent.append(command)
            if command == "heal":
                self.disk.heal()
            else:
                try:
                    self.disk.start(json.loads(command.removeprefix("disk ")))
                except ValueError:
                    return 1, self._state(), ""
            return 0, self._state(), ""
        if argv == ("cat", "--", f"{DATA_DIR}/{CONTROL}"):
            return 0, self._state(), ""
        return super().handle(argv, stdin)


def disk_cluster(*, fs: bool = True) -> tuple[Cluster, dict[str, DiskNode]]:
    spec = ClusterSpec(name="fake", nodes=3, power_loss_fs=fs)
    fakes = {name: DiskNode(name) for name in spec.node_names}
    handlers = {name: f.handle for name, f in fakes.items()}
    return cluster_of(spec, handlers, client_source="10.0.0.254"), fakes


def test_start_disk_puts_the_fault_in_the_target_filesystem_and_records_it() -> None:
    cluster, fakes = disk_cluster()
    nem = disk.DiskNemesis(Resolver())
    out = nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n2", **FULL}})
    assert "error" not in out
    value = out["value"]
    assert value["target"] == "n2" and value["nodes"] == ["n2"] and value["fault"] == FULL
    assert value["disk"]["n2"] == [{"kind": "full", "bytes": 0, "used": 0, "files": "*",
                                    "ops": ["write"], "hits": 0}]
    assert fakes["n2"].disk.active and not fakes["n1"].disk.active
    kind = load(fault_kind("disk"))
    assert kind.residue(cluster.nodes["n2"]) == [
        f"disk fault in force: {value['disk']['n2'][0]}"]
    assert kind.residue(cluster.nodes["n1"]) == []

    fakes["n2"].disk.faults["full"].hits = 4  # the broker met it four times
    out = nem.invoke(cluster, {"f": "stop-disk", "value": None})
    assert out["value"]["healed"] == {"n2": [{**value["disk"]["n2"][0], "hits": 4}]}
    assert "restarted" not in out["value"]  # its broker kept running
    assert kind.residue(cluster.nodes["n2"]) == []


def test_stop_disk_starts_a_broker_that_died_on_its_disk_but_not_one_a_kill_took() -> None:
    cluster, fakes = disk_cluster()
    resolver = Resolver()
    nem = disk.DiskNemesis(resolver)
    nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n1", "kind": "error"}})
    nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n3", "kind": "error"}})
    for name in ("n1", "n3"):  # Kafka shut both down on EIO; the nemesis killed n3 as well
        cluster.nodes[name].kill()
    resolver.in_force.update(lambda s: s.claim("killed", ["n3"]))
    fakes["n1"].events.clear()
    out = nem.invoke(cluster, {"f": "stop-disk", "value": None})
    assert out["value"]["restarted"] == {"n1": fakes["n1"].pid}
    assert "start-broker" in fakes["n1"].events
    assert sorted(out["value"]["healed"]) == ["n1", "n3"]
    assert cluster.nodes["n3"].state() == "stopped"  # left to the kill's own start


def test_stop_disk_starts_a_broker_that_died_on_a_once_fault_already_spent() -> None:
    cluster, fakes = disk_cluster()
    nem = disk.DiskNemesis(Resolver())
    nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n2", "kind": "error",
                                                        "ops": ["fsync"], "once": True}})
    fault = fakes["n2"].disk.faults.pop("error")  # it fired once and ended: Kafka halted
    fault.hits = 1
    fakes["n2"].disk.healed.append(fault.as_dict())
    fakes["n2"].disk.ended.append(fault.as_dict())
    cluster.nodes["n2"].kill()
    out = nem.invoke(cluster, {"f": "stop-disk", "value": None})
    assert out["value"]["healed"]["n2"][0]["hits"] == 1
    assert out["value"]["restarted"] == {"n2": fakes["n2"].pid}


def test_without_the_filesystem_disk_faults_are_refused_and_nothing_is_sent() -> None:
    cluster, fakes = disk_cluster(fs=False)
    out = disk.DiskNemesis(Resolver()).invoke(
        cluster, {"f": "start-disk", "value": {"target": "n1", **FULL}})
    assert out == {"value": {"op": "start-disk"}, "error": disk.NO_FS}
    assert "\n" not in disk.NO_FS
    assert all(f.sent == [] for f in fakes.values())


def test_a_bad_fault_is_refused_in_its_completion_before_any_node_is_reached() -> None:
    cluster, fakes = disk_cluster()
    out = disk.DiskNemesis(Resolver()).invoke(
        cluster, {"f": "start-disk", "value": {"target": "n1", "kind": "melt"}})
    assert out["value"] == {"target": "n1", "fault": {"kind": "melt"}}
    assert "is not one of slow, error, full, corrupt" in out["error"]
    assert all(f.sent == [] for f in fakes.values())


def test_teardown_heals_every_node() -> None:
    cluster, fakes = disk_cluster()
    nem = disk.DiskNemesis(Resolver())
    nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n1", "kind": "slow", "ms": 5}})
    nem.invoke(cluster, {"f": "start-disk", "value": {"target": "n3", **FULL}})
    nem.teardown(cluster)
    assert not any(f.disk.active for f in fakes.values())
    assert all(f.sent[-1] == "heal" for f in fakes.values())


@pytest.mark.parametrize("seed", range(40))
def test_drawn_faults_are_ones_the_filesystem_takes_on_a_drawn_target(seed: int) -> None:
    op = disk.start_op(NemesisOptions(faults=frozenset({"disk"})), Rng(seed))
    assert op["f"] == "start-disk"
    value: dict[str, Any] = dict(op["value"])
    assert value.pop("target") in disk.DISK_TARGETS
    parse(value)
    value.pop("seed")
    assert value in disk.DRAWN


def test_a_run_with_disk_faults_asks_for_the_filesystem() -> None:
    assert NemesisOptions(faults=frozenset({"disk"})).needs_power_loss_fs
    assert fault_kind("disk").spans == {"disk": ("start-disk", "stop-disk")}


def test_a_fault_script_names_disk_faults_and_gets_the_filesystem_and_the_heal(
    tmp_path: Path,
) -> None:
    script = tmp_path / "disk.toml"
    script.write_text('[[step]]\nat = 5\nf = "start-disk"\n'
                      'value = { target = "leader:t0-0", kind = "full", bytes = 0 }\n'
                      '[[step]]\nafter = 10\nf = "stop-disk"\n')
    opts = NemesisOptions(schedule=script)
    assert opts.needs_power_loss_fs
    pkg = build_package(opts)
    assert pkg.nemesis is not None and {"start-disk", "stop-disk"} <= pkg.nemesis.fs()
    assert {"f": "stop-disk", "value": None} in list(pkg.final_generator or [])


def test_a_random_run_draws_disk_faults_and_coverage_counts_the_sends_while_they_hold() -> None:
    """``--nemesis disk`` alone: the random generator starts and heals disk faults in
    turn, and the coverage block (the registry's spans, as the runner passes them)
    counts a send acknowledged inside a fault under ``disk`` and one outside it not."""
    pkg = build_package(NemesisOptions(faults=frozenset({"disk"}), interval=10))
    gen = phases(time_limit(120, nemesis_gen(pkg.generator)), nemesis_gen(pkg.final_generator))
    faults = [op for op in simulate(gen, concurrency=2, seed=3) if op["f"] != "await-recovery"]
    starts = [op for op in faults if op["f"] == "start-disk" and op["type"] == "invoke"]
    assert len(starts) >= 3 and {op["value"]["kind"] for op in starts} <= {
        "slow", "error", "full", "corrupt"}
    first_done = next(op for op in faults if op["f"] == "start-disk" and op["type"] != "invoke")
    first_heal = next(op for op in faults if op["f"] == "stop-disk")
    inside, outside = first_done["time"] + 1, first_heal["time"] + 1
    sends = [{"process": 0, "type": "ok", "f": "send", "time": t,
              "value": [["send", "t0-0", [i, i]] for i in range(n)]}
             for t, n in ((inside, 3), (outside, 2))]
    ops = sorted(faults + sends, key=lambda op: op["time"])
    cov = coverage(ops, fault_spans(), main=(0, 200 * 10**9))
    held = cov["faults"]["disk"]
    assert held["count"] == len(starts)
    assert held["acked_sends"] == 3 and cov["acked_sends"] == 5
    assert held["in_force_s"] > 0
