"""A fake ``harness.run.run`` for ``insync scenario run`` and ``insync catalogue`` tests: it
stores a run directory and returns the verdict a test chooses (no Docker)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import harness.run
from harness.base.rundir import RunDir
from harness.run.options import RunOptions
from harness.run.runner import RunResult

START = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
LOSS: dict[str, Any] = {"valid": False, "anomaly-counts": {"lost-write": 3},
                        "anomalies": {"lost-write": []}}
VALID: dict[str, Any] = {"valid": True}
UNKNOWN = {"valid": "unknown", "reason": "step 4: wait leader-changed t0-0 did not hold"}
Verdicts = Callable[[RunOptions, int], dict[str, Any]]


class FakeRun:
    """``harness.run.run``'s shape: stores a run directory and returns ``verdicts``' verdict."""

    def __init__(self, root: Path, verdicts: Verdicts) -> None:
        self.root, self.verdicts = root, verdicts
        self.calls: list[RunOptions] = []
        self.clusters: list[str] = []

    def __call__(self, opts: RunOptions, *, say: Callable[[str], None] | None = None,
                 live: bool | None = None,
                 on_cluster: Callable[[str], None] | None = None) -> RunResult:
        self.calls.append(opts)
        if on_cluster is not None:
            on_cluster(opts.cluster_name)
        when = START + timedelta(seconds=len(self.calls))
        rd = RunDir.create(self.root, opts.name or "run", when)
        rd.write_test({"name": opts.name, "argv": opts.argv()})
        verdict = self.verdicts(opts, len(self.calls))
        rd.write_results({**verdict, "run": {"exit_code": 0, "interrupted": False}})
        return RunResult(rd, verdict, 0)


def install_fake(tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Callable[[Verdicts], FakeRun]:
    """Install a fake run (and a provisioner whose ``down`` is recorded) for the commands;
    the ``fake`` fixture of the scenario tests."""
    downs: list[str] = []

    class Prov:
        def down(self, name: str) -> str:
            downs.append(name)
            return name

    monkeypatch.setattr("cluster.provisioner_for", lambda placement: Prov())

    def install(verdicts: Verdicts) -> FakeRun:
        runner = FakeRun(tmp_path / "results", verdicts)
        runner.clusters = downs
        monkeypatch.setattr(harness.run, "run", runner)
        return runner

    return install
