"""Bad input to ``insync run | matrix | cluster``: one line, exit 64, and nothing touched.

Every case runs the real command line in-process with the fake engine of
``tests/support/fake_engine.py`` (``DOCKER_HOST`` at a fake Engine API that logs
every request and refuses all but its version; ``dockerd``, ``apt-get``, ``mvn``
and ``debootstrap`` first on ``PATH``, logging their argv and exiting 1) and
asserts that its log stays EMPTY, that no run directory appears under
``--results-dir``, and that the error is printed exactly once. The canary tests
at the end prove the fakes sit on the path the code really takes: valid input
does reach them.
"""

from __future__ import annotations

import math

import pytest
from fake_engine import Engine

from harness.cli import main
from harness.run.options import OPTIONS
from harness.run.values import number


def refused(engine: Engine, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``insync argv``; assert exit 64, one stderr line, nothing called or created."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 64, err
    assert err.startswith("insync: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and out == ""
    assert engine.calls() == []
    assert not engine.results.exists()
    return err.strip()


def with_results(engine: Engine, argv: list[str]) -> list[str]:
    if argv[0] == "cluster":
        return argv
    return [*argv, "--results-dir", str(engine.results)]


# -- the examples: an unknown version, a mode the version lacks ----------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--kafka-version", "9.9.x", "--teardown"], "lists no Kafka 9.9 release"),
        (["matrix", "--kafka-version", "9.9.x"], "lists no Kafka 9.9 release"),
        (["matrix", "--kafka-version", "4.1.x,9.9.x"], "lists no Kafka 9.9 release"),
        (["cluster", "smoke", "--kafka-version", "9.9.x"], "lists no Kafka 9.9 release"),
        (["cluster", "up", "--kafka-version", "9.9.x"], "lists no Kafka 9.9 release"),
        (["run", "--mode", "zookeeper", "--teardown"], "4.1.2 does not run in zookeeper mode"),
        (["run", "--kafka-version", "4.1", "--mode", "zookeeper"], "does not run in zookeeper"),
        (["matrix", "--mode", "zookeeper"], "4.1.2 does not run in zookeeper mode"),
        (["cluster", "up", "--mode", "zookeeper"], "4.1.2 does not run in zookeeper mode"),
        (["cluster", "smoke", "--mode", "zookeeper"], "4.1.2 does not run in zookeeper mode"),
    ],
    ids=[
        "run-unknown-version-teardown",
        "matrix-unknown-version",
        "matrix-one-unknown-version-in-the-axis",
        "smoke-unknown-version",
        "up-unknown-version",
        "run-zk-on-kraft-only",
        "run-zk-on-4.1",
        "matrix-zk-on-kraft-only",
        "up-zk-on-kraft-only",
        "smoke-zk-on-kraft-only",
    ],
)
def test_versions_and_modes_are_refused_before_docker(
    engine: Engine, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(engine, with_results(engine, argv), capsys)
    assert needle in line
    assert "(" in line  # says what to do: the known versions, or --mode kraft


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--kafka-version", "0.10.2.x", "--mode", "zookeeper", "--idempotence", "true"],
         "--idempotence true needs Kafka 0.11.0+ brokers"),
        (["run", "--kafka-version", "0.10.2.2", "--mode", "zookeeper", "--txn"],
         "--txn true needs Kafka 0.11.0+ brokers"),
        (["matrix", "--kafka-version", "0.10.2.x", "--mode", "zookeeper", "--idempotence"],
         "--idempotence true needs Kafka 0.11.0+ brokers"),
    ],
    ids=["run-idempotence-on-0.10", "run-txn-on-0.10", "matrix-idempotence-on-0.10"],
)
def test_client_features_old_brokers_lack_are_refused_before_docker(
    engine: Engine, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(engine, with_results(engine, argv), capsys)
    assert needle in line and "got Kafka 0.10.2.2" in line


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--kafka-version", "3.9.x", "--sub-via", "subscribe", "--group-protocol",
          "consumer"], "--group-protocol consumer needs Kafka 4.0.0+ brokers (KIP-848), got "
                       "Kafka 3.9"),
        (["run", "--commit", "sync"], "--commit sync needs --sub-via subscribe"),
        (["matrix", "--groups", "2"], "--groups 2 needs --sub-via subscribe"),
        (["run", "--txn-after-abort", "none"], "--txn-after-abort none needs --txn"),
    ],
    ids=["run-consumer-protocol-on-3.9", "run-sync-commits-with-assign", "matrix-groups-assign",
         "run-after-abort-without-txn"],
)
def test_group_options_are_refused_before_docker(
    engine: Engine, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(engine, with_results(engine, argv), capsys)
    assert needle in line


# -- numbers -----------------------------------------------------------------------------------

FLOAT_FLAGS = [s.flag for s in OPTIONS if s.conv is number]
NON_FINITE = ["nan", "inf", "-inf", "1e400"]


def test_every_float_option_is_covered() -> None:
    """The float cases below come from the table; make sure it still has them all."""
    assert set(FLOAT_FLAGS) >= {
        "--time-limit",
        "--rate",
        "--final-time-limit",
        "--quiet-time",
        "--nemesis-interval",
        "--txn-abort-p",
    }
    assert all(s.range is not None for s in OPTIONS if s.conv is number)
    assert math.isinf(float("1e400"))  # why 1e400 is in NON_FINITE


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("flag", FLOAT_FLAGS)
@pytest.mark.parametrize("command", ["run", "matrix"])
def test_non_finite_numbers_are_refused(
    engine: Engine, command: str, flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, f"{flag}={value}", "--teardown"]  # = because argparse reads -inf as a flag
    line = refused(engine, with_results(engine, argv), capsys)
    assert f"{flag} must be " in line and f"got '{value}'" in line


def test_minus_inf_after_a_space_is_still_one_usage_line(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(engine, with_results(engine, ["run", "--rate", "-inf"]), capsys)
    assert "--rate: expected one argument" in line


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--nodes", "0"], "--nodes must be a whole number from 1 to 9, got '0'"),
        (["run", "--nodes", "-3"], "--nodes must be a whole number from 1 to 9"),
        (["run", "--nodes", "10"], "--nodes must be a whole number from 1 to 9"),
        (["run", "--nodes", "3.5"], "--nodes must be a whole number"),
        (["run", "--nodes", "1e400"], "--nodes must be a whole number"),
        (["run", "--concurrency", "0"], "--concurrency must be a whole number from 1 to 1024"),
        (["run", "--heap-mb", "64"], "--heap-mb must be a whole number from 128 to 4096"),
        (["run", "--replication-factor", "0"], "--replication-factor must be a whole number"),
        (["run", "--min-insync", "-1"], "--min-insync must be a whole number"),
        (["run", "--poll-ms", "0"], "--poll-ms must be a whole number from 1 to 60000"),
        (["run", "--retries", "-1"], "--retries must be a whole number from 0 to 2147483647"),
        (["run", "--max-in-flight", "0"], "--max-in-flight must be a whole number"),
        (["run", "--max-writes-per-key", "0"], "--max-writes-per-key must be a whole number"),
        (["run", "--seed", "-1"], "--seed must be a whole number from 0"),
        (["run", "--seed", "1" + "0" * 400], "--seed must be a whole number from 0"),
        (["run", "--time-limit", "0"], "--time-limit must be a finite number in (0, 604800]"),
        (["run", "--time-limit", "1e9"], "--time-limit must be a finite number in (0, 604800]"),
        (["run", "--rate", "0.001"], "--rate must be 0 or a finite number from 0.01"),
        (["run", "--txn-abort-p", "1"], "--txn-abort-p must be a finite number in [0, 1)"),
        (["run", "--nemesis-interval", "0"], "--nemesis-interval must be a finite number in (0,"),
        (["run", "--nodes", "2"], "--replication-factor 3 needs at least as many nodes"),
        (["run", "--min-insync", "3", "--replication-factor", "2"], "no write could ever"),
        (["run", "--max-in-flight", "6"], "--max-in-flight 6 is over 5"),
        (["run", "--pin-keys", "t0-8"], "--pin-keys must name workload keys t<N>-<P>, P from 0"),
        (["run", "--pin-keys", "t0-0,x"], "to 7 (e.g. t0-0), got 'x'"),
        (["run", "--pin-keys", "topic-1"], "(e.g. t0-0), got 'topic-1'"),
        (["matrix", "--nodes", "0"], "--nodes must be a whole number from 1 to 9"),
        (["matrix", "--min-insync", "0,2"], "--min-insync must be a whole number"),
        (["matrix", "--runs", "0"], "--runs: must be a whole number from 1 to 1000"),
        (["matrix", "--runs", "nan"], "--runs: must be a whole number from 1 to 1000"),
        (["cluster", "up", "--nodes", "-1"], "--nodes must be a whole number from 1 to 9"),
        (["cluster", "up", "--heap-mb", "64"], "--heap-mb must be a whole number from 128"),
        (["cluster", "up", "--controllers", "0"], "--controllers must be a whole number"),
        (["run", "--controllers", "0"], "--controllers must be a whole number from 1 to 9"),
        (["cluster", "up", "--ready-timeout", "nan"], "--ready-timeout: must be a finite"),
        (["cluster", "smoke", "--ready-timeout", "inf"], "--ready-timeout: must be a finite"),
        (["cluster", "smoke", "--nodes", "1e400"], "--nodes must be a whole number"),
        (["cluster", "logs", "--lines", "0"], "--lines: must be a whole number from 1"),
    ],
    ids=lambda v: "_".join(v) if isinstance(v, list) else None,
)
def test_numbers_out_of_range_are_refused(
    engine: Engine, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert needle in refused(engine, with_results(engine, argv), capsys)


# -- names, keys, files --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--name", "a/b"], "--name cannot name a results directory"),
        (["run", "--name", "latest"], "--name cannot name a results directory"),
        (["run", "--cluster-name", "no spaces"], "may hold only a-z, 0-9 and '-'"),
        (["run", "--broker-config", "node.id=4"], "node.id is set by insync"),
        (["run", "--broker-config", "oops"], "expected key=value"),
        (["run", "--nemesis", "meteor"], "unknown nemesis faults ['meteor']"),
        (["run", "--acks", "2"], "--acks must be one of 0, 1, all, got '2'"),
        (["run", "--txn", "maybe"], "--txn expected true or false, got 'maybe'"),
        (["run", "--nemesis-schedule", "/nonexistent/s.toml"], "no such file"),
        (["cluster", "down", "--cluster-name", ""], "may hold only a-z, 0-9 and '-'"),
        (["cluster", "status", "--cluster-name", "a,b"], "may hold only a-z, 0-9 and '-'"),
        (["matrix", "--cluster-name", "a b"], "may hold only a-z, 0-9 and '-'"),
        (["cluster", "up", "--cluster-name", "zz\u00b2"], "cluster name 'zz\u00b2' may hold"),
        (["cluster", "up", "--cluster-name", "Upper"], "may hold only a-z, 0-9 and '-'"),
        (["run", "--cluster-name=-x"], "may hold only a-z, 0-9 and '-'"),
        (["scenario", "run", "hw-truncation", "--kafka-version", "1.1", "--cluster-name", "a;b"],
         "may hold only a-z, 0-9 and '-'"),
        (["cluster", "down", "--name", "x"], "unrecognized arguments: --name x"),
        (["cluster", "up", "--broker-config", "listeners=x"], "listeners is set by insync"),
    ],
    ids=lambda v: "_".join(v) if isinstance(v, list) else None,
)
def test_names_keys_and_files_are_refused(
    engine: Engine, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert needle in refused(engine, with_results(engine, argv), capsys)


CONFIGS: list[tuple[str, bytes, str]] = [
    ("binary", b"\x7fELF\x02\x01\x01\x00\x00\x00", "is a binary file, not text"),
    ("latin-1", "nodes = 3 # caf\u00e9\n".encode("latin-1"), "is not UTF-8 text"),
    ("not-toml", b"nodes = [", "not TOML"),
    ("unknown-key", b"colour = 'red'", "unknown option 'colour'"),
    ("bool-for-int", b"nodes = true", "--nodes must be a whole number"),
    ("float-for-int", b"nodes = 3.5", "--nodes must be a whole number"),
    ("toml-nan", b"time-limit = nan", "--time-limit must be a finite number"),
    ("toml-inf", b"rate = inf", "--rate must be 0 or a finite number"),
    ("text-nan", b"quiet-time = 'nan'", "--quiet-time must be a finite number"),
    ("list-for-text", b"name = [1, 2]", "--name expected text"),
    ("int-for-bool", b"txn = 1", "--txn expected true or false"),
    ("nested-table", b"[broker-config]\na = {b = 1}", "expected a text or number value"),
    ("unknown-version", b"kafka-version = '9.9.x'", "no Kafka 9.9 release"),
]


@pytest.mark.parametrize("command", ["run", "matrix"])
@pytest.mark.parametrize(
    ("content", "needle"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS]
)
def test_bad_config_files_are_refused(
    engine: Engine, command: str, content: bytes, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = engine.tmp / "bad.toml"
    config.write_bytes(content)
    argv = with_results(engine, [command, "--config", str(config)])
    assert needle in refused(engine, argv, capsys)


@pytest.mark.parametrize("command", ["run", "matrix"])
@pytest.mark.parametrize("what", ["missing", "directory"])
def test_config_that_is_not_a_file(
    engine: Engine, command: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = engine.tmp / "conf"
    if what == "directory":
        path.mkdir()
    line = refused(engine, with_results(engine, [command, "--config", str(path)]), capsys)
    assert ("no such file" if what == "missing" else "is a directory") in line


@pytest.mark.parametrize("command", ["run", "matrix"])
def test_results_dir_that_is_a_file(
    engine: Engine, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    file = engine.tmp / "results.txt"
    file.write_text("not a folder\n")
    code = main([command, "--results-dir", str(file)])
    _, err = capsys.readouterr()
    assert code == 64 and err.count("\n") == 1
    assert "--results-dir" in err and "is not a directory" in err
    assert file.read_text() == "not a folder\n" and engine.calls() == []


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file"),
        (b"{not json", "not a test.json with an argv"),
        (b'{"argv": 5}', "its argv is not a list of texts"),
        (b'{"argv": ["rm", "-rf"]}', "argv is not an insync run command"),
        (b'{"argv": ["insync", "run", "--bogus"]}', "its argv does not parse"),
        (b'{"argv": ["insync", "run", "--time-limit", "nan"]}', "--time-limit must be a finite"),
        (b"\xff\xfe", "is not UTF-8 text"),
    ],
    ids=["missing", "not-json", "argv-not-list", "not-insync", "bad-flag", "nan", "binary"],
)
def test_bad_replays_are_refused(
    engine: Engine, content: bytes | None, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    test_json = engine.tmp / "test.json"
    if content is not None:
        test_json.write_bytes(content)
    line = refused(engine, with_results(engine, ["run", "--replay", str(test_json)]), capsys)
    assert needle in line and "--replay" in line


def test_a_schedule_that_is_a_directory_or_binary(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = engine.tmp / "sched"
    folder.mkdir()
    line = refused(engine, with_results(engine, ["run", "--nemesis-schedule", str(folder)]), capsys)
    assert "is a directory" in line
    binary = engine.tmp / "sched.bin"
    binary.write_bytes(b"\x00\x01")
    line = refused(engine, with_results(engine, ["run", "--nemesis-schedule", str(binary)]), capsys)
    assert "is a binary file" in line


@pytest.mark.parametrize(("step", "needle"), [
    ('wait = "isr-is-leader"\nkey = "t0-0"\n',
     "s.toml step 2: wait isr-is-leader needs 'timeout' (give the seconds it may wait"),
    ('wait = "isr-shrunk"\nkey = "t0-0"\ntimeout = 3\n', "s.toml step 2: 'wait' must be one of"),
    ('wait = "left-isr"\nkey = "t0-0"\nnode = "one"\ntimeout = 3\n',
     "s.toml step 2: 'node' must be a node name (n2), leader:KEY, followers:KEY, controller "
     "or non-controllers"),
    ('after = 1\nat = 2\nf = "kill"\n', "s.toml step 2: 'at' and 'after' together (give one"),
], ids=["no-timeout", "unknown-condition", "random-node", "at-and-after"])
def test_a_malformed_wait_step_is_refused_before_anything_starts(
    engine: Engine, step: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script = engine.tmp / "s.toml"
    script.write_text('[[step]]\nf = "kill"\nvalue = "n1"\n\n[[step]]\n' + step)
    line = refused(engine, with_results(engine, ["run", "--nemesis-schedule", str(script)]),
                   capsys)
    assert needle in line


# -- canaries: the fakes are on the path the code really takes --------------------------------


def test_canary_docker_calls_reach_the_fake(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cluster", "status"]) == 70  # the fake engine refuses the listing
    assert engine.calls()[:2] == ["docker GET /version", "docker GET /containers/json"]
    assert capsys.readouterr().err.count("\n") == 1


def test_canary_a_valid_run_that_fails_before_up_leaves_the_cluster_alone(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """Valid input gets as far as the Kafka download (the fake mvn fails): one line,
    and with --teardown the cluster named insync is NOT removed: the run never had it."""
    code = main(["run", "--teardown", "--time-limit", "1", "--results-dir", str(engine.results)])
    err = capsys.readouterr().err
    assert code == 69 and err.count("\n") == 1 and "mvn" in err
    calls = engine.calls()
    assert calls and all(c.startswith("mvn ") for c in calls)  # no docker at all
    assert len(list(engine.results.glob("*/*/test.json"))) == 1  # valid input: a run dir


def test_canary_smoke_that_fails_before_up_removes_nothing(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cluster", "smoke"]) == 69
    assert capsys.readouterr().err.count("\n") == 1
    calls = engine.calls()
    assert calls and not any(c.startswith("docker") for c in calls)
