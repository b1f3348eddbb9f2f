"""Coverage figures: what a run exercised, computed from its history alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from results.coverage import (
    acked_sends,
    coverage,
    final_heal_words,
    outside_faults,
    poor_coverage,
    slim,
    until_limit,
)
from results.run_coverage import with_failed_steps

S = 1_000_000_000
SPANS = {"kill": ("kill", "start"), "partition": ("start-partition", "stop-partition")}


def send_ok(t_s: float, n: int = 1, process: int = 0) -> dict[str, Any]:
    return {"process": process, "type": "ok", "f": "send", "time": int(t_s * S),
            "value": [["send", "k", [i, i]] for i in range(n)]}


def nem(t_s: float, f: str, kind: str = "info", **extra: Any) -> dict[str, Any]:
    return {"process": "nemesis", "type": kind, "f": f, "time": int(t_s * S), **extra}


def test_acked_sends_counts_only_ok_send_micro_ops() -> None:
    txn = {"type": "ok", "f": "txn", "value": [["send", "k", 1], ["poll", {}], ["send", "k", 2]]}
    assert acked_sends(txn) == 2
    assert acked_sends({**txn, "type": "info"}) == 0
    assert acked_sends({"type": "ok", "f": "poll", "value": [["poll", {}]]}) == 0


def test_live_seconds_and_sends_during_a_fault() -> None:
    ops = [send_ok(0.5), send_ok(1.2, 3), nem(2.0, "kill", "invoke"), nem(2.1, "kill"),
           send_ok(3.5, 2), nem(5.0, "start", "invoke"), nem(5.3, "start"), send_ok(7.8)]
    cov = coverage(ops, SPANS, main=(0, 10 * S))
    assert cov["seconds"] == 10
    assert cov["live_seconds"] == 4  # seconds 0, 1, 3, 7
    assert cov["live_share"] == 0.4
    assert cov["acked_sends"] == 7
    assert cov["acked_per_s"] == 0.7
    kill = cov["faults"]["kill"]
    assert kill["count"] == 1 and kill["acked_sends"] == 2
    assert kill["in_force_s"] == 2.9  # from the kill's completion to the restart's invoke
    assert kill["seconds"] == 3 and kill["live_seconds"] == 1  # seconds 2, 3, 4; only 3 live
    assert cov["recoveries"] == [{"f": "start", "healed_at_s": 5.3, "first_ack_after_s": 2.5}]
    assert "partition" not in cov["faults"]


def test_a_fault_that_failed_to_apply_opens_no_window() -> None:
    ops = [send_ok(0.1), nem(1.0, "start-partition", error="ClusterError: no metadata"),
           send_ok(1.5), nem(3.0, "stop-partition", "invoke"), nem(3.1, "stop-partition")]
    cov = coverage(ops, SPANS, main=(0, 4 * S))
    assert cov["faults"] == {}


def test_a_fault_still_in_force_at_the_end_runs_to_the_end_of_the_main_phase() -> None:
    ops = [send_ok(0.1), nem(1.0, "kill"), send_ok(2.5)]
    cov = coverage(ops, SPANS, main=(0, 4 * S))
    assert cov["faults"]["kill"]["in_force_s"] == 3.0
    assert cov["faults"]["kill"]["acked_sends"] == 1


def test_poor_coverage_names_the_dead_faults_and_what_to_change() -> None:
    ops = [send_ok(0.5), nem(1.0, "kill"), nem(9.0, "start", "invoke"), nem(9.5, "start")]
    line = poor_coverage(coverage(ops, SPANS, main=(0, 10 * S)))
    assert line is not None and "\n" not in line
    assert "10%" in line and "kill" in line and "--nemesis-targets" in line


def test_a_run_that_kept_writing_through_its_faults_is_not_poor() -> None:
    ops = [send_ok(t + 0.5) for t in range(10)]
    ops += [nem(2.0, "kill"), nem(4.0, "start", "invoke"), nem(4.2, "start")]
    ops.sort(key=lambda o: o["time"])
    assert poor_coverage(coverage(ops, SPANS, main=(0, 10 * S))) is None


def test_overlapping_faults_count_once_in_the_union() -> None:
    # kill 2-6 s and a partition 4-8 s overlap for 2 s; sends at 1.5, 5.5 and 9.5 s
    ops = [send_ok(1.5), nem(2.0, "kill"), nem(4.0, "start-partition"), send_ok(5.5, 2),
           nem(6.0, "start", "invoke"), nem(6.1, "start"), nem(8.0, "stop-partition", "invoke"),
           nem(8.1, "stop-partition"), send_ok(9.5)]
    cov = coverage(ops, SPANS, main=(0, 10 * S))
    assert cov["faults"]["kill"]["acked_sends"] == cov["faults"]["partition"]["acked_sends"] == 2
    assert cov["in_faults"] == {"in_force_s": 6.0, "acked_sends": 2, "seconds": 6,
                                "live_seconds": 1}  # seconds 2..7; only 5 live
    assert outside_faults(cov) == {"seconds": 4, "live_seconds": 2}  # 0, 1, 8, 9; 1 and 9 live


def test_a_run_without_faults_has_an_empty_union() -> None:
    cov = coverage([send_ok(0.5), send_ok(2.5)], SPANS, main=(0, 3 * S))
    assert cov["in_faults"] == {"in_force_s": 0.0, "acked_sends": 0, "seconds": 0,
                                "live_seconds": 0}
    assert outside_faults(cov) == {"seconds": 3, "live_seconds": 2}


@settings(max_examples=200, deadline=None)
@given(
    sends=st.lists(st.tuples(st.floats(0, 30), st.integers(1, 5)), max_size=60),
    faults=st.lists(st.tuples(st.floats(0, 30), st.floats(0, 10)), max_size=5),
)
def test_figures_stay_within_their_bounds(
    sends: list[tuple[float, int]], faults: list[tuple[float, float]]
) -> None:
    ops = [send_ok(t, n) for t, n in sends]
    for t, length in faults:
        ops += [nem(t, "kill"), nem(t + length, "start", "invoke"), nem(t + length, "start")]
    ops.sort(key=lambda o: o["time"])
    cov = coverage(ops, SPANS, main=(0, 30 * S))
    assert 0 <= cov["live_seconds"] <= cov["seconds"] == 30
    assert cov["acked_sends_main"] <= cov["acked_sends"] == sum(n for _t, n in sends)
    union = cov["in_faults"]
    for fig in cov["faults"].values():
        assert fig["acked_sends"] <= union["acked_sends"] <= cov["acked_sends"]
        assert fig["live_seconds"] <= fig["seconds"] <= union["seconds"] <= cov["seconds"]
        assert fig["in_force_s"] <= union["in_force_s"]
    assert 0 <= union["live_seconds"] <= cov["live_seconds"]
    out = outside_faults(cov)
    assert 0 <= out["live_seconds"] <= out["seconds"]


def test_only_heals_inside_the_main_phase_count_as_recoveries() -> None:
    ops = [send_ok(0.5), nem(1.0, "kill"), nem(2.0, "start", "invoke"), nem(2.1, "start"),
           send_ok(2.6), nem(3.0, "kill"), nem(5.0, "start", "invoke"), nem(5.2, "start")]
    cov = coverage(ops, SPANS, main=(0, 4 * S))  # the second restart is the final heal
    assert cov["recoveries"] == [{"f": "start", "healed_at_s": 2.1, "first_ack_after_s": 0.5}]


def test_a_withheld_fault_opens_no_window() -> None:
    withheld = {"killed": {}, "withheld": True, "because": "a quorum majority"}
    ops = [send_ok(0.1), nem(1.0, "kill", value=withheld), send_ok(1.5),
           nem(3.0, "start", "invoke"), nem(3.1, "start")]
    assert coverage(ops, SPANS, main=(0, 4 * S))["faults"] == {}


CLOCK = {"clock-strobe": ("strobe-clock", "reset-clock"),
         "clock-bump": ("bump-clock", "reset-clock")}


def test_a_start_that_holds_its_fault_while_it_runs_is_in_force_from_its_invoke() -> None:
    # a 10 s strobe returns when it has ended, and its reset follows at once
    ops = [nem(1.0, "strobe-clock", "invoke", value={"duration-s": 10.0}), send_ok(4.5, 2),
           nem(11.0, "strobe-clock", value={"strobed": ["n2"], "duration-s": 10.0}),
           nem(11.1, "reset-clock", "invoke"), nem(11.3, "reset-clock"), send_ok(12.5)]
    cov = coverage(ops, CLOCK, main=(0, 14 * S))
    strobe = cov["faults"]["clock-strobe"]
    assert strobe["in_force_s"] == 10.1 and strobe["acked_sends"] == 2
    assert poor_coverage(cov) is not None and "clock-strobe" not in (poor_coverage(cov) or "")


def test_a_bump_is_in_force_from_its_completion_as_before() -> None:
    ops = [nem(1.0, "bump-clock", "invoke", value={"delta-ms": 5}), send_ok(1.05),
           nem(1.1, "bump-clock", value={"offsets-ms": {"n1": 5}}), send_ok(2.5),
           nem(4.0, "reset-clock", "invoke")]
    bump = coverage(ops, CLOCK, main=(0, 5 * S))["faults"]["clock-bump"]
    assert (bump["in_force_s"], bump["acked_sends"]) == (2.9, 1)


def test_a_kind_in_force_for_under_a_second_is_not_called_dead() -> None:
    ops = [send_ok(t + 0.5) for t in range(10)]
    ops += [nem(2.0, "kill"), nem(2.2, "start", "invoke"), nem(2.4, "start")]
    ops.sort(key=lambda o: o["time"])
    cov = coverage(ops, SPANS, main=(0, 10 * S))
    assert cov["faults"]["kill"]["acked_sends"] == 0
    assert poor_coverage(cov) is None


def test_slim_ops_keep_what_the_figures_read_from_nemesis_values() -> None:
    # the report and insync analyze compute coverage from slimmed ops of old runs
    ops = [nem(1.0, "strobe-clock", "invoke", value={"duration-s": 10.0}), send_ok(4.5, 2),
           nem(11.0, "strobe-clock", value={"strobed": ["n2"], "duration-s": 10.0}),
           nem(11.1, "reset-clock", "invoke"), nem(11.3, "reset-clock"),
           nem(12.0, "bump-clock", value={"withheld": True}), send_ok(12.5),
           nem(13.0, "reset-clock", "invoke")]
    full = coverage(ops, CLOCK, main=(0, 14 * S))
    assert coverage([slim(op) for op in ops], CLOCK, main=(0, 14 * S)) == full
    assert "clock-bump" not in full["faults"] and full["faults"]["clock-strobe"]["acked_sends"] == 2


def test_the_main_phase_ends_at_the_time_limit_and_the_final_heal_stands_apart() -> None:
    # a 10 s limit; the phase ran to 16 s: the last ops completed, then the final heal
    # (kill healed by start at 10.0 s) and its recovery wait until 15.5 s
    ops = [send_ok(t + 0.5) for t in range(6)]
    ops += [nem(6.0, "kill"), send_ok(9.5), nem(10.0, "start", "invoke"), send_ok(10.2, 5),
            nem(10.4, "start"), nem(10.4, "await-recovery", "invoke"),
            nem(15.5, "await-recovery", value={"recovered": True, "seconds": 5.1})]
    ops.sort(key=lambda o: o["time"])
    window = until_limit((0, 16 * S), 10.0)
    assert window == (0, 10 * S)
    cov = coverage(ops, SPANS, main=window)
    assert (cov["main_s"], cov["seconds"], cov["live_seconds"]) == (10.0, 10, 7)
    assert cov["acked_sends_main"] == 7 and cov["acked_sends"] == 12
    kill = cov["faults"]["kill"]  # in force from 6 s to the limit, not to its heal
    assert (kill["in_force_s"], kill["acked_sends"], kill["seconds"]) == (4.0, 1, 4)
    assert cov["in_faults"]["in_force_s"] == 4.0
    assert cov["recoveries"] == []  # the final heal is not a heal "never" followed by an ack
    assert cov["final_heal"] == {"heals": ["start"], "healed_after_s": 0.4,
                                 "recovered_after_s": 5.5}
    assert final_heal_words(cov["final_heal"]) == (
        "final heal at the time limit (start): done 0.4s after it, "
        "cluster recovered 5.5s after it")


def test_a_final_heal_whose_cluster_never_recovered_says_so() -> None:
    ops = [send_ok(0.5), nem(1.0, "kill"), nem(4.0, "start", "invoke"), nem(4.1, "start"),
           nem(4.2, "await-recovery", "invoke"),
           nem(34.2, "await-recovery", value={"recovered": False, "seconds": 30.0})]
    final = coverage(ops, SPANS, main=(0, 4 * S))["final_heal"]
    assert final == {"heals": ["start"], "healed_after_s": 0.1, "recovered_after_s": None}
    assert "not seen recovered" in (final_heal_words(final) or "")
    assert coverage([send_ok(0.5)], SPANS, main=(0, 4 * S))["final_heal"] is None


def test_a_phase_shorter_than_its_limit_keeps_its_end() -> None:
    assert until_limit((5, 3 * S), 10.0) == (5, 3 * S)
    assert until_limit(None, 10.0) is None and until_limit((0, 9 * S), None) == (0, 9 * S)


def test_a_start_that_failed_is_listed_with_its_error() -> None:
    ops = [send_ok(0.1), nem(31.5, "kill", "invoke"), nem(36.5, "kill", error="exited 1"),
           nem(40.0, "start", "invoke"), nem(40.1, "start", error="also failed: a heal"),
           nem(41.0, "start-partition", value={"withheld": True})]
    cov = coverage(ops, SPANS, main=(int(1.5 * S), 50 * S))
    assert cov["failed_starts"] == [{"f": "kill", "at_s": 35.0, "error": "exited 1"}]
    assert cov["failed_heals"] == [{"f": "start", "at_s": 38.6, "error": "also failed: a heal"}]
    assert coverage([send_ok(0.1)], SPANS, main=(0, S))["failed_starts"] == []


def test_a_heal_that_failed_inside_the_main_phase_is_listed_the_final_heal_is_not() -> None:
    ops = [send_ok(0.1), nem(10.0, "kill", "invoke"), nem(10.5, "kill"),
           nem(20.0, "start", "invoke"), nem(20.5, "start", error="exited 1"),
           nem(60.0, "start", "invoke"), nem(60.5, "start", error="refused at the end")]
    cov = coverage(ops, SPANS, main=(0, 50 * S))
    assert cov["failed_heals"] == [{"f": "start", "at_s": 20.5, "error": "exited 1"}]
    assert cov["failed_starts"] == []


def stored_run(tmp_path: Path, ops: list[dict[str, Any]], block: dict[str, Any],
               phases: dict[str, list[float]] | None) -> tuple[Path, dict[str, Any]]:
    """A run dir whose history holds ``ops``, and a verdict whose coverage is ``block``."""
    (tmp_path / "history.jsonl").write_text(
        "".join(json.dumps({"index": i, **op}) + "\n" for i, op in enumerate(ops)))
    run: dict[str, Any] = {"coverage": block}
    if phases is not None:
        run["phase_times"] = phases
    return tmp_path, {"valid": True, "run": run}


# The history's time zero is the warm-up's start: 20 s into the run; the main phase
# starts 2 s later and lasts 50 s, so it is [2 s, 52 s) in history time.
PHASES = {"warm-up": [20.0, 22.0], "main": [22.0, 75.0], "heal": [75.0, 77.0]}
FAILED_HEAL = [nem(30.0, "start", "invoke"), nem(30.5, "start", error="exited 1")]


def test_a_block_older_than_the_failed_steps_gets_them_from_the_history(
        tmp_path: Path) -> None:
    ops = [send_ok(2.5), nem(10.0, "kill", "invoke"), nem(10.5, "kill"), *FAILED_HEAL,
           nem(53.0, "start", "invoke"), nem(53.5, "start", error="the final heal's")]
    run_dir, verdict = stored_run(tmp_path, ops, {"main_s": 50.0}, PHASES)
    block = with_failed_steps(run_dir, verdict)["run"]["coverage"]
    assert block["failed_heals"] == [{"f": "start", "at_s": 28.5, "error": "exited 1"}]
    assert block["failed_starts"] == [] and block["main_s"] == 50.0
    assert "failed_heals" not in verdict["run"]["coverage"]  # the stored verdict is not changed


def test_a_current_block_or_one_without_its_phases_is_left_as_it_is(tmp_path: Path) -> None:
    current = {"main_s": 50.0, "failed_starts": [], "failed_heals": []}
    run_dir, verdict = stored_run(tmp_path, [send_ok(2.5), *FAILED_HEAL], current, PHASES)
    assert with_failed_steps(run_dir, verdict) is verdict
    run_dir, verdict = stored_run(tmp_path, [send_ok(2.5), *FAILED_HEAL], {"main_s": 50.0}, None)
    assert with_failed_steps(run_dir, verdict) is verdict
    run_dir, verdict = stored_run(tmp_path, [], {"main_s": 50.0}, PHASES)
    (run_dir / "history.jsonl").unlink()
    assert with_failed_steps(run_dir, verdict) is verdict  # no history: nothing to add
