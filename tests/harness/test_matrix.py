"""``insync matrix``: grid, config file, ordering, resume, progress and the driver (no Docker)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from harness import matrix as mx
from harness.base.errors import EnvironmentProblem, UsageError
from harness.base.rundir import RunDir, read_json, write_json
from harness.cli import build_parser
from harness.matrix.resume import changed_runs, not_reused
from harness.run.options import RunOptions
from harness.run.runner import RunResult
from harness.scenario.runs import failed_steps


def flags(argv: str) -> mx.Matrix:
    """The Matrix ``insync matrix <argv>`` would build (without running anything)."""
    args = build_parser().parse_args(["matrix", *argv.split()])
    skip = {"config", "runs", "handler", "command", "verbose", "teardown"}
    base, axes = mx.split({k: v for k, v in vars(args).items() if k not in skip}, "")
    return mx.Matrix(base, axes, int(args.runs or 1), hasattr(args, "teardown"))


# -- grid ----------------------------------------------------------------------------------


def test_the_issue_command_expands_to_every_combination() -> None:
    m = flags(
        "--acks 1,all --min-insync 1,2 --unclean-leader-election true,false "
        "--nemesis kill,partition --kafka-version 3.9.x,4.1.x --time-limit 60"
    )
    combos, skipped = mx.expand(m)
    assert skipped == []
    assert len(combos) == 2 * 2 * 2 * 1 * 2
    names = {c.name for c in combos}
    assert "matrix-acks1-isr2-uncleanfalse-kill+partition-4.1.x" in names
    assert all(c.opts.faults == ["kill", "partition"] for c in combos)
    assert all(c.opts.time_limit == 60 and c.opts.teardown is False for c in combos)


def test_repeated_nemesis_flags_are_separate_axis_values() -> None:
    combos, _ = mx.expand(flags("--nemesis kill,partition --nemesis none"))
    assert sorted(c.values["nemesis"] for c in combos) == [["kill", "partition"], ["none"]]
    assert {c.name.split("-")[-2] for c in combos} == {"kill+partition", "none"}


@pytest.mark.parametrize(
    ("argv", "kept", "reason"),
    [
        ("--min-insync 1,2,4", 2, "--min-insync 4 > --replication-factor 3"),
        ("--replication-factor 1,3 --min-insync 2", 1, "--min-insync 2 > --replication-factor 1"),
        ("--acks 1,all --idempotence true", 1, "--idempotence needs --acks all"),
    ],
    ids=["isr-above-rf", "rf-below-isr", "idempotence-needs-acks-all"],
)
def test_invalid_combinations_are_skipped_with_a_reason(argv: str, kept: int, reason: str) -> None:
    combos, skipped = mx.expand(flags(argv))
    assert len(combos) == kept
    assert len(skipped) == 1 and reason in skipped[0].reason


def test_bad_input_is_one_usage_error_before_anything_runs() -> None:
    calls: list[RunOptions] = []
    with pytest.raises(UsageError, match=re.escape("--time-limit must be a finite number in (0,")):
        mx.drive(flags("--acks 1,all --time-limit 0"), run_fn=recorder(calls, Path("/nonexistent")))
    assert calls == []
    with pytest.raises(UsageError, match="--acks"):
        flags("--acks 1,maybe")


def test_the_group_protocol_is_an_axis_refused_where_the_brokers_lack_it() -> None:
    combos, skipped = mx.expand(flags(
        "--sub-via subscribe --commit sync --group-protocol classic,consumer "
        "--kafka-version 3.9.x,4.1.x"))
    assert sorted(c.name for c in combos) == [
        "matrix-acksall-isr2-uncleanfalse-none-3.9.x-groupclassic",
        "matrix-acksall-isr2-uncleanfalse-none-4.1.x-groupclassic",
        "matrix-acksall-isr2-uncleanfalse-none-4.1.x-groupconsumer"]
    assert len(skipped) == 1 and "--group-protocol consumer needs Kafka 4.0.0+" in (
        skipped[0].reason)


def test_name_sets_the_prefix() -> None:
    combos, _ = mx.expand(flags("--name nightly --acks all"))
    assert combos[0].name == "nightly-acksall-isr2-uncleanfalse-none-4.1.x"


# -- config file ---------------------------------------------------------------------------

TOML = """
[matrix]
acks = ["1", "all"]
min-insync = [1, 2]
unclean-leader-election = [true, false]
nemesis = ["kill,partition", ["none"]]
kafka-version = ["4.1.x"]
runs = 3
keep-cluster = true
time-limit = 15
nodes = 5
"""


def test_config_file_axes_and_options(tmp_path: Path) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(TOML)
    m = mx.read_config(path)
    assert (m.runs, m.keep_cluster) == (3, True)
    assert m.axes["acks"] == ["1", "all"] and m.axes["min_insync"] == [1, 2]
    assert m.axes["unclean_leader_election"] == [True, False]
    assert m.axes["nemesis"] == [["kill", "partition"], ["none"]]
    assert m.base == {"time_limit": 15.0, "nodes": 5}
    combos, _ = mx.expand(m)
    assert len(combos) == 16 and all(c.opts.nodes == 5 for c in combos)


def test_flags_win_over_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(TOML)
    merged = mx.merge(
        mx.read_config(path), flags("--acks all --nodes 3"), runs_given=False, keep_given=False
    )
    assert merged.axes["acks"] == ["all"] and merged.axes["min_insync"] == [1, 2]
    assert merged.base["nodes"] == 3 and merged.runs == 3 and merged.keep_cluster


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("acks = [", "not TOML"),
        ("runs = 0", "--runs must be a whole number from 1 to 1000"),
        ("bogus = 1", "unknown option 'bogus'"),
        ("acks = []", "--acks has no values"),
        ("min-insync = ['two']", "--min-insync"),
    ],
    ids=["syntax", "runs", "unknown-key", "empty-axis", "bad-value"],
)
def test_bad_config_files_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        mx.read_config(path)


# -- ordering ------------------------------------------------------------------------------


def test_order_groups_combinations_by_cluster_spec() -> None:
    # kafka-version is the last axis, so product order alternates versions on every step.
    combos, _ = mx.expand(flags("--acks 1,all --min-insync 1,2 --kafka-version 3.9.x,4.1.x"))
    assert mx.rebuilds(combos) == 8
    ordered = mx.order(combos)
    assert mx.rebuilds(ordered) == 2
    assert sorted(c.name for c in ordered) == sorted(c.name for c in combos)
    topic_only = mx.order(mx.expand(flags("--acks 1,all --unclean-leader-election true,false"))[0])
    assert mx.rebuilds(topic_only) == 1


def test_clock_faults_need_their_own_cluster() -> None:
    combos, _ = mx.expand(flags("--nemesis kill --nemesis clock --nemesis partition"))
    assert mx.rebuilds(mx.order(combos)) == 2


# -- resume --------------------------------------------------------------------------------

START = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)


def stored(
    root: Path,
    combo: mx.Combination,
    run_no: int,
    *,
    minutes: int = 0,
    results: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> RunDir:
    """A run directory as a finished matrix run leaves it."""
    rd = RunDir.create(root, combo.name, START + timedelta(minutes=minutes))
    block = mx.matrix_block(combo, run_no)
    if settings is not None:
        block["settings"] = settings
    rd.write_test({"name": combo.name, "argv": combo.opts.argv(), "matrix": block})
    if results is not None:
        rd.write_results(results)
    return rd


def test_resume_counts_only_finished_runs_of_the_same_settings(tmp_path: Path) -> None:
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    ok = {"valid": True, "run": {"interrupted": False}}
    stored(tmp_path, combo, 1, minutes=0, results=ok)
    stored(tmp_path, combo, 2, minutes=1, results=None)  # crashed before results.json
    stored(
        tmp_path, combo, 3, minutes=2, results={"valid": "unknown", "run": {"interrupted": True}}
    )
    other = {**combo.settings(), "time_limit": 999.0}
    stored(tmp_path, combo, 4, minutes=3, results=ok, settings=other)
    plain = RunDir.create(tmp_path, combo.name, START + timedelta(minutes=4))  # insync run's
    plain.write_test({"name": combo.name})
    plain.write_results(ok)
    assert sorted(mx.done_runs(tmp_path, combo)) == [1]
    (changed,) = changed_runs(tmp_path, combo)  # only the finished run of other settings
    assert changed.diff == {"time_limit": (999.0, combo.opts.time_limit)}
    assert not_reused(combo.name, [changed]) == (
        f"{combo.name}: 1 stored run(s) not reused, settings changed: "
        f"--time-limit 999.0, now {combo.opts.time_limit!r}")


def test_the_driver_says_in_one_line_which_stored_runs_it_does_not_reuse(
    tmp_path: Path,
) -> None:
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    ok = {"valid": True, "run": {"interrupted": False}}
    settings = {**combo.settings(), "nemesis_schedule": "/r/scenario-x-0a1b.schedule.jsonl"}
    stored(tmp_path, combo, 1, results=ok, settings=settings)
    lines: list[str] = []

    def never(opts: RunOptions, **_: Any) -> RunResult:
        raise AssertionError("a run of other settings was stored: nothing to run again")

    stored(tmp_path, combo, 1, minutes=1, results=ok)  # run 1 of these settings is done
    mx.run_combinations([combo], 1, keep_cluster=True, run_fn=never, say=lines.append)
    assert lines[0] == (f"{combo.name}: 1 stored run(s) not reused, settings changed: "
                        "another fault script (scenario-x-0a1b.schedule.jsonl, now none)")


def test_a_run_stored_before_an_option_existed_still_resumes(tmp_path: Path) -> None:
    """Blocks written before --controllers and --base-image lack them; unset, they match."""
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    ok = {"valid": True, "run": {"interrupted": False}}
    before = {k: v for k, v in combo.settings().items() if k not in ("controllers", "base_image")}
    stored(tmp_path, combo, 1, results=ok, settings=before)
    assert sorted(mx.done_runs(tmp_path, combo)) == [1]
    (other,), _ = mx.expand(flags(f"--acks all --controllers 1 --results-dir {tmp_path}"))
    assert other.name == combo.name and mx.done_runs(tmp_path, other) == {}


# -- progress ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("done", "total", "durations", "text"),
    [
        (0, 8, [], "runs: 0 done, 8 left; ETA unknown (no run finished yet)"),
        (3, 8, [60.0, 90.0, 75.0], "runs: 3 done, 5 left; ETA 6m15s (mean 1m15s per run)"),
        (8, 8, [10.0], "runs: 8 done, 0 left; ETA 0s (mean 10s per run)"),
        (1, 50, [4000.0], "runs: 1 done, 49 left; ETA 54h26m40s (mean 1h06m40s per run)"),
    ],
    ids=["nothing-yet", "mean-of-three", "finished", "hours"],
)
def test_progress_line(done: int, total: int, durations: list[float], text: str) -> None:
    assert mx.progress(done, total, durations) == text


# -- the driver ----------------------------------------------------------------------------


def recorder(
    calls: list[RunOptions],
    root: Path,
    verdicts: Callable[[RunOptions, int], dict[str, Any]] | None = None,
) -> mx.RunFn:
    """A fake ``harness.run.run``: records the options, stores a run, returns a verdict."""

    def fake(
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = None,
        on_cluster: Callable[[str], None] | None = None,
    ) -> RunResult:
        calls.append(opts)
        if on_cluster is not None:  # as the runner: it brought the cluster up
            on_cluster(opts.cluster_name)
        rd = RunDir.create(root, opts.name or "run", START + timedelta(seconds=len(calls)))
        rd.write_test({"name": opts.name, "argv": opts.argv()})
        verdict = verdicts(opts, len(calls)) if verdicts else {"valid": True}
        valid = verdict.get("valid")
        code = 0 if valid is True else 1 if valid is False else 2
        rd.write_results({**verdict, "run": {"exit_code": code, "interrupted": False}})
        return RunResult(rd, verdict, code, summary={"exit_code": code})

    return fake


def acks_one_loses(opts: RunOptions, n: int) -> dict[str, Any]:
    if opts.acks == "1":
        return {"valid": False, "anomaly-counts": {"lost-write": 7}, "anomalies": {}}
    return {"valid": True}


def test_driver_runs_each_combination_runs_times_and_folds_verdicts(tmp_path: Path) -> None:
    calls: list[RunOptions] = []
    lines: list[str] = []
    downs: list[str] = []
    m = flags(f"--acks 1,all --min-insync 1,4 --results-dir {tmp_path} --cluster-name mx")
    m = mx.Matrix(m.base, m.axes, runs=2)
    ticks = iter(range(0, 1000, 10))
    out = mx.drive(
        m,
        run_fn=recorder(calls, tmp_path, acks_one_loses),
        say=lines.append,
        down=downs.append,
        clock=lambda: float(next(ticks)),
    )
    assert [(o.acks, o.min_insync) for o in calls] == [("1", 1), ("1", 1), ("all", 1), ("all", 1)]
    assert out.exit_code == 1 and out.ran == 4 and downs == ["mx"]
    assert sum(line.startswith("skipping ") for line in lines) == 2
    assert "runs: 4 done, 0 left; ETA 0s (mean 10s per run)" in lines
    table = mx.summary(out).splitlines()
    assert table[0].split() == [
        "combination",
        "runs",
        "valid",
        "invalid",
        "unknown",
        "lost",
        "writes",
    ]
    assert table[1].split() == [
        "matrix-acks1-isr1-uncleanfalse-none-4.1.x",
        "2",
        "0",
        "2",
        "0",
        "14",
    ]
    assert table[2].split() == [
        "matrix-acksall-isr1-uncleanfalse-none-4.1.x",
        "2",
        "2",
        "0",
        "0",
        "0",
    ]
    for call in calls:  # each stored run now says which matrix run it was
        (run_dir,) = [p for p in (tmp_path / (call.name or "")).iterdir() if p.is_dir()][:1]
        assert read_json(run_dir / "test.json")["matrix"]["combination"] == call.name


def test_driver_resumes_and_skips_what_is_done(tmp_path: Path) -> None:
    m = flags(f"--acks 1,all --results-dir {tmp_path}")
    first: list[RunOptions] = []
    mx.drive(m, run_fn=recorder(first, tmp_path), say=lambda _: None)
    assert len(first) == 2
    again: list[RunOptions] = []
    lines: list[str] = []
    downs: list[str] = []
    out = mx.drive(m, run_fn=recorder(again, tmp_path), say=lines.append, down=downs.append)
    assert again == [] and downs == []  # nothing ran, no cluster to remove
    assert out.resumed == 2 and out.exit_code == 0
    assert any("2 already done, 0 to run" in line for line in lines)
    assert sum(line.startswith("done before: matrix-acks") for line in lines) == 2
    more: list[RunOptions] = []
    mx.drive(mx.Matrix(m.base, m.axes, runs=3), run_fn=recorder(more, tmp_path), say=print)
    assert sorted((o.acks) for o in more) == ["1", "1", "all", "all"]


def test_unknown_without_invalid_exits_2_and_keep_cluster_keeps_it(tmp_path: Path) -> None:
    def verdicts(opts: RunOptions, n: int) -> dict[str, Any]:
        return {"valid": "unknown" if opts.acks == "1" else True}

    downs: list[str] = []
    m = flags(f"--acks 1,all --results-dir {tmp_path}")
    out = mx.drive(
        mx.Matrix(m.base, m.axes, 1, keep_cluster=True),
        run_fn=recorder([], tmp_path, verdicts),
        say=lambda _: None,
        down=downs.append,
    )
    assert out.exit_code == 2 and downs == []
    assert "UNKNOWN" in mx.summary(out).splitlines()[-1]


def test_the_cluster_is_removed_even_when_a_run_raises(tmp_path: Path) -> None:
    def boom(
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = None,
        on_cluster: Callable[[str], None] | None = None,
    ) -> RunResult:
        assert on_cluster is not None
        on_cluster(opts.cluster_name)  # the run brought the cluster up, then failed
        raise RuntimeError("bug")

    downs: list[str] = []
    with pytest.raises(RuntimeError):
        mx.drive(flags(f"--results-dir {tmp_path}"), run_fn=boom, say=print, down=downs.append)
    assert downs == ["insync"]


@pytest.mark.parametrize("keep", [False, True], ids=["teardown", "keep-cluster"])
def test_a_cluster_a_run_made_that_never_became_ready_goes_with_the_teardown(
    tmp_path: Path, keep: bool
) -> None:
    """``scenario run`` and ``catalogue`` tear down through here: a cluster the run made
    that never became ready is owned, removed unless --keep-cluster, and the error's one
    line says which happened."""
    from types import SimpleNamespace

    from cluster.model import NotReady

    def not_ready(
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = None,
        on_cluster: Callable[[str], None] | None = None,
    ) -> RunResult:
        assert on_cluster is not None
        on_cluster(opts.cluster_name)  # as the runner does with a NotReady from up()
        made = SimpleNamespace(spec=SimpleNamespace(name=opts.cluster_name), nodes={})
        err = NotReady(made, RuntimeError("node n2 never became ready"),  # type: ignore[arg-type]
                       f"insync cluster down --cluster-name {opts.cluster_name}")
        err.settle(removed=False, logs="results/x/nodes")  # the runner, without --teardown
        raise err

    downs: list[str] = []
    matrix = flags(f"--results-dir {tmp_path}{' --keep-cluster' if keep else ''}")
    with pytest.raises(NotReady) as caught:
        mx.drive(matrix, run_fn=not_ready, say=print, down=downs.append)
    assert downs == ([] if keep else ["insync"])
    assert caught.value.one_line().endswith(
        "it is kept: remove it with `insync cluster down --cluster-name insync`)" if keep
        else "its nodes' logs are in results/x/nodes; it is removed (teardown))")


def test_a_cluster_no_run_brought_up_is_left_alone(tmp_path: Path) -> None:
    """The first run fails before its cluster is up (no engine, say): a cluster of the
    same name that was there before is not the matrix's to remove."""

    def no_engine(
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = None,
        on_cluster: Callable[[str], None] | None = None,
    ) -> RunResult:
        raise EnvironmentProblem("no Docker engine answers", hint="start one")

    downs: list[str] = []
    with pytest.raises(EnvironmentProblem):
        mx.drive(flags(f"--results-dir {tmp_path}"), run_fn=no_engine, say=print, down=downs.append)
    assert downs == []


