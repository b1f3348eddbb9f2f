"""Malformed scenario files: one line, exit 64, naming the file, the key and what is accepted.

Each case breaks the valid ``MINIMAL`` file one way and reads it the way a user
does, ``insync scenario list --scenario-file FILE``; the same loader reads the
shipped catalogue, so these hold for it too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from scenario_text import MINIMAL

from harness.cli import main

# (what replaces what in MINIMAL, a needle of the message): one row per kind of mistake.
CASES: list[tuple[str, str, str, str]] = [
    ("not-toml", 'name = "tiny"', "name = ", "not TOML"),
    ("unknown-top-key", 'name = "tiny"', 'name = "tiny"\ncolour = "red"', "colour: unknown key"),
    ("missing-bug", 'bug = "a tiny bug"\n', "", "bug: missing"),
    ("name-not-file", 'name = "tiny"', 'name = "other"', "name: 'other' must be the file's"),
    ("story-not-text", 'story = "A story of one line."', "story = 3", "story: expected non-empty"),
    ("sources-not-urls", '["https://issues.apache.org/jira/browse/KAFKA-1"]', '["KAFKA-1"]',
     "sources: expected a list of URLs"),
    ("versions-unknown-line", 'min = "0.10.2"', 'min = "0.7.0"', "versions.min/max"),
    ("versions-backwards", 'min = "0.10.2"\nmax = "4.1"', 'min = "4.1"\nmax = "0.10.2"',
     "runs backwards"),
    ("versions-bad-mode", 'modes = ["zookeeper", "kraft"]', 'modes = ["raft"]',
     "versions.modes: expected a list of modes"),
    ("unknown-setting", 'acks = "1"', 'acks = "1"\ncolour = 3', "[settings]: unknown option"),
    ("forbidden-setting", 'acks = "1"', 'acks = "1"\nkafka-version = "4.1"',
     "settings.kafka-version: not a scenario setting"),
    ("nemesis-setting", 'acks = "1"', 'acks = "1"\nnemesis = "kill"',
     "settings.nemesis: not a scenario setting"),
    ("bad-setting-value", 'acks = "1"', 'acks = "2"', "--acks must be one of 0, 1, all"),
    ("setting-out-of-range", "time-limit = 30", "time-limit = 0", "--time-limit must be"),
    ("broker-not-values", '"replica.lag.time.max.ms" = 5000', '"replica.lag.time.max.ms" = [1]',
     "broker: expected a text or number value"),
    ("no-steps", '[[step]]\nat = 10\nf = "kill"\nvalue = "leader:t0-0"\n\n'
     '[[step]]\nat = 15\nf = "start"\nvalue = "all"\n', "", "step: missing"),
    ("step-unknown-op", 'f = "kill"', 'f = "explode"', "[[step]] 1: unknown nemesis op"),
    ("step-bad-at", "at = 10", "at = -1", "[[step]] 1: 'at' must be a number"),
    ("unknown-anomaly", 'anomalies = ["lost-write"]', 'anomalies = ["lost-writes"]',
     "expect[1].anomalies: unknown anomaly"),
    ("valid-with-anomalies", "valid = true\n\n[[variant]]",
     'valid = true\nanomalies = ["duplicate"]\n\n[[variant]]', "valid = true lists anomalies"),
    ("invalid-names-none", 'anomalies = ["lost-write"]', "anomalies = []",
     "valid = false names no anomaly"),
    ("any-unknown-anomaly", 'anomalies = ["lost-write"]', 'any = ["lost", "unseen"]',
     "expect[1].any: unknown anomaly"),
    ("any-on-a-valid-run", "valid = true\n\n[[variant]]",
     'valid = true\nany = ["duplicate"]\n\n[[variant]]', "only valid = false may list any"),
    ("replicas-unknown-word", "valid = false", 'valid = false\nreplicas = "split"',
     "expect[1].replicas: expected diverged, consistent, offsets-backwards"),
    ("read-stall-not-seconds", "valid = false", "valid = false\nread-stall-s = -3",
     "expect[1].read-stall-s: expected seconds above 0"),
    ("read-stall-text", "valid = false", 'valid = false\nread-stall-s = "long"',
     "expect[1].read-stall-s: expected seconds above 0"),
    ("abort-observed-zero", "valid = false", "valid = false\nabort-observed = 0",
     "expect[1].abort-observed: expected a count above 0"),
    ("abort-observed-text", "valid = false", 'valid = false\nabort-observed = "many"',
     "expect[1].abort-observed: expected a count above 0"),
    ("log-signature-unknown", "valid = false", 'valid = false\nlog-signatures = ["KAFKA-1"]',
     "expect[1].log-signatures: unknown signature"),
    ("log-signatures-not-a-list", "valid = false", 'valid = false\nlog-signatures = "KAFKA-17507"',
     "expect[1].log-signatures: unknown signature"),
    ("valid-not-bool", "valid = false", 'valid = "no"', "expect[1].valid: expected true or false"),
    ("expect-gap", 'versions = "2.8..4.1"', 'versions = "3.9..4.1"',
     "expect: no expectation for Kafka 2.8"),
    ("expect-overlap", 'versions = "2.8..4.1"', 'versions = "1.1..4.1"',
     "expect: several expectations for Kafka 1.1"),
    ("expect-unknown-key", "valid = false", "valid = false\nwhy = 1", "expect[1].why: unknown key"),
    ("variant-outside", 'versions = "0.11.0..4.1"\nsettings', 'versions = "0.10.2..9.9"\nsettings',
     "variant[1].versions"),
    ("variant-unknown-key", 'name = "isr2"', 'name = "isr2"\nsteps = 1',
     "variant[1].steps: unknown key"),
    ("variant-mode", 'settings = { acks = "all", min-insync = 2 }',
     'settings = { acks = "all", min-insync = 2, mode = "kraft" }',
     "variant[1].settings.mode"),
    ("idempotence-on-0.10", 'acks = "1"', 'acks = "all"\nidempotence = true',
     "on Kafka 0.10.2: --idempotence true needs Kafka 0.11.0+ brokers"),
    ("variant-min-insync-over-rf", "min-insync = 2 }", "min-insync = 4 }",
     "variant isr2 on Kafka 0.11.0: --min-insync 4"),
    ("reserved-broker-key", '"replica.lag.time.max.ms" = 5000', '"broker.id" = 7', "broker.id"),
]


@pytest.mark.parametrize(("old", "new", "needle"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_malformed_file_is_one_line_naming_file_and_key(
    write: Callable[..., Path], capsys: pytest.CaptureFixture[str], old: str, new: str,
    needle: str
) -> None:
    assert old in MINIMAL
    path = write(MINIMAL.replace(old, new, 1))
    code = main(["scenario", "list", "--scenario-file", str(path)])
    out, err = capsys.readouterr()
    assert code == 64, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err and needle in err, err
    assert err.rstrip().endswith(")"), "the hint says what is accepted"


def test_the_minimal_file_itself_is_fine(write: Callable[..., Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "list", "--scenario-file", str(write())]) == 0
    assert "tiny" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [(["scenario", "show", "nope"],
      "no scenario 'nope' (known: abort-rewind, acks1-leader-failover"),
     (["scenario", "list", "--scenario-file", "/nonexistent/x.toml"], "no such file"),
     (["scenario", "list", "--scenario-dir", "/nonexistent"], "is not a directory"),
     (["scenario"], "the following arguments are required"),
     (["scenario", "show"], "the following arguments are required: name")],
    ids=["unknown-name", "missing-file", "missing-dir", "no-action", "show-no-name"],
)
def test_bad_arguments_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                    needle: str) -> None:
    assert main(argv) == 64
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and needle in err, err


def test_a_users_file_may_not_take_a_shipped_name(write: Callable[..., Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    text = MINIMAL.replace('name = "tiny"', 'name = "power-loss-all"')
    path = write(text, name="power-loss-all")
    assert main(["scenario", "list", "--scenario-dir", str(path.parent)]) == 64
    err = capsys.readouterr().err
    assert "scenario power-loss-all is in" in err and str(path) in err
