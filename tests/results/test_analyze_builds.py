"""``insync analyze`` groups runs on a user's build (``--kafka-dist``) by version and
commit, so two builds of one snapshot stay two rows; releases keep their spec."""

from __future__ import annotations

from pathlib import Path

from results.analysis.ingest import run_row


def _row(cluster: dict[str, object]) -> object:
    return run_row("r1", Path("/nowhere"), {"cluster": cluster}, {})["kafka_version"]


def test_a_build_is_named_by_version_and_commit() -> None:
    build = {"path": "/b.tgz", "sha256": "ab" * 32, "version": "4.2.0-SNAPSHOT",
             "commit_id": "1a2b3c4d"}
    assert _row({"kafka_version": "4.2.0-SNAPSHOT", "kafka_dist": build}) == \
        "4.2.0-SNAPSHOT (1a2b3c4d)"
    no_commit = {**build, "commit_id": None}
    assert _row({"kafka_version": "4.2.0-SNAPSHOT", "kafka_dist": no_commit}) == \
        f"4.2.0-SNAPSHOT (sha256:{'ab' * 6})"


def test_a_release_keeps_its_spec() -> None:
    assert _row({"kafka_version": "4.1.x", "kafka_dist": None}) == "4.1.x"
    assert _row({"kafka_version": "3.9.x"}) == "3.9.x"