def test_a_matrix_block_is_added_without_touching_the_rest(tmp_path: Path) -> None:
    (combo,), _ = mx.expand(flags("--acks all"))
    rd = RunDir.create(tmp_path, combo.name, START)
    write_json(rd.test_path, {"name": combo.name, "argv": ["insync", "run"], "seed": 1})
    mx._mark(RunResult(rd, {}, 0), combo, 2)
    data = read_json(rd.test_path)
    assert data["seed"] == 1 and data["argv"] == ["insync", "run"]
    assert data["matrix"] == {"combination": combo.name, "run": 2, "settings": combo.settings()}


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "0"], "--runs: must be a whole number from 1 to 1000"),
        (["--config", "/nonexistent/matrix.toml"], "no such file"),
        (["--acks", "1,all", "--min-insync", "5"], "--min-insync 5 > --replication-factor 3"),
    ],
    ids=["runs", "config", "no-valid-combination"],
)
def test_the_command_rejects_bad_input_in_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    assert main(["matrix", *argv]) == 64
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_help_documents_the_nemesis_axis_and_the_config_format(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["matrix", "--help"])
    out = capsys.readouterr().out
    assert "--nemesis kill,partition --nemesis none" in out and "[matrix]" in out
    assert "repeat the flag" in out and "--keep-cluster" in out


