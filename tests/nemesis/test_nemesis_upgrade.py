"""The ``upgrade`` and ``downgrade`` kinds: ship first, roll one broker at a time onto the
build, then bump the level; refuse what Kafka documents as unsupported before anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import FakeNode, FakeTime, cluster_of

from cluster import Cluster
from cluster.builds import IBP, Build, switch
from cluster.distribution import Distribution
from cluster.kafka_node import KafkaNode
from cluster.metadata import PartitionState
from cluster.spec import ClusterSpec
from cluster.tool_run import ToolRun
from cluster.versions import release
from harness.base.faults import fault_kind
from nemesis.kinds import load
from nemesis.nodes import Resolver
from nemesis.polling import Poller
from nemesis.restart import RestartNemesis
from nemesis.targets import Facts
from nemesis.upgrade import DOWNGRADE, UPGRADE, UpgradeNemesis

NODES = ("n1", "n2", "n3")
UP = load(fault_kind("upgrade"))
DOWN = load(fault_kind("downgrade"))


def whole(_cluster: object) -> Facts:
    parts = {"t0-0": PartitionState("t0", 0, "n1", NODES, NODES)}
    return Facts(partitions=lambda: parts, controller=lambda: "n2", brokers=lambda: set(NODES))


def never_whole(_cluster: object) -> Facts:
    parts = {"t0-0": PartitionState("t0", 0, "n2", NODES, ("n2", "n3"))}
    return Facts(partitions=lambda: parts, controller=lambda: "n2", brokers=lambda: set(NODES))


class FakeBuilds:
    """``nemesis.upgrade.Builds`` on fake nodes: records every call in one event list,
    with the broker's state at that moment, and plays kafka-features' levels."""

    def __init__(self, fakes: dict[str, FakeNode], metadata: str = "3.9-IV0",
                 protocol: str | None = None, ship_fails: str | None = None) -> None:
        self.fakes = fakes
        self.metadata = metadata
        self.protocol = protocol
        self.ship_fails = ship_fails
        self.events: list[tuple[Any, ...]] = []

    def _up(self, node: KafkaNode) -> bool:
        fake = self.fakes[node.name]
        return fake.pid is not None and fake.stat != "Z"

    def prepare(self, spec: ClusterSpec) -> Build:
        version = release(spec.kafka_version)
        dist = Distribution(version, Path(f"/cache/{version.version}"), ("kafka.jar",))
        return Build(spec, dist, frozenset(), {"libs/kafka.jar": "0" * 64})

    def ship(self, node: KafkaNode, build: Build) -> dict[str, Any]:
        if node.name == self.ship_fails:
            raise OSError("no space left on device")
        self.events.append(("ship", node.name, build.name))
        return {"copied": 1, "bytes": 10}

    def configure(self, node: KafkaNode, build: Build, pinned: dict[str, str]) -> None:
        self.events.append(("configure", node.name, build.name, dict(pinned), self._up(node)))

    def switch(self, node: KafkaNode, build: Build) -> None:
        switch(node, build)

    def protocol_of(self, node: KafkaNode) -> str:
        return self.protocol or ".".join(map(str, node.version.number[:2]))

    def features(self, node: KafkaNode, *command: str) -> ToolRun:
        self.events.append(("features", node.name, node.version.version, command))
        if command[0] == "upgrade":
            self.metadata = f"{command[2]}-IV1"
        out = (f"Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t"
               f"SupportedMaxVersion: 4.1-IV1\tFinalizedVersionLevel: {self.metadata}\tEpoch: 7")
        return ToolRun(node.name, 0, out, 2.5)


def cluster_on(version: str, mode: str = "kraft") -> tuple[Cluster, dict[str, FakeNode]]:
    spec = ClusterSpec(name="fake", nodes=3, controllers=3, mode=mode,  # type: ignore[arg-type]
                       kafka_version=version)
    fakes = {n: FakeNode(n) for n in NODES}
    cluster = cluster_of(spec, {n: f.handle for n, f in fakes.items()})
    cluster.version = release(version)
    for node in cluster.nodes.values():
        node.version = cluster.version
    return cluster, fakes


def nemesis(direction: str, builds: FakeBuilds, facts: Any = whole) -> UpgradeNemesis:
    t = FakeTime()
    resolver = Resolver(seed=1, facts_for=facts)
    restart = RestartNemesis(resolver, Poller(clock=t.clock, sleep=t.sleep), clock=t.clock)
    return UpgradeNemesis(direction, resolver, builds, restart, clock=t.clock)


def test_kraft_ships_everywhere_then_rolls_each_broker_then_bumps_metadata() -> None:
    cluster, fakes = cluster_on("3.9.2")
    builds = FakeBuilds(fakes)
    out = nemesis(UPGRADE, builds).invoke(cluster, {"f": "upgrade", "value": "4.1.2"})
    assert "error" not in out, out
    value = out["value"]
    assert value["to"] == "4.1.2" and value["levels-before"] == {"metadata.version": "3.9-IV0"}
    kinds = [e[0] for e in builds.events]
    # the tool reads the level first, every node gets the jars before any broker stops,
    # each broker's config is written while it is down, then the bump
    assert kinds == ["features", "ship", "ship", "ship", "configure", "configure",
                     "configure", "features", "features"]
    assert all(e[4] is False and e[3] == {} for e in builds.events if e[0] == "configure")
    assert [s["node"] for s in value["steps"]] == list(NODES)
    for step in value["steps"]:
        assert (step["from"], step["to"], step["clean"], step["isr-whole"]) == (
            "3.9.2", "4.1.2", True, True)
        assert step["took-s"] == round(step["stop-s"] + step["start-s"] + step["isr-s"], 2)
    assert all(fk.signals == [("TERM", 100)] and fk.pid == 501 for fk in fakes.values())
    assert {n.version.version for n in cluster.nodes.values()} == {"4.1.2"}
    assert cluster.version.version == "4.1.2"
    # the bump runs the NEW build's own tool
    assert builds.events[-2][2:] == ("4.1.2", ("upgrade", "--metadata", "4.1"))
    assert value["bump"] | {"seconds": 0} == {
        "feature": "metadata.version", "from": "3.9-IV0", "to": "4.1", "ran-on": "n1",
        "tool-s": 2.5, "finalized": "4.1-IV1", "done": True, "seconds": 0}
    assert "duration-s" in value


def test_zookeeper_pins_the_old_protocol_then_bumps_it_in_a_second_roll() -> None:
    cluster, fakes = cluster_on("2.8.2", "zookeeper")
    builds = FakeBuilds(fakes)
    value = nemesis(UPGRADE, builds).invoke(
        cluster, {"f": "upgrade", "value": {"kafka-version": "3.9.2"}})["value"]
    pins = [e[3] for e in builds.events if e[0] == "configure"]
    assert pins == [{IBP: "2.8"}] * 3 + [{IBP: "3.9"}] * 3
    assert value["levels-before"] == {IBP: "2.8"}
    assert [s["pinned"] for s in value["steps"]] == [{IBP: "2.8"}] * 3
    bump = value["bump"]
    assert (bump["setting"], bump["from"], bump["to"], bump["done"]) == (IBP, "2.8", "3.9", True)
    assert [s["node"] for s in bump["steps"]] == list(NODES)
    assert all("took-s" in s for s in bump["steps"])
    assert all(len(fk.signals) == 2 for fk in fakes.values())  # two rolls


def test_an_unbumped_upgrade_can_be_undone_a_bumped_one_cannot() -> None:
    cluster, fakes = cluster_on("3.9.2")
    builds = FakeBuilds(fakes)
    up, down = nemesis(UPGRADE, builds), nemesis(DOWNGRADE, builds)
    out = up.invoke(cluster, {"f": "upgrade", "value": {"kafka-version": "4.1.2", "bump": False}})
    assert "bump" not in out["value"] and builds.metadata == "3.9-IV0"
    out = down.invoke(cluster, {"f": "downgrade", "value": {}})  # back to the run's own build
    assert "error" not in out, out
    assert [(s["from"], s["to"]) for s in out["value"]["steps"]] == [("4.1.2", "3.9.2")] * 3
    assert cluster.version.version == "3.9.2"

    up.invoke(cluster, {"f": "upgrade", "value": "4.1.2"})
    assert builds.metadata == "4.1-IV1"
    signals = {n: list(fk.signals) for n, fk in fakes.items()}
    out = down.invoke(cluster, {"f": "downgrade", "value": "3.9.2"})
    assert "metadata.version 4.1-IV1 is in force" in out["error"]
    assert out["value"]["refused"] == out["error"]
    assert {n: fk.signals for n, fk in fakes.items()} == signals  # nothing was touched
    assert {n.version.version for n in cluster.nodes.values()} == {"4.1.2"}


def test_a_zookeeper_downgrade_below_the_protocol_in_force_is_refused() -> None:
    cluster, fakes = cluster_on("3.9.2", "zookeeper")
    builds = FakeBuilds(fakes)
    out = nemesis(DOWNGRADE, builds).invoke(cluster, {"f": "downgrade", "value": "2.8.2"})
    assert out["error"].startswith(f"{IBP} 3.9 is in force and Kafka 2.8.2 does not speak it")
    assert builds.events == [] and all(fk.signals == [] for fk in fakes.values())


@pytest.mark.parametrize(("mode", "direction", "to", "why"), [
    ("zookeeper", UPGRADE, "2.8.2", "n1 runs Kafka 3.9.2, newer than 2.8.2: that is a downgrade"),
    ("zookeeper", UPGRADE, "4.1.2", "Kafka 4.1.2 does not run in zookeeper mode"),
    ("kraft", DOWNGRADE, "4.1.2", "n1 runs Kafka 3.9.2, older than 4.1.2: that is an upgrade"),
])
def test_wrong_directions_and_modes_are_refused_before_anything(
        mode: str, direction: str, to: str, why: str) -> None:
    cluster, fakes = cluster_on("3.9.2", mode)
    builds = FakeBuilds(fakes)
    out = nemesis(direction, builds).invoke(cluster, {"f": direction, "value": to})
    assert why in out["error"] and out["value"]["refused"] == out["error"]
    assert not [e for e in builds.events if e[0] != "features"]
    assert all(fk.signals == [] for fk in fakes.values())


def test_a_roll_that_stops_is_not_bumped_and_says_where_it_stopped() -> None:
    cluster, fakes = cluster_on("3.9.2")
    builds = FakeBuilds(fakes)
    out = nemesis(UPGRADE, builds, never_whole).invoke(
        cluster, {"f": "upgrade", "value": {"kafka-version": "4.1.2", "isr-timeout-s": 3}})
    value = out["value"]
    assert [s["node"] for s in value["steps"]] == ["n1"]
    assert value["not-restarted"] == ["n2", "n3"]
    assert value["bump"] == {"done": False, "because": "the roll did not reach every broker whole"}
    assert builds.metadata == "3.9-IV0" and cluster.version.version == "3.9.2"
    assert [n.version.version for n in cluster.nodes.values()] == ["4.1.2", "3.9.2", "3.9.2"]


def test_brokers_already_on_the_build_are_left_alone() -> None:
    cluster, fakes = cluster_on("3.9.2")
    builds = FakeBuilds(fakes)
    up = nemesis(UPGRADE, builds)
    up.invoke(cluster, {"f": "upgrade", "value": "4.1.2"})
    out = up.invoke(cluster, {"f": "upgrade", "value": "4.1.2"})
    assert out["value"]["already"] == list(NODES) and "steps" not in out["value"]
    assert all(len(fk.signals) == 1 for fk in fakes.values())


def test_a_build_not_shipped_everywhere_restarts_nothing() -> None:
    cluster, fakes = cluster_on("3.9.2")
    out = nemesis(UPGRADE, FakeBuilds(fakes, ship_fails="n2")).invoke(
        cluster, {"f": "upgrade", "value": "4.1.2"})
    assert "not shipped, nothing restarted" in out["error"]["n2"]
    assert all(fk.signals == [] for fk in fakes.values())


@pytest.mark.parametrize(("kind", "f", "value", "problem"), [
    (UP, "upgrade", {}, "upgrade needs the build to go to"),
    (UP, "upgrade", {"kafka-version": "4.1.2", "kafka-dist": "/x"}, "not both"),
    (UP, "upgrade", {"kafka-version": "4.1.2", "wait": 1}, "upgrade takes kafka-version"),
    (UP, "upgrade", {"kafka-version": "4.1.2", "bump": "yes"}, "bump must be true or false"),
    (UP, "upgrade", {"kafka-version": "four"}, "kafka-version must be a release"),
    (UP, "upgrade", {"kafka-dist": "/no/such/kafka.tgz"}, "no such file"),
    (UP, "upgrade", {"kafka-version": "4.1.2", "isr-timeout-s": -1}, "'isr-timeout-s' must"),
    (DOWN, "downgrade", [1], "downgrade takes a Kafka version or a table"),
])
def test_bad_values_are_refused_before_the_run(kind: Any, f: str, value: object,
                                               problem: str) -> None:
    assert problem in (kind.validate(f, value, 3) or "")


def test_good_values_pass() -> None:
    assert UP.validate("upgrade", "4.1.2", 3) is None  # type: ignore[attr-defined]
    assert UP.validate("upgrade", {"kafka-version": "4.1.x", "bump": False}, 3) is None  # type: ignore[attr-defined]
    assert DOWN.validate("downgrade", {}, 3) is None  # type: ignore[attr-defined]
    assert DOWN.validate("downgrade", None, 3) is None  # type: ignore[attr-defined]
