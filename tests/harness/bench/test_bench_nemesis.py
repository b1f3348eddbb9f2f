"""``insync bench nemesis``'s fault table on fake nodes: every fault is applied and healed,
timed, and its first-to-last node spread reported (the timings themselves are only
meaningful on a real cluster: ``insync bench nemesis``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

NEMESIS_TESTS = str(Path(__file__).resolve().parents[2] / "nemesis")
if NEMESIS_TESTS not in sys.path:
    sys.path.insert(0, NEMESIS_TESTS)

from fakes import fake_cluster  # noqa: E402

from harness.bench import nemesis as bench  # noqa: E402
from nemesis import package  # noqa: E402
from nemesis.targets import Facts  # noqa: E402


def test_every_fault_is_timed_with_its_spread(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = fake_cluster(5, faketime=True)
    monkeypatch.setattr(bench, "_fully_replicated", lambda _c: True)
    facts = Facts(partitions=lambda: {}, controller=lambda: "n2")  # no Kafka to ask
    monkeypatch.setattr(package, "cluster_facts",
                        lambda _cluster, _topics=None, _prefix="": facts)
    rows = bench.measure_faults(cluster, repeat=2)
    assert [r["fault"] for r in rows] == [label for label, _, _ in bench.FAULTS]
    by_fault = {r["fault"]: r for r in rows}
    for label in ("partition one", "kill one / start", "pause all / resume",
                  "bump-clock all / reset"):
        row = by_fault[label]
        assert row["errors"] == [], row
        assert isinstance(row["apply_spread_ms"], float) and row["apply_spread_ms"] >= 0
        assert isinstance(row["heal_spread_ms"], float) and row["heal_spread_ms"] >= 0
        assert 0 <= row["apply_s"] <= row["apply_max_s"]
    out = capsys.readouterr().out
    assert "kill one / start" in out and "spread" in out and "residue after teardown: none" in out

