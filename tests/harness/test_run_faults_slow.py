"""A fault run through ``insync run``: kills and partitions, healed, drained, checked.

Marked ``slow`` (not in CI's default selection): a fresh cluster, 60 s of faults,
a drain. With ``acks=all``, ``min.insync.replicas=2`` and clean elections only,
Kafka promises no acknowledged write is lost, so the verdict must be valid; a
failure here is either a Kafka bug or an insync bug, and the run directory
(kept under pytest's tmp_path) says which.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cluster.docker.containers import labelled_ids
from harness.run import parse, run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLUSTER = "run-slow"


def test_kills_and_partitions_with_acks_all_lose_nothing(tmp_path: Path) -> None:
    opts = parse(
        [
            "--cluster-name",
            CLUSTER,
            "--nemesis",
            "kill,partition",
            "--nemesis-interval",
            "5",
            "--time-limit",
            "60",
            "--final-time-limit",
            "60",
            "--seed",
            "21",
            "--teardown",
            "--results-dir",
            str(tmp_path / "results"),
        ]
    )
    result = run(opts, say=lambda _msg: None, live=False)
    ops = [orjson.loads(line) for line in result.run_dir.history_path.read_bytes().splitlines()]
    faults = [op for op in ops if op["process"] == "nemesis" and op["type"] == "info"]
    assert {op["f"] for op in faults} & {"kill", "start-partition"}, "no fault was injected"
    # a fault may fail to resolve its target (no metadata while every leader is down):
    # that is recorded with an error; what matters is that the final heal ran, then
    # the wait for the cluster to recover from it
    heals = [op for op in faults if op["f"] != "await-recovery"][-2:]
    assert {op["f"] for op in heals if not op.get("error")} == {"start", "stop-partition"}, heals
    assert faults[-1]["f"] == "await-recovery" and faults[-1]["value"]["recovered"], faults[-1]
    assert result.verdict["valid"] is True, result.verdict
    assert result.summary["drain_complete"] is True
    assert labelled_ids("container", CLUSTER) == []
