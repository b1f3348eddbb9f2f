"""The cluster settings: one table, so ``cluster up``, ``run`` and ``matrix`` agree on each one.

Walks the real parser: every row of ``CLUSTER_OPTIONS`` must be the same flag
(name, metavar, help) in every command that builds a cluster, and a bad value
must be refused with the same line whichever command was given it.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.run.cluster_options import CLUSTER_OPTIONS, ClusterOptions
from harness.run.options import OPTIONS, RunOptions, parse, read_replay
from harness.run.setup import cluster_spec

pytestmark = pytest.mark.usefixtures("engine")  # nothing here may reach Docker

BUILDERS = ["cluster up", "cluster smoke", "run", "matrix"]


def subparser(path: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = build_parser()
    for word in path.split():
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def flags(path: str) -> dict[str, argparse.Action]:
    return {s: a for a in subparser(path)._actions for s in a.option_strings}


@pytest.mark.parametrize("command", BUILDERS)
def test_every_cluster_setting_is_the_same_flag_everywhere(command: str) -> None:
    have = flags(command)
    for spec in CLUSTER_OPTIONS:
        action = have[spec.flag]
        assert (action.dest, action.help, action.metavar) == (spec.name, spec.help, spec.metavar)


@pytest.mark.parametrize("command", ["cluster status", "cluster logs", "cluster down"])
def test_the_other_cluster_actions_name_the_cluster_the_same_way(command: str) -> None:
    assert "--cluster-name" in flags(command)
    assert "--name" not in flags(command)


def test_run_options_start_with_the_cluster_table() -> None:
    assert OPTIONS[1 : 1 + len(CLUSTER_OPTIONS)] == CLUSTER_OPTIONS
    assert {f.name for f in fields(ClusterOptions)} == {s.name for s in CLUSTER_OPTIONS}
    assert issubclass(RunOptions, ClusterOptions)


def test_no_flags_mean_the_same_cluster_for_cluster_up_and_run() -> None:
    assert ClusterOptions().cluster_spec() == cluster_spec(RunOptions())
    assert ClusterOptions(nodes=1).cluster_spec().controllers == 1


BAD = [
    ("--nodes", "0"),
    ("--heap-mb", "64"),
    ("--controllers", "10"),
    ("--mode", "raft"),
    ("--kafka-version", "9.9.x"),
    ("--cluster-name", "a b"),
    ("--broker-config", "oops"),
    ("--base-image", " "),
    ("--power-loss-fs", "maybe"),
]


@pytest.mark.parametrize(("flag", "value"), BAD, ids=[f"{f}={v}" for f, v in BAD])
def test_a_bad_value_gets_the_same_line_from_every_command(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = set()
    for command in BUILDERS:
        extra = [] if command.startswith("cluster") else ["--results-dir", str(tmp_path)]
        assert main([*command.split(), f"{flag}={value}", *extra]) == 64, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        lines.add(re.sub(r"see `insync [a-z ]+ --help`", "see HELP", err))
    assert len(lines) == 1, lines
    assert flag in lines.pop()


def test_run_builds_the_cluster_cluster_up_would(tmp_path: Path) -> None:
    argv = ["--nodes", "4", "--controllers", "1", "--base-image", "debian:12",
            "--cluster-name", "c-2", "--results-dir", str(tmp_path)]  # fmt: skip
    opts = parse(argv)
    spec = cluster_spec(opts)
    assert (spec.name, spec.nodes, spec.controllers, spec.base_image) == (
        "c-2", 4, 1, "debian:12")  # fmt: skip
    recorded = tmp_path / "test.json"
    recorded.write_text(json.dumps({"argv": opts.argv()}))
    assert read_replay(recorded)["controllers"] == 1
    assert cluster_spec(parse(["--replay", str(recorded)])) == spec


def test_power_loss_fs_reaches_the_spec_and_replays(tmp_path: Path) -> None:
    opts = parse(["--power-loss-fs", "true", "--results-dir", str(tmp_path)])
    assert cluster_spec(opts).power_loss_fs
    assert not cluster_spec(parse(["--results-dir", str(tmp_path)])).power_loss_fs
    recorded = tmp_path / "test.json"
    recorded.write_text(json.dumps({"argv": opts.argv()}))
    assert cluster_spec(parse(["--replay", str(recorded)])).power_loss_fs


def test_a_config_file_spells_the_cluster_keys_as_the_flags(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('cluster-name = "from-toml"\ncontrollers = 2\nbase-image = "x:1"\n')
    opts = parse(["--config", str(config), "--results-dir", str(tmp_path)])
    assert (opts.cluster_name, opts.controllers, opts.base_image) == ("from-toml", 2, "x:1")