def test_a_stopped_run_joins_neither_the_tallies_nor_the_table(tmp_path: Path) -> None:
    # A catalogue stopped mid-run (SIGTERM) had counted that run's undrained history as a
    # control that failed; resuming runs it again, so until then it is no verdict at all.
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path} --cluster-name mx"))
    calls: list[RunOptions] = []
    after: list[int] = []
    lines: list[str] = []

    def stopped_second(opts: RunOptions, **_: Any) -> RunResult:
        calls.append(opts)
        rd = RunDir.create(tmp_path, opts.name or "run", START + timedelta(seconds=len(calls)))
        stopped = len(calls) == 2
        verdict = {"valid": False, "anomaly-counts": {"unseen": 8}} if stopped else {"valid": True}
        rd.write_results({**verdict, "run": {"interrupted": stopped}})
        return RunResult(rd, verdict, 1 if stopped else 0, stopped)

    out = mx.run_combinations([combo], 3, keep_cluster=True, run_fn=stopped_second,
                              say=lines.append, after=lambda r, c, k: after.append(k))
    assert len(calls) == 2 and out.interrupted  # the driver stops after the stopped run
    assert sorted(out.verdicts[combo.name]) == [1] and after == [1]
    assert any(line.endswith("run 2: interrupted") or " run 2: interrupted " in line
               for line in lines)


