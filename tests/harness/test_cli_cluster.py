"""``insync cluster`` rejects bad input with one line and no traceback, before
touching Docker, Maven or apt."""

from __future__ import annotations

import pytest

from harness.cli import main


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["cluster", "up", "--kafka-version", "9.9"], "Maven Central lists no Kafka 9.9 release"),
        (
            ["cluster", "up", "--kafka-version", "4.1.x", "--mode", "zookeeper"],
            "does not run in zookeeper mode",
        ),
        (["cluster", "up", "--broker-config", "node.id=4"], "node.id is set by insync"),
        (["cluster", "up", "--broker-config", "oops"], "--broker-config expected key=value"),
        (["cluster", "up", "--nodes", "0"], "--nodes must be a whole number from 1 to 9"),
        (["cluster", "up", "--nodes", "2", "--controllers", "3"], "--controllers must be"),
    ],
    ids=[
        "unknown-version",
        "zk-on-4.1",
        "reserved-key",
        "malformed-override",
        "zero-nodes",
        "too-many-voters",
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 64
    err = capsys.readouterr().err
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err
