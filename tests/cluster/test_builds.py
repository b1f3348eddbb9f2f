"""Another build on a node: shipped by hash, the config rewritten for it, the node switched;
and the levels an upgrade reads and raises."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_remote import FakeRemote

from cluster.admin_tools import features_main, finalized_metadata
from cluster.broker_config import CONFIG_PATH
from cluster.builds import (
    IBP,
    Build,
    build_on,
    configure,
    level_number,
    protocol_of,
    ship,
    switch,
    target_spec,
)
from cluster.distribution import Distribution
from cluster.kafka_node import KafkaNode
from cluster.spec import ClusterSpec
from cluster.versions import release
from harness.base.errors import UsageError


class Disk:
    """A node's files: what ``write_file`` writes, ``read_if_there`` reads back."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def handle(self, argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        if argv[:2] == ("sh", "-c") and "cat >" in argv[2]:
            self.files[argv[4]] = stdin or ""
        elif argv[:2] == ("sh", "-c") and argv[2].startswith("cat --"):
            return 0, self.files.get(argv[4], ""), ""
        return 0, "", ""


def node_on(version: str, mode: str = "zookeeper", root: str = "/base") -> tuple[KafkaNode, Disk]:
    spec = ClusterSpec(name="b", nodes=3, mode=mode, kafka_version=version)  # type: ignore[arg-type]
    disk = Disk()
    node = KafkaNode("n2", "10.0.0.2", FakeRemote("n2", disk.handle), spec, release(version),
                     kafka_home="/opt/kafka", client_source="10.0.0.254", root=root)
    return node, disk


def build_of(spec: ClusterSpec, root: Path) -> Build:
    (root / "libs").mkdir(parents=True)
    (root / "libs" / "kafka.jar").write_bytes(b"jar")
    dist = Distribution(release(spec.kafka_version), root, ("kafka.jar",))
    return Build(spec, dist, frozenset({"delete.topic.enable", IBP}),
                 {"libs/kafka.jar": "a" * 64})


def test_the_config_is_rewritten_with_what_the_roll_pins_and_read_back(tmp_path: Path) -> None:
    node, disk = node_on("2.8.2")
    build = build_of(target_spec(node.spec, "3.9.2"), tmp_path)
    assert protocol_of(node) == "2.8"  # no config yet: the build's own line
    configure(node, build, {IBP: "2.8"})
    text = disk.files["/base" + CONFIG_PATH]
    assert f"{IBP}=2.8" in text.splitlines() and "broker.id=2" in text.splitlines()
    assert "delete.topic.enable=true" in text.splitlines()  # a default the build knows
    assert protocol_of(node) == "2.8"
    configure(node, build, {IBP: "3.9"})
    assert protocol_of(node) == "3.9"


def test_a_build_is_shipped_once_under_the_root_and_the_node_switched_to_it(
        tmp_path: Path) -> None:
    node, _ = node_on("3.9.2", "kraft")
    build = build_of(target_spec(node.spec, "4.1.2"), tmp_path)
    assert build.name == "4.1.2" and build_on(node) == "3.9.2"
    assert ship(node, build) == {"copied": 1, "bytes": 3}
    assert isinstance(node.remote, FakeRemote)
    assert node.remote.files["/base/kafka/4.1.2/libs/kafka.jar"] == b"jar"
    switch(node, build)
    assert (node.version.version, node.kafka_home, build_on(node)) == (
        "4.1.2", "/base/kafka/4.1.2", "4.1.2")
    assert "/base/kafka/4.1.2/libs/*" in node.broker.argv


def test_a_target_that_cannot_run_in_the_mode_is_refused() -> None:
    spec = ClusterSpec(name="b", nodes=3, mode="zookeeper", kafka_version="3.9.2")
    with pytest.raises(UsageError, match="does not run in zookeeper mode"):
        target_spec(spec, "4.1.2")
    assert target_spec(spec) is spec


def test_levels_name_their_release_line() -> None:
    assert level_number("3.9-IV0") == (3, 9) and level_number("4.1") == (4, 1)
    assert level_number("0.10.2-IV1") == (0, 10, 2) and level_number("2.8") == (2, 8)
    with pytest.raises(UsageError):
        level_number("IV0")


def test_kafka_features_class_and_its_describe_output() -> None:
    assert features_main(release("2.8.2")) is None
    assert features_main(release("3.3.2")) == "kafka.admin.FeatureCommand"
    assert features_main(release("4.1.2")) == "org.apache.kafka.tools.FeatureCommand"
    out = ("Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
           "FinalizedVersionLevel: 0\tEpoch: 5\n"
           "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\t"
           "SupportedMaxVersion: 3.9-IV0\tFinalizedVersionLevel: 3.9-IV0\tEpoch: 5\n")
    assert finalized_metadata(out) == "3.9-IV0"
    assert finalized_metadata("Error: timed out") is None