def test_a_run_stored_before_an_option_existed_resumes_only_at_its_default(
    tmp_path: Path,
) -> None:
    """A block written before --record-keys and --txn-after-abort existed ran as their
    defaults do: it matches while they stay at their defaults, and not once one is set."""
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    assert combo.settings()["record_keys"] is False  # the defaults, written explicitly
    assert combo.settings()["txn_after_abort"] == "seek"
    ok = {"valid": True, "run": {"interrupted": False}}
    before = {k: v for k, v in combo.settings().items()
              if k not in ("record_keys", "txn_after_abort")}
    stored(tmp_path, combo, 1, results=ok, settings=before)
    assert sorted(mx.done_runs(tmp_path, combo)) == [1]
    (kept,), _ = mx.expand(flags(f"--acks all --record-keys true --results-dir {tmp_path}"))
    assert mx.done_runs(tmp_path, kept) == {}
    (changed,) = changed_runs(tmp_path, kept)
    assert changed.diff == {"record_keys": (False, True)}


def test_a_stored_run_older_than_the_failed_steps_is_judged_with_them(tmp_path: Path) -> None:
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    old_block = {"main_s": 60.0, "in_faults": {"in_force_s": 10.0, "acked_sends": 5}}
    results = {"valid": True, "run": {"interrupted": False, "coverage": old_block,
                                      "phase_times": {"warm-up": [9.0, 10.0],
                                                      "main": [10.0, 70.0]}}}
    rd = stored(tmp_path, combo, 1, results=results)
    rd.history_path.write_text(
        '{"index":0,"time":30000000000,"process":"nemesis","type":"invoke","f":"start"}\n'
        '{"index":1,"time":31000000000,"process":"nemesis","type":"info","f":"start",'
        '"error":"exited 1"}\n')
    verdict = mx.done_runs(tmp_path, combo)[1].verdict
    assert failed_steps(verdict) == ["start at 30.0 s (exited 1)"]


def test_a_stored_run_older_than_log_signatures_gets_them_from_its_node_logs(
    tmp_path: Path,
) -> None:
    """Read back, a run stored before ``run.log_signatures`` is scanned, so its run line
    says what a new run's would; a run stored with the key keeps it as stored."""
    (combo,), _ = mx.expand(flags(f"--acks all --results-dir {tmp_path}"))
    old = stored(tmp_path, combo, 1, results={"valid": True, "run": {"interrupted": False}})
    new = stored(tmp_path, combo, 2, minutes=1, results={
        "valid": True, "run": {"interrupted": False, "log_signatures": {}}})
    line = ("java.lang.IllegalStateException: Trying to complete a transactional offset commit "
            "for producerId 4 and groupId g0 even though the offset commit record itself "
            "hasn't been appended to the log.\n")
    for rd in (old, new):
        (rd.nodes_path / "n2").mkdir()
        (rd.nodes_path / "n2" / "var_log_kafka_server.log").write_text(line)
    done = mx.done_runs(tmp_path, combo)
    assert done[1].verdict["run"]["log_signatures"]["KAFKA-17507"]["nodes"] == {"n2": 1}
    assert done[2].verdict["run"]["log_signatures"] == {}
