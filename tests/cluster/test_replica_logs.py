"""``cluster.replica_logs``: a replica's records as ``DumpLogSegments`` prints them."""

from __future__ import annotations

from collections.abc import Mapping

from fake_remote import FakeRemote, Handler

from cluster.kafka_node import KafkaNode
from cluster.model import Cluster
from cluster.replica_logs import parse_dump, read_partition, read_replica
from cluster.spec import ClusterSpec
from cluster.versions import resolve_version
from tests.support.shell_text import script_text


def fake_cluster(handlers: Mapping[str, Handler]) -> Cluster:
    """Nodes whose commands the given handler functions answer."""
    spec = ClusterSpec(name="fake", nodes=len(handlers), controllers=min(3, len(handlers)))
    version = resolve_version("4.1.x")
    nodes = {name: KafkaNode(name, f"10.0.0.{i + 1}", FakeRemote(name, handlers[name]), spec,
                             version, kafka_home="/opt/kafka", client_source="10.0.0.254")
             for i, name in enumerate(spec.node_names)}
    return Cluster(spec, version, nodes)


def one_node(handler: Handler) -> tuple[KafkaNode, FakeRemote]:
    node = fake_cluster({"n1": handler}).nodes["n1"]
    assert isinstance(node.remote, FakeRemote)
    return node, node.remote

# 0.10.2: one line per message, the offset first.
DUMP_010 = """\
Dumping /var/lib/kafka/data/xt0-0/00000000000000000000.log
Starting offset: 0
offset: 0 position: 0 CreateTime: 1510000000000 isvalid: true payloadsize: 2 magic: 1 \
compresscodec: NoCompressionCodec crc: 2870394510 payload: 17
offset: 1 position: 36 CreateTime: 1510000000001 isvalid: true payloadsize: 3 magic: 1 \
compresscodec: NoCompressionCodec crc: 1154335283 payload: 105
"""
# 0.11 and later: a batch line, then one ``| offset:`` line per record.
DUMP_41 = """\
Dumping /var/lib/kafka/data/xt0-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 3 \
producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false \
deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1763850000000 size: 80 \
magic: 2 compresscodec: none crc: 123 isvalid: true
| offset: 0 CreateTime: 1763850000000 keySize: -1 valueSize: 2 sequence: 0 headerKeys: [] \
payload: 17
| offset: 1 CreateTime: 1763850000000 keySize: -1 valueSize: 3 sequence: 1 headerKeys: [] \
payload: 105
"""


def test_both_dump_formats_give_offset_to_value_and_skip_batch_lines() -> None:
    assert parse_dump(DUMP_010) == {0: "17", 1: "105"}
    assert parse_dump(DUMP_41) == {0: "17", 1: "105"}
    assert parse_dump("Dumping x\nbaseOffset: 5 lastOffset: 9 count: 5\n") == {}


def test_a_node_without_the_partition_holds_none_and_is_not_dumped() -> None:
    node, remote = one_node(lambda argv, stdin: (0, "", ""))
    assert read_replica(node, "xt0-0") is None
    assert len(remote.calls) == 1  # the listing only


def test_a_node_with_the_partition_dumps_its_segments_filtered_on_the_node() -> None:
    def handle(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        script = script_text(argv)
        if script.startswith("ls "):
            return 0, "/var/lib/kafka/data/xt0-0/00000000000000000000.log\n", ""
        assert "kafka.tools.DumpLogSegments" in script and "--deep-iteration" in script
        assert "00000000000000000000.log" in script and "grep -E" in script
        return 0, "\n".join(line for line in DUMP_41.splitlines() if "offset: " in line), ""

    node, _ = one_node(handle)
    assert read_replica(node, "xt0-0") == {0: "17", 1: "105"}


def test_an_unreadable_node_is_reported_and_the_others_still_read() -> None:
    def ok(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        if argv[-1].startswith("ls "):
            return 0, "/d/xt0-0/0.log\n", ""
        return 0, DUMP_41, ""

    def broken(argv: tuple[str, ...], stdin: str | None) -> tuple[int, str, str]:
        return 1, "", "ls: cannot access: I/O error"

    cluster = fake_cluster({"n1": ok, "n2": ok, "n3": broken})
    logs, errors = read_partition(cluster, "xt0-0")
    assert logs == {"n1": {0: "17", 1: "105"}, "n2": {0: "17", 1: "105"}}
    assert list(errors) == ["n3"] and "I/O error" in errors["n3"]


# KAFKA-3919's follower, as 0.10's --deep-iteration prints it: after truncating to its
# high watermark (4) it fetched a compressed set from a diverged leader whose inner
# offsets start below it (2..6), and appended it whole after its own records 0..4.
DUMP_010_BACKWARDS = "".join(
    f"offset: {o} position: {i * 40} isvalid: true payloadsize: 3 magic: 1 "
    f"compresscodec: GZIPCompressionCodec crc: 1 payload: {v}\n"
    for i, (o, v) in enumerate([(0, 10), (1, 11), (2, 12), (3, 13), (4, 14),
                                (2, 92), (3, 93), (4, 94), (5, 95), (6, 96)]))


def test_a_log_that_goes_back_to_offsets_it_passed_is_noted_where_it_does() -> None:
    log = parse_dump(DUMP_010_BACKWARDS)
    assert log.backwards == [(4, 2), (4, 3), (4, 4)]  # each record at or below 4, after 4
    assert log == {0: "10", 1: "11", 2: "92", 3: "93", 4: "94", 5: "95", 6: "96"}
    assert parse_dump(DUMP_010).backwards == [] and parse_dump(DUMP_41).backwards == []
