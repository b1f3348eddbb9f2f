"""Each nemesis against fake nodes: the exact commands issued and the values recorded."""

from __future__ import annotations

import pytest
from fakes import GATEWAY, FakeNode, fake_cluster, landed

from cluster import Cluster
from cluster.metadata import PartitionState
from nemesis import NemesisOptions, TeardownIncomplete, build_package
from nemesis.clock import ClockNemesis
from nemesis.compose import ComposedNemesis
from nemesis.nodes import Resolver
from nemesis.packet import PacketNemesis
from nemesis.partition import PartitionNemesis
from nemesis.process import KillNemesis, PauseNemesis
from nemesis.targets import Facts

PARTS = {"t0-0": PartitionState("t0", 0, "n2", ("n2", "n1", "n3"), ("n2", "n1", "n3"))}


def resolver(seed: int = 0) -> Resolver:
    return Resolver(seed, lambda _c: Facts(partitions=lambda: PARTS, controller=lambda: "n3"))


def drops(fake: FakeNode) -> list[str]:
    return [c for c in fake.iptables() if "-j DROP" in c]


def test_majority_partition_drops_exactly_the_other_side() -> None:
    cluster, fakes = fake_cluster(3)
    nem = PartitionNemesis(resolver(1))
    nem.setup(cluster)
    out = nem.invoke(cluster, {"f": "start-partition", "value": "majority"})
    assert "error" not in out
    (alone,), pair = out["value"]["isolated"]
    assert sorted([alone, *pair]) == ["n1", "n2", "n3"]
    addr = {n: cluster.nodes[n].address for n in cluster.nodes}
    assert drops(fakes[alone]) == [
        f"iptables -w 10 -A INSYNC -s {addr[pair[0]]},{addr[pair[1]]} -j DROP"]
    for n in pair:
        assert drops(fakes[n]) == [f"iptables -w 10 -A INSYNC -s {addr[alone]} -j DROP"]
    assert all(GATEWAY not in c for f in fakes.values() for c in f.iptables())
    healed = nem.invoke(cluster, {"f": "stop-partition", "value": None})
    assert landed(healed) == {"value": {"healed": ["n1", "n2", "n3"]}}
    assert all(f.iptables()[-1] == "iptables -w 10 -F INSYNC 2>/dev/null" for f in
               fakes.values())


def test_partition_clients_cuts_the_gateway_on_the_minority_side_only() -> None:
    cluster, fakes = fake_cluster(5)
    nem = PartitionNemesis(resolver(), partition_clients=True)
    out = nem.invoke(cluster, {"f": "start-partition", "value": "leaders"})
    assert out["value"]["isolated"] == [["n2"], ["n1", "n3", "n4", "n5"]]
    assert out["value"]["clients-cut"] == ["n2"]
    assert GATEWAY in drops(fakes["n2"])[0]
    assert all(GATEWAY not in c for n in ("n1", "n3", "n4", "n5") for c in drops(fakes[n]))


def test_controller_and_explicit_grudges_are_recorded_as_given() -> None:
    cluster, fakes = fake_cluster(3)
    nem = PartitionNemesis(resolver())
    out = nem.invoke(cluster, {"f": "start-partition", "value": "controller"})
    assert landed(out)["value"] == {"shape": "controller", "isolated": [["n3"], ["n1", "n2"]]}
    out = nem.invoke(cluster, {"f": "start-partition", "value": {"grudge": {"n1": ["n2"]}}})
    assert landed(out)["value"] == {"shape": "grudge", "grudge": {"n1": ["n2"]}}
    assert drops(fakes["n1"])[-1] == "iptables -w 10 -A INSYNC -s 10.0.0.2 -j DROP"
    # n2 and n3 got their chain flushed and nothing added: the old cut is gone
    assert fakes["n3"].iptables()[-1] == "iptables -w 10 -F INSYNC"


def test_a_partition_that_cannot_be_computed_is_an_error_not_an_exception() -> None:
    cluster, _ = fake_cluster(3)
    out = PartitionNemesis(resolver()).invoke(cluster, {"f": "start-partition",
                                                        "value": "triangle"})
    assert "unknown partition shape" in out["error"]


