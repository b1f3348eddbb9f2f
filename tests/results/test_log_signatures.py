"""Known bugs' lines in a run's collected node logs: the registry, the scan and its words.

Run directories are built here as the runner's log collection leaves them
(``nodes/<node>/var_log_kafka_server.log``, log4j's rotated hours beside it, the
broker's ``stdout.log`` repeating it), with the real line and near misses.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from results.log_signatures import (
    PIECE,
    SIGNATURES,
    LogSignature,
    by_id,
    describe,
    scan,
    scan_run,
    with_log_signatures,
)

#: KAFKA-17507 as a 1.1.1 broker logged it (abort-rewind, n3's server.log), verbatim.
REAL = (
    "[2026-11-29 14:34:10,134] ERROR Uncaught exception in scheduled task "
    "'handleTxnCompletion-2001' (kafka.utils.KafkaScheduler)\n"
    "java.lang.IllegalStateException: Trying to complete a transactional offset commit for "
    "producerId 2001 and groupId i20261129t143304839z-g0 even though the offset commit record "
    "itself hasn't been appended to the log.\n"
    "\tat kafka.coordinator.group.GroupMetadata.$anonfun$completePendingTxnOffsetCommit$2"
    "(GroupMetadata.scala:401)\n"
    "\tat scala.collection.mutable.HashMap.$anonfun$foreach$1(HashMap.scala:138)\n"
)
REAL_LINE = REAL.splitlines()[1]


def event(producer: int, group: str = "g0") -> str:
    """The two lines the broker logs each time, for another producer and group."""
    return (f"[2026-11-29 12:00:00,000] ERROR Uncaught exception in scheduled task "
            f"'handleTxnCompletion-{producer}' (kafka.utils.KafkaScheduler)\n"
            f"java.lang.IllegalStateException: Trying to complete a transactional offset "
            f"commit for producerId {producer} and groupId {group} even though the offset "
            f"commit record itself hasn't been appended to the log.\n")


#: Lines that look like the signature and are not it.
NEAR_MISSES = "".join([
    # the same scheduler, another task and exception
    "[2026-11-29 14:12:40,433] ERROR Uncaught exception in scheduled task 'isr-expiration' "
    "(kafka.utils.KafkaScheduler)\n",
    "org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = "
    "Session expired for /brokers/topics/t0/partitions/1/state\n",
    # another IllegalStateException of the coordinators
    "java.lang.IllegalStateException: Preparing transaction state transition to ONGOING "
    "while it already a pending state PREPARE_EPOCH_FENCE\n",
    # the text, not at the start of its line
    "[2026-11-29 14:34:10,134] INFO quoted: java.lang.IllegalStateException: Trying to "
    "complete a transactional offset commit for producerId 1 and groupId g even though the "
    "offset commit record itself hasn't been appended to the log.\n",
    # another ending
    "java.lang.IllegalStateException: Trying to complete a transactional offset commit for "
    "producerId 1 and groupId g even though the offset commit record itself has been "
    "appended to the log.\n",
])


def node_file(run: Path, node: str, name: str, text: str | bytes) -> Path:
    path = run / "nodes" / node / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return path


def test_the_real_kafka_17507_line_is_found(tmp_path: Path) -> None:
    node_file(tmp_path, "n3", "var_log_kafka_server.log", "[...] INFO started\n" + REAL)
    assert scan_run(tmp_path) == {"KAFKA-17507": {
        "count": 1, "nodes": {"n3": 1}, "first": REAL_LINE,
        "where": "n3/var_log_kafka_server.log:3"}}


def test_counts_per_node_over_rotated_files_and_no_near_miss(tmp_path: Path) -> None:
    node_file(tmp_path, "n1", "var_log_kafka_server.log", NEAR_MISSES + event(5) + event(9))
    node_file(tmp_path, "n1", "var_log_kafka_stdout.log", event(5) + event(9))  # a repeat
    node_file(tmp_path, "n1", "var_log_kafka_controller.log", event(5))  # another file
    node_file(tmp_path, "n2", "var_log_kafka_server.log", NEAR_MISSES)
    node_file(tmp_path, "n3", "var_log_kafka_server.log", event(8, "g1"))
    node_file(tmp_path, "n3", "var_log_kafka_server.log.2026-11-29-13", event(7, "g1"))
    found = scan(tmp_path / "nodes")
    assert found is not None and list(found) == ["KAFKA-17507"]
    entry = found["KAFKA-17507"]
    assert (entry["count"], entry["nodes"]) == (4, {"n1": 2, "n3": 2})
    # the first node's first line (nodes in name order)
    assert entry["first"].startswith("java.lang.IllegalStateException: Trying to complete")
    assert "producerId 5 and groupId g0" in entry["first"]
    assert entry["where"] == f"n1/var_log_kafka_server.log:{NEAR_MISSES.count(chr(10)) + 2}"
    assert json.loads(json.dumps(found)) == found  # plain JSON


def test_a_nodes_rotated_hours_are_read_before_its_current_log(tmp_path: Path) -> None:
    node_file(tmp_path, "n2", "var_log_kafka_server.log", event(8))
    node_file(tmp_path, "n2", "var_log_kafka_server.log.2026-11-29-14", event(7))
    node_file(tmp_path, "n2", "var_log_kafka_server.log.2026-11-29-13", event(6))
    entry = (scan_run(tmp_path) or {})["KAFKA-17507"]
    assert entry["count"] == 3 and "producerId 6 " in entry["first"]
    assert entry["where"] == "n2/var_log_kafka_server.log.2026-11-29-13:2"


def test_none_found_is_an_empty_block_and_no_logs_is_none(tmp_path: Path) -> None:
    assert scan_run(tmp_path) is None  # no nodes/ at all
    (tmp_path / "nodes").mkdir()
    assert scan_run(tmp_path) is None  # nodes/ made, nothing collected (no cluster)
    node_file(tmp_path, "n1", "var_log_kafka_stdout.log", event(1))
    assert scan_run(tmp_path) is None  # no server.log: nothing of its kind read
    node_file(tmp_path, "n1", "var_log_kafka_server.log", NEAR_MISSES)
    assert scan_run(tmp_path) == {}


def test_a_binary_file_is_read_in_pieces_and_only_line_starts_match(tmp_path: Path) -> None:
    """A line longer than ``PIECE`` is read in pieces; a piece that does not begin a line
    is not matched, even when it begins with the signature's text."""
    blob = b"\x00\xff" * (PIECE // 2)  # exactly one piece, no line break
    text = blob + REAL_LINE.encode() + b"\n" + b"\x89PNG\r\n\x1a\n" + REAL_LINE.encode() + b"\n"
    node_file(tmp_path, "n1", "var_log_kafka_server.log", text)
    entry = (scan_run(tmp_path) or {})["KAFKA-17507"]
    assert entry["count"] == 1  # line 1 is the blob and its tail, 2 and 3 a PNG header
    assert entry["where"] == "n1/var_log_kafka_server.log:4"


def test_an_unreadable_file_is_skipped_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Permissions do not stop root, so the file's ``open`` fails as a denied one would."""
    bad = node_file(tmp_path, "n1", "var_log_kafka_server.log", event(1))
    node_file(tmp_path, "n2", "var_log_kafka_server.log", event(2))
    real_open = Path.open

    def denied(self: Path, *args: object, **kwargs: object) -> object:
        if self == bad:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", denied)
    with caplog.at_level(logging.WARNING, logger="results.log_signatures"):
        found = scan_run(tmp_path)
    assert found is not None and found["KAFKA-17507"]["nodes"] == {"n2": 1}
    assert any(str(bad) in r.getMessage() and "not scanned" in r.getMessage()
               for r in caplog.records)


def test_what_is_not_a_log_never_raises(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes"
    node_file(tmp_path, "n1", "var_log_kafka_server.log", event(1))
    (nodes / "stray-file").write_text("not a node")  # a file beside the node directories
    (nodes / "n2").mkdir()
    (nodes / "n2" / "var_log_kafka_server.log").mkdir()  # a directory of the file's name
    (nodes / "n3").mkdir()
    (nodes / "n3" / "var_log_kafka_server.log").symlink_to(nodes / "gone")  # dangling
    found = scan(nodes)
    assert found is not None and found["KAFKA-17507"]["nodes"] == {"n1": 1}
    assert scan(tmp_path / "stray") is None
    assert scan(nodes / "stray-file") is None  # not a directory


def test_a_made_up_signature_is_scanned_from_its_registry_row(tmp_path: Path) -> None:
    """The scan reads each row's file and pattern: nothing about a bug is written twice."""
    row = LogSignature(id="KAFKA-0", words="a made-up bug", file="controller.log",
                       pattern=r"\[\S+\] ERROR made up \d+$", affected="none", fixed="none",
                       meaning="A row for a test.")
    node_file(tmp_path, "n1", "var_log_kafka_controller.log",
              "[t] ERROR made up 1\n[t] ERROR made up x\n")
    node_file(tmp_path, "n1", "var_log_kafka_server.log", "[t] ERROR made up 2\n" + REAL)
    found = scan(tmp_path / "nodes", [row, *SIGNATURES])
    assert found is not None and found["KAFKA-0"]["count"] == 1
    assert found["KAFKA-0"]["first"] == "[t] ERROR made up 1"
    assert found["KAFKA-17507"]["count"] == 1


def test_every_row_is_complete_and_ids_are_unique() -> None:
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids)) and by_id("KAFKA-17507") is not None
    for s in SIGNATURES:
        assert s.id.startswith("KAFKA-") and s.file and s.words and s.affected and s.fixed
        assert s.meaning.endswith(".") and s.regex.pattern


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ({"KAFKA-17507": {"count": 3, "nodes": {"n3": 3}}},
         "KAFKA-17507 (transactional offsets completed early) 3 times, on n3"),
        ({"KAFKA-17507": {"count": 1, "nodes": {"n2": 1, "n1": 1}}},
         "KAFKA-17507 (transactional offsets completed early) once, on n1, n2"),
        ({"KAFKA-1": {"count": 2, "nodes": {"n1": 2}}}, "KAFKA-1 2 times, on n1"),
        ({}, None),
        (None, None),
        ({"KAFKA-17507": {"count": "3"}}, None),
        ({"KAFKA-17507": ["not", "an", "entry"]}, None),
    ],
    ids=["three", "once-two-nodes", "unknown-id", "none", "absent", "bad-count", "bad-entry"],
)
def test_describe_reads_a_stored_block_defensively(block: object, words: str | None) -> None:
    assert describe(block) == words


def test_a_stored_run_without_the_key_is_scanned_once_read_back(tmp_path: Path) -> None:
    node_file(tmp_path, "n1", "var_log_kafka_server.log", event(1))
    old = {"valid": True, "run": {"exit_code": 0}}
    assert with_log_signatures(tmp_path, old)["run"]["log_signatures"]["KAFKA-17507"][
        "count"] == 1
    scanned = {"valid": True, "run": {"log_signatures": {}}}
    assert with_log_signatures(tmp_path, scanned) is scanned  # stored: kept as it is
    assert with_log_signatures(tmp_path, {"valid": True}) == {"valid": True}
    assert with_log_signatures(tmp_path / "elsewhere", old) is old  # no logs: no key
