"""``insync run`` options: flags, run.toml, replay, validation, the canonical argv."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.base.errors import UsageError
from harness.cli import build_parser
from harness.run.options import OPTIONS, RunOptions, parse


def test_defaults_resolve_to_a_complete_test() -> None:
    opts = parse([]).resolved()
    assert opts.nodes == 3 and opts.concurrency == 12 and opts.acks == "all"
    assert opts.idempotence is True and isinstance(opts.seed, int)
    assert opts.name == "queue-acks-all" and opts.teardown is False


@pytest.mark.parametrize(("argv", "drain"), [
    ([], 300.0),                                        # a short run: the floor
    (["--time-limit", "3600"], 1800.0),                 # a long one: half its main phase
    (["--time-limit", "3600", "--final-time-limit", "120"], 120.0),  # the user's word
])
def test_the_drain_bound_grows_with_the_main_phase(argv: list[str], drain: float) -> None:
    opts = parse(argv).resolved()
    assert opts.final_time_limit == drain
    assert "--final-time-limit" in opts.argv()


def test_the_readme_command_parses() -> None:
    readme = (
        "--nodes 5 --kafka-version 4.1.x --workload queue --nemesis none "
        "--time-limit 60 --rate 1000 --acks all --min-insync 2 "
        "--replication-factor 3 --seed 42"
    )
    opts = parse(readme.split()).resolved()
    assert (opts.nodes, opts.concurrency, opts.seed, opts.faults) == (5, 20, 42, [])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("--min-insync 3 --replication-factor 2", "--min-insync 3 > --replication-factor 2"),
        ("--txn --acks 1", "--txn needs --acks all"),
        ("--txn --acks 0 --idempotence false", "--txn needs --acks all"),
        ("--replication-factor 4 --nodes 3", "needs at least as many nodes"),
        ("--acks 1 --idempotence", "--idempotence needs --acks all"),
        ("--concurrency 0", "--concurrency must be a whole number from 1 to 1024, got '0'"),
        ("--time-limit 0", "--time-limit must be a finite number in (0, 604800], got '0'"),
        ("--txn-abort-p 1", "--txn-abort-p must be a finite number in [0, 1), got '1'"),
        ("--rate -1", "--rate must be 0 or a finite number from 0.01 to 1000000, got '-1'"),
        ("--nemesis-schedule /nonexistent/schedule.edn", "no such file"),
        ("--acks 2", "must be one of 0, 1, all"),
        ("--txn maybe", "expected true or false, got 'maybe'"),
    ],
    ids=[
        "min-insync>rf",
        "txn-acks1",
        "txn-acks0",
        "rf>nodes",
        "idem-acks1",
        "concurrency0",
        "time0",
        "abort-p1",
        "negative-rate",
        "no-schedule",
        "bad-acks",
        "bad-bool",
    ],
)
def test_bad_options_are_one_usage_error(argv: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse(argv.split())
    assert message in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_acks_1_turns_idempotence_off_by_default() -> None:
    opts = parse(["--acks", "1"]).resolved()
    assert opts.idempotence is False


@pytest.mark.parametrize(
    ("version", "idempotent"),
    [("0.10.2.x", False), ("0.11.0.x", True), ("2.8", True)],
    ids=["0.10-off", "0.11-on", "2.8-on"],
)
def test_idempotence_defaults_to_what_the_brokers_support(version: str, idempotent: bool) -> None:
    """0.10 brokers refuse idempotent producers: acks=all there must not mean 0 acks."""
    opts = parse(["--kafka-version", version, "--mode", "zookeeper", "--acks", "all"]).resolved()
    assert opts.idempotence is idempotent
    assert opts.validate() is opts  # the resolved settings stay valid (the runner re-checks)


def test_test_json_records_the_effective_idempotence() -> None:
    from datetime import UTC, datetime

    from harness.run.setup import test_json

    opts = parse(["--kafka-version", "0.10.2", "--mode", "zookeeper"]).resolved()
    block = test_json(opts, datetime.now(UTC), None)["workload"]
    assert block["idempotence"] is False
    assert block["producer"]["enable.idempotence"] is False
    assert "--idempotence" in (argv := test_json(opts, datetime.now(UTC), None)["argv"])
    assert argv[argv.index("--idempotence") + 1] == "false"  # a replay runs the same producers


def test_config_file_then_flags_override(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text(
        "nodes = 5\nreplication-factor = 3\ntime_limit = 30\ntxn = true\n"
        'broker-config = ["log.flush.interval.messages=1"]\nnemesis = "none"\n'
    )
    opts = parse(["--config", str(config), "--time-limit", "20"])
    assert (opts.nodes, opts.time_limit, opts.txn) == (5, 20.0, True)
    assert opts.broker_config == {"log.flush.interval.messages": "1"}


def test_config_under_a_run_table(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('[run]\nacks = "1"\nidempotence = false\n')
    assert parse(["--config", str(config)]).acks == "1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nodes = [", "not TOML"),
        ("colour = 'red'", "unknown option 'colour'"),
        ("nodes = 'many'", "--nodes"),
    ],
    ids=["not-toml", "unknown-key", "bad-type"],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "run.toml"
    config.write_text(text)
    with pytest.raises(UsageError) as err:
        parse(["--config", str(config)])
    assert message in err.value.one_line()


def test_argv_round_trips_through_replay(tmp_path: Path) -> None:
    argv = (
        "--nodes 5 --txn --sub-via subscribe --broker-config a.b=1 "
        "--broker-config c=2 --retries 3 --rate 0 --nemesis kill,partition "
        "--nemesis-targets one,majority --seed 9"
    )
    opts = parse(argv.split()).resolved()
    (tmp_path / "test.json").write_text(json.dumps({"argv": opts.argv()}))
    again = parse(["--replay", str(tmp_path / "test.json")])
    assert again == opts
    assert parse(["--replay", str(tmp_path)]) == opts  # a run directory works too


def test_replay_flags_override(tmp_path: Path) -> None:
    opts = parse(["--seed", "5", "--time-limit", "30"]).resolved()
    (tmp_path / "test.json").write_text(json.dumps({"argv": opts.argv()}))
    again = parse(["--replay", str(tmp_path / "test.json"), "--time-limit", "10"])
    assert (again.seed, again.time_limit) == (5, 10.0)


def test_replay_of_something_else_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test.json").write_text(json.dumps({"argv": ["rm", "-rf"]}))
    with pytest.raises(UsageError):
        parse(["--replay", str(tmp_path / "test.json")])
    with pytest.raises(UsageError):
        parse(["--replay", str(tmp_path / "missing.json")])


def test_every_option_is_a_cli_flag_and_a_field() -> None:
    parser = build_parser()
    args = parser.parse_args(["run", *[x for s in OPTIONS for x in (s.flag, _sample(s.name))]])
    fields = set(RunOptions.__dataclass_fields__)
    assert {s.name for s in OPTIONS} == fields
    assert all(hasattr(args, s.name) for s in OPTIONS)


def _sample(name: str) -> str:
    samples = {
        "mode": "kraft",
        "acks": "all",
        "sub_via": "assign",
        "workload": "queue",
        "broker_config": "a=b",
        "nemesis": "none",
    }
    if name in samples:
        return samples[name]
    field = RunOptions.__dataclass_fields__[name]
    kind = str(field.type)
    if "bool" in kind:
        return "true"
    if "int" in kind or "float" in kind:
        return "1"
    return "x"


def test_keep_cluster_and_no_idempotence_spellings() -> None:
    assert parse(["--teardown", "--keep-cluster"]).teardown is False
    assert parse(["--teardown"]).teardown is True
    assert parse(["--no-idempotence"]).idempotence is False


def test_nemesis_options_are_checked_before_anything_starts() -> None:
    from harness.run.setup import nemesis_options

    assert nemesis_options(parse([])) is None
    with pytest.raises(UsageError) as err:
        nemesis_options(parse(["--nemesis", "meteor"]))
    assert "meteor" in err.value.one_line()
    nopts = nemesis_options(parse(["--nemesis", "kill,partition", "--seed", "4"]))
    assert nopts is not None and nopts.faults == {"kill", "partition"} and nopts.seed == 4
    nopts = nemesis_options(parse(["--nemesis", "upgrade", "--upgrade-kafka-version", "4.1.2"]))
    assert nopts is not None and nopts.upgrade_version == "4.1.2"
    with pytest.raises(UsageError) as err:
        nemesis_options(parse(["--nemesis", "upgrade", "--upgrade-kafka-version", "4.1.2",
                               "--mode", "zookeeper", "--kafka-version", "3.9.2"]))
    assert "4.1.2 does not run in zookeeper mode" in err.value.one_line()


@pytest.mark.parametrize(("argv", "hold"), [
    ([], 15.0),
    (["--broker-config", "replica.lag.time.max.ms=2500"], 10.0),
    (["--broker-config", "controller.socket.timeout.ms=30000"], 40.0),
    (["--broker-config", "replica.lag.time.max.ms=2500", "--nemesis-hold", "3"], 3.0),
    (["--nemesis-hold", "0"], 0.0),
], ids=["default", "from-replica-lag", "from-controller-timeout", "explicit", "none"])
def test_a_fault_is_held_until_writes_resume_unless_told(argv: list[str], hold: float) -> None:
    """Held twice the replica lag plus the controller socket timeout, a follower cut off
    by the fault leaves the ISR inside it, even when the fault also cut off the active
    controller, and acks=all writes go on: the fault is tested, not only the stall."""
    from harness.run.setup import nemesis_options

    nopts = nemesis_options(parse(["--nemesis", "kill", *argv]))
    assert nopts is not None and nopts.min_in_force == hold


def test_a_negative_hold_is_refused() -> None:
    with pytest.raises(UsageError, match="--nemesis-hold"):
        parse(["--nemesis-hold", "-1"])


@pytest.mark.parametrize(
    "argv",
    [["--nemesis", "meteor"], ["--broker-config", "listeners=PLAINTEXT://x:1"]],
    ids=["unknown-fault", "reserved-broker-key"],
)
def test_run_refuses_bad_options_before_creating_anything(tmp_path: Path, argv: list[str]) -> None:
    from harness.run import run

    with pytest.raises(UsageError):
        run(parse([*argv, "--results-dir", str(tmp_path / "results")]), say=lambda _m: None)
    assert not (tmp_path / "results").exists()


def test_test_json_records_the_leader_check_and_a_run_turns_it_off() -> None:
    """The brokers' leader check moves leaders by plan (KAFKA-20554's trigger): on record."""
    from datetime import UTC, datetime

    from harness.base.errors import UsageError
    from harness.run.setup import test_json

    on = test_json(parse([]).resolved(), datetime.now(UTC), None)["cluster"]
    assert on["leader_check_s"] == 10.0
    off = test_json(parse(["--leader-check", "false"]).resolved(), datetime.now(UTC), None)
    assert off["cluster"]["leader_check_s"] is None
    assert off["cluster"]["broker_config"]["auto.leader.rebalance.enable"] == "false"
    pinned = parse(["--broker-config", "leader.imbalance.check.interval.seconds=300"])
    assert test_json(pinned.resolved(), datetime.now(UTC), None)["cluster"][
        "leader_check_s"] == 300.0
    with pytest.raises(UsageError, match="contradicts"):
        test_json(parse(["--leader-check", "false", "--broker-config",
                         "auto.leader.rebalance.enable=true"]).resolved(),
                  datetime.now(UTC), None)
