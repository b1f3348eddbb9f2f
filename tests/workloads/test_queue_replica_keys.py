"""``--check-replicas``: the queue names the partitions the runner compares after the run."""

from __future__ import annotations

import pytest

from harness.base.errors import UsageError
from harness.run import parse
from workloads.protocol import ReplicaKeys, RunEnv
from workloads.queue.options import QueueSettings
from workloads.queue.setup import QueueRun


def test_the_flag_reaches_the_run_and_maps_keys_to_real_partitions() -> None:
    opts = parse(["--check-replicas", "t0-0,t2-5"])
    assert opts.check_replicas == ["t0-0", "t2-5"]
    argv = opts.argv()  # test.json's replayable argv keeps it
    assert argv[argv.index("--check-replicas") + 1] == "t0-0,t2-5"
    env = RunEnv(bootstrap="127.0.0.1:1", token="tok", seed=1, replication_factor=3)
    made = QueueRun(env, QueueSettings(check_replicas=["t0-0", "t2-5"]))
    assert isinstance(made, ReplicaKeys)
    prefix = env.topic_prefix
    assert made.replica_keys() == {"t0-0": (f"{prefix}t0", 0), "t2-5": (f"{prefix}t2", 5)}
    assert QueueRun(env, QueueSettings()).replica_keys() == {}


def test_a_key_that_is_not_a_workload_key_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match="--check-replicas"):
        parse(["--check-replicas", "t0-9"]).validate()
