"""The shipped catalogue (``harness/scenario/catalogue/*.toml``): every file loads, covers
what it claims, and turns into ``insync run`` options on every version it covers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.base.waits import AWAIT_STATE
from harness.run.options import parse
from harness.scenario import CATALOGUE, load_catalogue, load_scenario

FILES = sorted(CATALOGUE.glob("*.toml"))
#: The scenarios issue 13 asks for, by the names it gives them.
ISSUE_13 = {
    "acks1-leader-failover", "isr-shrink-unclean", "hw-truncation", "last-replica-standing",
    "power-loss-all", "idempotence-off-duplicates", "offsets-backwards-compression",
    "unclean-divergence", "controller-failover",
}


def test_the_issues_scenarios_are_all_shipped() -> None:
    assert set(load_catalogue()) >= ISSUE_13
    assert {p.stem for p in FILES} == set(load_catalogue())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_shipped_file_loads_and_runs_on_every_version_it_covers(
    path: Path, tmp_path: Path
) -> None:
    s = load_scenario(path)
    assert s.sources and all(u.startswith("https://") for u in s.sources)
    schedule = s.write_schedule(tmp_path)
    for variant in [None, *(v.name for v in s.variants)]:
        covered = s.covered(variant)
        assert covered, variant
        for version in covered:
            s.expected(version, variant)  # exactly one expectation (the loader checked)
            opts = parse(s.run_argv(version, schedule, variant))
            assert opts.kafka_version == f"{version.line}.x" and opts.nemesis == []
            assert opts.nemesis_schedule == str(schedule)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_file_says_where_its_bug_shows_or_is_a_control(path: Path) -> None:
    s = load_scenario(path)
    controls = [v for v in s.variants if not any(e.bug_shows for e in v.expect)]
    control = s.bug.endswith("(a negative control)")
    assert s.affected() or control, "a bug that never shows"
    assert s.fixed() or controls, "no version or variant where the bug must not show"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_step_is_checked_by_the_schedule_parser(path: Path) -> None:
    s = load_scenario(path)
    assert [p.f for p in s.parsed] == [st.get("f", AWAIT_STATE) for st in s.steps]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_waits_give_the_cluster_time(path: Path) -> None:
    """Every wait has a timeout; waits for the ISR to shrink allow at least 3x the
    scenario's replica.lag.time.max.ms (the leader checks every half of it)."""
    s = load_scenario(path)
    lag_s = int(s.broker.get("replica.lag.time.max.ms", "30000")) / 1000
    for step in s.steps:
        if "wait" in step:
            assert step["timeout"] > 0
            if step["wait"] in ("isr-is-leader", "left-isr"):
                assert step["timeout"] >= 3 * lag_s, step


def test_hw_truncation_runs_only_where_a_restarted_follower_can_stay_in_the_isr() -> None:
    """KRaft takes an uncleanly restarted broker out of every ISR when it re-registers, and
    from 2.x a new ZooKeeper-mode controller takes dead brokers out at failover: the
    scenario covers ZooKeeper-mode versions up to 1.1, and later ones are refused in one
    line."""
    from cluster.versions import resolve_version
    from harness.base.errors import UsageError

    s = load_scenario(CATALOGUE / "hw-truncation.toml")
    assert s.modes == ("zookeeper",)
    assert [v.line for v in s.covered()] == ["0.10.2", "0.11.0", "1.1"]
    for later in ("2.8", "4.1"):
        with pytest.raises(UsageError, match=rf"does not cover Kafka {later.replace('.', '[.]')}"):
            s.expected(resolve_version(later))