def test_a_node_that_refuses_the_rules_is_named_in_the_error() -> None:
    cluster, fakes = fake_cluster(3)
    fakes["n2"].fail_on = "-A INSYNC"
    out = PartitionNemesis(resolver()).invoke(cluster, {"f": "start-partition", "value": "one"})
    assert set(out["error"]) == {"n2"} and "injected failure" in out["error"]["n2"]
    assert out["value"]["isolated"]


def test_kill_records_pids_and_start_restarts_only_the_dead() -> None:
    cluster, fakes = fake_cluster(3)
    nem = KillNemesis(resolver())
    out = nem.invoke(cluster, {"f": "kill", "value": "leader:t0-0"})
    assert landed(out) == {"value": {"killed": {"n2": 100}, "target": "leader:t0-0"}}
    assert fakes["n2"].signals == [("KILL", 100)]
    again = nem.invoke(cluster, {"f": "kill", "value": "n2"})
    assert again["value"] == {"killed": {}, "skipped": {"n2": "stopped"}, "target": "n2"}
    out = nem.invoke(cluster, {"f": "start", "value": "all"})
    assert out["value"]["started"] == {"n2": 501}
    assert out["value"]["skipped"] == {"n1": "running", "n3": "running"}


def test_pause_and_resume_signal_the_broker() -> None:
    cluster, fakes = fake_cluster(3)
    nem = PauseNemesis(resolver())
    out = nem.invoke(cluster, {"f": "pause", "value": ["n1", "n3"]})
    assert out["value"]["paused"] == {"n1": 100, "n3": 100}
    assert [f.stat for f in fakes.values()] == ["T", "Sl", "T"]
    out = nem.invoke(cluster, {"f": "resume", "value": None})
    assert out["value"]["resumed"] == {"n1": 100, "n3": 100}
    assert [f.stat for f in fakes.values()] == ["Sl", "Sl", "Sl"]


def test_clock_bumps_accumulate_and_reset_returns_to_zero() -> None:
    cluster, fakes = fake_cluster(3, faketime=True)
    nem = ClockNemesis(resolver())
    nem.setup(cluster)
    assert [f.clock for f in fakes.values()] == ["+0"] * 3
    nem.invoke(cluster, {"f": "bump-clock", "value": {"target": "n1", "delta-ms": 30_000}})
    out = nem.invoke(cluster, {"f": "bump-clock", "value": {"target": "n1", "delta-ms": -500}})
    assert out["value"]["offsets-ms"] == {"n1": 29_500}
    assert fakes["n1"].clock == "+29.500"
    out = nem.invoke(cluster, {"f": "freeze-clock", "value": {"target": "n1"}})
    assert out["value"]["frozen"] == {"n1": "2027-01-15 08:00:29"}  # 1800000000.25 + 29.5 s
    assert fakes["n1"].clock == "2027-01-15 08:00:29"
    out = nem.invoke(cluster, {"f": "reset-clock", "value": "all"})
    assert out["value"]["offsets-ms"] == {"n1": 0, "n2": 0, "n3": 0}
    assert [f.clock for f in fakes.values()] == ["+0"] * 3


def test_clock_faults_without_faketime_are_errors() -> None:
    cluster, fakes = fake_cluster(3, faketime=False)
    out = ClockNemesis(resolver()).invoke(
        cluster, {"f": "bump-clock", "value": {"target": "n1", "delta-ms": 5}})
    assert "not started under libfaketime" in out["error"]
    assert all(f.clock == "+0" and not f.scripts for f in fakes.values())


def test_packet_loss_applies_and_delay_without_netem_is_an_error() -> None:
    cluster, fakes = fake_cluster(3, netem=False)
    nem = PacketNemesis(resolver())
    nem.setup(cluster)
    out = nem.invoke(cluster, {"f": "start-packet",
                               "value": {"target": "n1", "loss": 0.25, "delay-ms": 100}})
    assert out["value"]["applied"] == {"n1": {"loss": 0.25}}
    assert out["value"]["not-applied"] == {"n1": {"delay-ms": 100.0}}
    assert out["error"] == {"n1": "netem is unavailable on this kernel: delay-ms not applied"}
    assert drops(fakes["n1"]) == [
        "iptables -w 10 -A INSYNC-LOSS -s 10.0.0.2,10.0.0.3 -m statistic --mode random "
        "--probability 0.250000 -j DROP"]
    assert not drops(fakes["n2"])


