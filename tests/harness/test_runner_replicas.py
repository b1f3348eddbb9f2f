"""The runner compares replicas (``--check-replicas``) after the drain, before the workload
removes its topics, and stores the result in results.json's ``run`` (fake cluster, no Docker).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from fake_provisioner import comes_up, install
from mem_kafka import FakeRun, fake_workload, kafka_like

import harness.run.replicas as run_replicas
from harness.run import parse, run
from workloads import WORKLOADS
from workloads.protocol import ReplicaKeys

pytestmark = pytest.mark.usefixtures("engine")


@dataclass
class ComparedRun(FakeRun):
    """The fake workload's run with the optional power to name partitions to compare."""

    def replica_keys(self) -> dict[str, tuple[str, int]]:
        self.calls.append("replica_keys")
        return {"t0-0": ("xt0", 0)}


def test_replicas_are_compared_before_the_topics_go_and_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, comes_up)
    workload, state = fake_workload()
    opened: list[ComparedRun] = []

    def open_run(env: Any, settings: Any) -> ComparedRun:
        made = ComparedRun(state.kafka, kafka_like, env)
        opened.append(made)
        return made

    monkeypatch.setitem(WORKLOADS, "fake", replace(workload, open=open_run))
    compared: list[dict[str, tuple[str, int]]] = []

    def fake_compare(cluster: Any, keys: dict[str, tuple[str, int]], say: Any) -> dict[str, Any]:
        compared.append(dict(keys))
        opened[0].calls.append("compared")
        return {"valid": False, "partitions": {"t0-0": {"valid": False, "diverged": 2}}}

    monkeypatch.setattr(run_replicas, "compare", fake_compare)
    opts = parse(["--results-dir", str(tmp_path / "results"), "--cluster-name", "mine",
                  "--workload", "fake", "--time-limit", "1"])
    result = run(opts, say=lambda s: None, live=False)
    assert isinstance(opened[0], ReplicaKeys)
    assert compared == [{"t0-0": ("xt0", 0)}]
    assert opened[0].calls[-3:] == ["replica_keys", "compared", "teardown"]
    stored = json.loads((Path(result.run_dir.path) / "results.json").read_text())
    assert stored["run"]["replicas"]["valid"] is False
    assert result.summary["replicas"]["partitions"]["t0-0"]["diverged"] == 2
