"""``harness.run.replicas``: compare, and read again before calling replicas diverged."""

from __future__ import annotations

from typing import Any

from harness.run.replicas import compare, line

SAME = {0: "1", 1: "2", 2: "3"}


def reads(*rounds: dict[str, dict[int, str] | None]) -> Any:
    """A reader returning one round of logs per call (the same for every key)."""
    it = iter(rounds)
    return lambda cluster, directory: (next(it), {})


def test_consistent_replicas_are_read_once() -> None:
    said: list[str] = []
    slept: list[float] = []
    out = compare(None, {"t0-0": ("xt0", 0)}, said.append,  # type: ignore[arg-type]
                  sleep=slept.append, read=reads({"n1": SAME, "n2": SAME, "n3": None}))
    assert out["valid"] is True and slept == []
    assert said == ["replicas of t0-0: consistent (n1: 3 records, n2: 3 records)"]


def test_divergence_that_stays_is_reported_after_a_second_read() -> None:
    split = {**SAME, 2: "9"}
    said: list[str] = []
    slept: list[float] = []
    out = compare(None, {"t0-0": ("xt0", 0)}, said.append,  # type: ignore[arg-type]
                  sleep=slept.append, read=reads({"n1": SAME, "n2": split},
                                                  {"n1": SAME, "n2": split}))
    assert out["valid"] is False and slept == [10.0]
    part = out["partitions"]["t0-0"]
    assert part["diverged"] == 1 and part["offsets"] == [{"offset": 2,
                                                           "values": {"n1": "3", "n2": "9"}}]
    assert said[0].startswith("replicas of t0-0: DIVERGED at 1 offset(s)")
    assert "offset 2: n1=3, n2=9" in said[0]


def test_a_follower_that_truncates_between_the_reads_is_not_divergence() -> None:
    stale = {**SAME, 2: "9"}
    out = compare(None, {"t0-0": ("xt0", 0)}, lambda s: None,  # type: ignore[arg-type]
                  sleep=lambda s: None, read=reads({"n1": SAME, "n2": stale},
                                                   {"n1": SAME, "n2": {0: "1", 1: "2"}}))
    part = out["partitions"]["t0-0"]
    assert out["valid"] is True and part["diverged"] == 0


def test_a_partition_nobody_could_read_says_why() -> None:
    p = {"valid": "unknown", "reason": "0 replica(s) could be read; comparing needs two",
         "unreadable": {"n1": "exited 1"}}
    assert line(p) == ("not compared: 0 replica(s) could be read; comparing needs two "
                       "(n1: exited 1)")


def test_only_records_both_reads_saw_alike_are_compared() -> None:
    """Offset 2 differs in both reads (it stayed); offset 1 of n2 changed between them (a
    follower rewriting its tail): one diverging offset, not two."""
    first = {"n1": SAME, "n2": {**SAME, 2: "9"}}
    second = {"n1": SAME, "n2": {**SAME, 1: "8", 2: "9"}}
    out = compare(None, {"t0-0": ("xt0", 0)}, lambda s: None,  # type: ignore[arg-type]
                  sleep=lambda s: None, read=reads(first, second))
    part = out["partitions"]["t0-0"]
    assert part["diverged"] == 1 and part["offsets"][0]["offset"] == 2


def test_a_replica_log_that_went_back_is_said_and_counted() -> None:
    from cluster.replica_logs import ReplicaRecords

    back = ReplicaRecords()
    back.update(SAME)
    back.backwards.append((2, 1))
    said: list[str] = []
    out = compare(None, {"t0-0": ("xt0", 0)}, said.append,  # type: ignore[arg-type]
                  sleep=lambda s: None, read=reads({"n1": SAME, "n2": back},
                                                   {"n1": SAME, "n2": back}))
    assert out["valid"] is False and out["offsets-backwards"] is True
    assert said == ["replicas of t0-0: offsets go BACKWARDS in n2's log (1 time(s); n2: "
                    "offset 1 after 2; n1: 3 records, n2: 3 records)"]