def test_packet_with_netem_puts_delay_and_rate_in_one_qdisc() -> None:
    cluster, fakes = fake_cluster(3, netem=True)
    nem = PacketNemesis(resolver())
    nem.setup(cluster)
    out = nem.invoke(cluster, {"f": "start-packet",
                               "value": {"target": "n2", "delay-ms": 50, "rate-kbit": 1000}})
    assert "error" not in out
    assert fakes["n2"].scripts[-1] == (
        "tc qdisc replace dev eth0 root netem delay 50ms rate 1000kbit")


def test_rate_without_netem_uses_tbf() -> None:
    cluster, fakes = fake_cluster(3)
    nem = PacketNemesis(resolver())
    nem.setup(cluster)
    out = nem.invoke(cluster, {"f": "start-packet", "value": {"target": "n3", "rate-kbit": 256}})
    assert "error" not in out
    assert fakes["n3"].scripts[-1].startswith("tc qdisc replace dev eth0 root tbf rate 256kbit")


def full(cluster: Cluster) -> ComposedNemesis:
    pkg = build_package(NemesisOptions(faults=frozenset(
        {"partition", "kill", "pause", "clock", "packet"})))
    assert isinstance(pkg.nemesis, ComposedNemesis)
    return pkg.nemesis


def test_teardown_runs_every_step_even_when_one_fails_and_can_run_twice() -> None:
    cluster, fakes = fake_cluster(3, faketime=True)
    nem = full(cluster)
    fakes["n1"].stat = "T"
    fakes["n2"].stat = "Z"
    fakes["n3"].clock = "+60.000"
    fakes["n1"].fail_on = "INSYNC-LOSS"  # the packet heal fails on n1
    with pytest.raises(TeardownIncomplete) as err:
        nem.teardown(cluster)
    assert list(err.value.failures) == ["packet n1"]
    assert fakes["n1"].stat == "Sl", "resumed despite the failure"
    assert fakes["n2"].stat == "Sl" and fakes["n2"].pid == 501, "restarted"
    assert fakes["n3"].clock == "+0"
    assert any("-X INSYNC" in c for c in fakes["n2"].iptables())
    fakes["n1"].fail_on = None
    nem.teardown(cluster)
    nem.teardown(cluster)


def test_composed_nemesis_records_unknown_ops_and_crashes_as_errors() -> None:
    cluster, _ = fake_cluster(3)
    nem = full(cluster)
    out = nem.invoke(cluster, {"f": "meteor", "value": 1})
    assert out == {"value": 1, "error": "no nemesis handles 'meteor' in this run"}

    class Boom(KillNemesis):
        def invoke(self, cluster: Cluster, op: object) -> dict[str, object]:
            raise OSError("docker went away")

    out = ComposedNemesis([Boom()]).invoke(cluster, {"f": "kill", "value": "one"})
    assert out == {"value": "one", "error": "OSError: docker went away"}
    with pytest.raises(ValueError, match="two nemeses"):
        ComposedNemesis([KillNemesis(), KillNemesis()])


def test_a_paused_broker_can_still_be_killed() -> None:
    cluster, fakes = fake_cluster(3)
    fakes["n1"].stat = "T"
    out = KillNemesis(resolver()).invoke(cluster, {"f": "kill", "value": "n1"})
    assert out["value"]["killed"] == {"n1": 100}
    assert fakes["n1"].signals == [("KILL", 100)]


def test_setup_heals_what_an_earlier_crashed_run_left() -> None:
    cluster, fakes = fake_cluster(3, faketime=True)
    fakes["n1"].stat, fakes["n2"].stat, fakes["n3"].clock = "T", "Z", "+5.000"
    full(cluster).setup(cluster)
    assert [f.stat for f in fakes.values()] == ["Sl", "Sl", "Sl"]
    assert fakes["n2"].pid == 501
    assert fakes["n3"].clock == "+0"
    assert all(any("-F INSYNC" in c for c in f.iptables()) for f in fakes.values())
