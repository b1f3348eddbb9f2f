"""Every usage error of every command and subcommand: one line, exit 64, never 2.

Exit 2 is the checker's "unknown" verdict; argparse's own usage errors used to
exit 2 as well, so a script could not tell "bad command line" from "the
history's verdict is unknown". ``harness.base.args.Parser`` fixes that once for every
subparser; these tests walk the real parser so a new command is covered too.
"""

from __future__ import annotations

import argparse

import pytest

from harness.cli import build_parser, main

# A usage error must stop before anything runs; if one ever did not, the command
# would meet the fake engine, not the shared one.
pytestmark = pytest.mark.usefixtures("engine")


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[str]:
    """``["run", "cluster up", ...]``: every command and subcommand the CLI has."""
    out: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(" ".join((*prefix, name)))
                out.extend(command_paths(sub, (*prefix, name)))
    return out


COMMANDS = command_paths(build_parser())


def test_the_walk_finds_the_commands() -> None:
    assert {"run", "matrix", "check", "cluster", "cluster up", "cluster down", "bench"} <= set(
        COMMANDS
    )


def one_usage_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 64, err
    assert err.startswith("insync: ") and err.count("\n") == 1, err
    assert "usage:" not in err and out == ""
    return err.strip()


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_flag_is_one_line_naming_the_commands_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_usage_line([*command.split(), "--no-such-flag"], capsys)
    assert f"(see `insync {command} --help`)" in line
    # a missing required argument is reported first, as argparse does
    assert "--no-such-flag" in line or "the following arguments are required" in line


@pytest.mark.parametrize("command", COMMANDS)
def test_help_still_exits_0(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command.split(), "--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_version_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("insync ")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([], "the following arguments are required: COMMAND (see `insync --help`)"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["cluster"], "required: ACTION (see `insync cluster --help`)"),
        (["cluster", "explode"], "ACTION: invalid choice: 'explode'"),
        (["check"], "required: PATH (see `insync check --help`)"),
        (["report"], "required: RUN_DIR (see `insync report --help`)"),
        (["bench"], "required: NAME"),
        (["check", "h.jsonl", "--jobs", "many"], "--jobs: invalid int value: 'many'"),
        (["check", "h.jsonl", "--engine", "gpu"], "--engine: invalid choice: 'gpu'"),
        (["serve", "--port", "http"], "--port: invalid int value: 'http'"),
        (["cluster", "up", "--mode", "raft"], "--mode must be one of kraft, zookeeper, got 'raft'"),
        (["cluster", "up", "--nodes", "three"], "--nodes must be a whole number from 1 to 9"),
        (["cluster", "logs", "--lines"], "--lines: expected one argument"),
        (["run", "--nodes"], "--nodes: expected one argument (see `insync run --help`)"),
        (["run", "--config"], "--config: expected one argument"),
        (["run", "stray"], "unrecognized arguments: stray (see `insync run --help`)"),
        (["matrix", "--runs", "two"], "--runs: must be a whole number from 1 to 1000"),
        (["bench", "check", "--bogus"], "unrecognized arguments: --bogus"),
        (["bench", "check", "--workdir", "/no/such/dir"], "--workdir /no/such/dir: "),
        (["bench", "analyze", "--workdir", "/no/such/dir"], "--workdir /no/such/dir: "),
        (["bench", "spark-check", "--workdir", "/no/such/dir"], "--workdir /no/such/dir: "),
        (["bench", "check", "--workdir", "pyproject.toml"], "it is a file, not a directory"),
        (["--nope", "run"], "unrecognized arguments: --nope (see `insync --help`)"),
    ],
    ids=lambda v: "_".join(v) or "no-command" if isinstance(v, list) else None,
)
def test_usage_errors_exit_64_in_one_line(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert needle in one_usage_line(argv, capsys)
