"""Fault values no fault can mean: refused in one line, exit 64, before anything happens.

Each fault kind judges its own ops' values (``validate`` in ``nemesis/kinds/*.py``);
these cases go through the real command line with the fake engine of
``tests/support/fake_engine.py`` (nothing may be called or created), from a fault
script (``--nemesis-schedule``) and from a scenario file (``scenario show``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import Engine
from scenario_text import MINIMAL
from test_bad_input import refused, with_results

from harness.cli import main

#: (a step's ``f``, its value as JSON, what the one line says)
CASES = [
    ("kill", '"n9"', "node 'n9' is not among the run's 3 nodes (n1 to n3)"),
    ("pause", '["n1", "n4"]', "node 'n4' is not among the run's 3 nodes"),
    ("kill", '"leaders:0"', "bad target 'leaders:0': the count after leaders: must be >= 1"),
    ("kill", '"somewhere"', "unknown target 'somewhere'"),
    ("start-partition", '{"isolate": "nowhere"}', "unknown target 'nowhere'"),
    ("start-partition", '{"components": [["n1"], ["n2", "n7"]]}', "node 'n7' is not among"),
    ("start-partition", '{"grudge": {"n1": ["x"]}}', "'x' is not a node name"),
    ("start-partition", '"sideways"', "unknown partition shape 'sideways'"),
    ("start-packet", '{"loss": 2.0}', "'loss' must be a finite number from 0 to 1, got 2.0"),
    ("start-packet", '{"loss": -0.1}', "'loss' must be a finite number from 0 to 1"),
    ("start-packet", '{"loss": NaN}', "'value' holds nan, not a finite number"),
    ("start-packet", '{"rate-kbit": 0}', "'rate-kbit' must be a finite number in (0,"),
    ("start-packet", '{"delay-ms": -5}', "'delay-ms' must be a finite number from 0"),
    ("start-packet", '{"target": "n5", "loss": 0.1}', "node 'n5' is not among"),
    ("start-packet", '{"los": 0.1}', "unknown packet fields ['los']"),
    ("bump-clock", '{"delta-ms": 1e15}', "'delta-ms' must be a finite number from"),
    ("bump-clock", '{"target": "n0", "delta-ms": 1000}', "unknown target 'n0'"),
    ("strobe-clock", '{"delta-ms": 100, "period-ms": 0}', "'period-ms' must be"),
    ("strobe-clock", '{"duration-s": -1}', "'duration-s' must be a finite number in (0,"),
    ("start-disk", '{"kind": "slow", "ms": -1}', "slow disk: ms >= 0"),
    ("start-disk", '{"kind": "full", "bytes": -1}', "full disk: bytes >= 0"),
    ("start-disk", '{"kind": "corrupt", "probability": 1.5}', "0 < probability <= 1"),
    ("start-disk", '{"kind": "melted"}', "disk fault kind 'melted' is not one of"),
    ("start-disk", '{"target": "n9", "kind": "error"}', "node 'n9' is not among"),
    ("power-loss", '"n4"', "node 'n4' is not among"),
]
IDS = [f"{f}-{value}" for f, value, _ in CASES]


@pytest.mark.parametrize(("f", "value", "needle"), CASES, ids=IDS)
def test_a_fault_script_value_no_fault_can_mean_is_refused(
    engine: Engine, f: str, value: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script = engine.tmp / "s.jsonl"
    script.write_text(f'{{"at": 1, "f": "{f}", "value": {value}}}\n')
    line = refused(engine, with_results(engine, ["run", "--nodes", "3", "--nemesis-schedule",
                                                 str(script)]), capsys)
    assert "s.jsonl step 1, line 1: " in line and needle in line, line


def test_a_node_of_a_bigger_cluster_is_accepted_there(
    engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """The count is the run's: n5 is refused on 3 nodes and reaches the engine on 5."""
    script = engine.tmp / "s.jsonl"
    script.write_text('{"at": 1, "f": "kill", "value": "n5"}\n')
    argv = with_results(engine, ["run", "--nodes", "5", "--teardown", "--time-limit", "1",
                                 "--nemesis-schedule", str(script)])
    main(argv)
    err = capsys.readouterr().err
    assert "n5" not in err, err
    assert engine.calls(), "a valid script must get as far as the (fake) engine"


@pytest.mark.parametrize(("step", "needle"), [
    ('f = "kill"\nvalue = "n9"', "node 'n9' is not among the run's 3 nodes"),
    ('f = "start-partition"\nvalue = { isolate = "nowhere" }', "unknown target 'nowhere'"),
    ('f = "start-packet"\nvalue = { target = "one", loss = 2.0 }',
     "'loss' must be a finite number from 0 to 1, got 2.0"),
    ('f = "kill"\nvalue = "leaders:0"', "the count after leaders: must be >= 1"),
], ids=["n9", "isolate-nowhere", "loss-2", "leaders-0"])
def test_scenario_show_refuses_a_bad_value(
    tmp_path: Path, step: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MINIMAL.replace('min-insync = 1\n', 'min-insync = 1\nnodes = 3\n', 1)
    text = text.replace('f = "kill"\nvalue = "leader:t0-0"', step, 1)
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    assert main(["scenario", "show", "tiny", "--scenario-file", str(path)]) == 64
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""
    assert f"scenario file {path}: [[step]] 1" in err and needle in err, err


def test_a_scenario_without_a_node_count_still_refuses_what_names_no_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``nodes`` the count is the command's: n9 waits for it, ``nowhere`` does not."""
    path = tmp_path / "tiny.toml"
    path.write_text(MINIMAL.replace('value = "leader:t0-0"', 'value = "n9"', 1))
    assert main(["scenario", "show", "tiny", "--scenario-file", str(path)]) == 0
    capsys.readouterr()
    path.write_text(MINIMAL.replace('value = "leader:t0-0"', 'value = "nowhere"', 1))
    assert main(["scenario", "show", "tiny", "--scenario-file", str(path)]) == 64
    assert "unknown target 'nowhere'" in capsys.readouterr().err
