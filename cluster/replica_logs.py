"""Read one partition's log as a replica holds it on disk: offset -> value, per node.

``checkers.replicas`` compares the replicas; this only reads them, with Kafka's own
``DumpLogSegments`` (``cluster.jvm.dump_log_argv``) run on the node, so what is
compared is the bytes each broker keeps, not what any client was served. The output
is filtered on the node to the record lines (one per record), which both formats
print as ``offset: N ... payload: V``: 0.10 at the start of the line, 0.11 and
later after a ``| `` under each batch line (whose ``baseOffset:`` is not matched).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cluster import jvm
from cluster.broker_config import DATA_DIR
from cluster.kafka_node import KafkaNode
from cluster.model import Cluster, each_node
from cluster.remote import sh

#: A dump's record line: its offset and its value (the last field, ``payload: V``).
RECORD_LINE = re.compile(r"(?:^|\|\s*)offset: (\d+)\b.*\bpayload: (\S*)\s*$")
#: Seconds one node's dump may take (a JVM start, then every record of the partition).
DUMP_TIMEOUT_S = 180.0


class ReplicaRecords(dict[int, str]):
    """One replica's records, offset -> value, and ``backwards``: each place where the log,
    read in file order, goes to an offset at or below one already passed, as
    ``(highest offset before, offset)``. A healthy log never does. KAFKA-3919's follower
    did: before leader epochs (0.11) a follower that truncated to its high watermark
    fetched from the middle of a compressed message set on a leader whose log had
    diverged, and appended the whole set, whose first inner offsets lie below its
    truncation point; only the set's last offset was checked. A value at an offset
    held twice is the later one in the file."""

    def __init__(self) -> None:
        super().__init__()
        self.backwards: list[tuple[int, int]] = []


def parse_dump(text: str) -> ReplicaRecords:
    """Offset -> value of every record line in ``DumpLogSegments`` output, in file order
    (the segments given oldest first), noting where the offsets go backwards."""
    out = ReplicaRecords()
    highest = -1
    for line in text.splitlines():
        m = RECORD_LINE.search(line)
        if m is not None:
            offset = int(m.group(1))
            if offset <= highest:
                out.backwards.append((highest, offset))
            highest = max(highest, offset)
            out[offset] = m.group(2)
    return out


def read_replica(node: KafkaNode, directory: str) -> ReplicaRecords | None:
    """The records of partition ``directory`` (``<topic>-<partition>``) on ``node``;
    None if the node holds no replica of it. Raises ``ClusterError`` if the dump fails."""
    path = node.at(f"{DATA_DIR}/{directory}")
    listing = sh(node.remote, 'ls -1 -- "$1"/*.log 2>/dev/null || true', path)
    files = [f for f in listing.stdout.split() if f.endswith(".log")]
    if not files:
        return None
    argv = jvm.dump_log_argv(node.version, sorted(files), kafka_home=node.kafka_home)
    script = "\"$@\" | grep -E '(^|[|] )offset: ' || true"
    return parse_dump(sh(node.remote, script, *argv, timeout=DUMP_TIMEOUT_S).stdout)


def read_partition(cluster: Cluster, directory: str
                   ) -> tuple[dict[str, dict[int, str] | None], dict[str, str]]:
    """Each node's copy of one partition (None: it holds none), read on every node at
    once, and the nodes whose copy could not be read, with why."""
    logs: dict[str, dict[int, str] | None] = {}
    errors: dict[str, str] = {}

    def one(node: KafkaNode) -> None:
        try:
            logs[node.name] = read_replica(node, directory)
        except Exception as err:  # one unreadable node must not hide the others
            errors[node.name] = str(err)

    each_node(one, cluster.nodes.values())
    return logs, errors


def partition_dirs(keys: Mapping[str, tuple[str, int]]) -> dict[str, str]:
    """Key -> its partition's directory name, from key -> (real topic, partition)."""
    return {key: f"{topic}-{partition}" for key, (topic, partition) in keys.items()}
