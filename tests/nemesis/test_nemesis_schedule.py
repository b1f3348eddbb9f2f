"""Schedules: both formats parse to the same steps; bad steps are named; timing is exact."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.base.errors import UsageError
from harness.base.faults import all_fs
from harness.gen import nemesis, simulate
from nemesis import NemesisOptions, build_package
from nemesis.schedule import ScheduleStep, parse_schedule
from nemesis.script import schedule_gen

TOML = """
[[step]]
at = 16
f = "start-partition"
value = { isolate = "followers:t0-0" }

[[step]]
at = 10
f = "kill"
value = "leader:t0-0"

[[step]]
at = 15
f = "start"
value = "all"
"""

JSONL = """
# reproduce: kill the leader, restart it, cut its followers off
{"at": 10, "f": "kill", "value": "leader:t0-0"}
{"at": 15, "f": "start", "value": "all"}

{"at": 16, "f": "start-partition", "value": {"isolate": "followers:t0-0"}}
"""

EXPECTED = [
    ScheduleStep(10.0, "kill", "leader:t0-0"),
    ScheduleStep(15.0, "start", "all"),
    ScheduleStep(16.0, "start-partition", {"isolate": "followers:t0-0"}),
]


def test_toml_and_json_lines_give_the_same_sorted_steps() -> None:
    assert parse_schedule(TOML, toml=True, known_fs=all_fs()) == EXPECTED
    assert parse_schedule(JSONL, toml=False, known_fs=all_fs()) == EXPECTED


@pytest.mark.parametrize(("text", "toml", "match"), [
    ('{"at": 1, "f": "explode"}', False, "line 1: unknown nemesis op 'explode'"),
    ('{"at": -1, "f": "kill"}', False, "'at' must be a number"),
    ('{"at": true, "f": "kill"}', False, "'at' must be a number"),
    ('{"at": 1, "f": "kill", "when": 2}', False, "unknown keys"),
    ("\n\nnot json", False, "line 3: not JSON"),
    ("[[step]]\nat = 1\n", True, "step 1: 'f' must be"),
    ("at = [", True, "not valid TOML"),
    ("title = 'x'", True, "only \\[\\[step\\]\\]"),
], ids=["unknown-f", "negative", "bool", "extra-key", "not-json", "no-f", "bad-toml", "extra"])
def test_bad_schedules_say_which_step(text: str, toml: bool, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_schedule(text, toml=toml, known_fs=all_fs())


def test_steps_run_at_their_times_on_the_nemesis_thread() -> None:
    history = simulate(nemesis(schedule_gen(EXPECTED)), concurrency=2)
    invokes = [op for op in history if op["type"] == "invoke"]
    assert [(op["time"], op["f"], op["value"]) for op in invokes] == [
        (10_000_000_000, "kill", "leader:t0-0"),
        (15_000_000_000, "start", "all"),
        (16_000_000_000, "start-partition", {"isolate": "followers:t0-0"}),
    ]
    assert {op["process"] for op in history} == {"nemesis"}


def test_a_step_due_while_the_nemesis_is_busy_runs_when_it_is_free() -> None:
    steps = [ScheduleStep(1.0, "kill", "one"), ScheduleStep(1.5, "start", "all")]
    history = simulate(nemesis(schedule_gen(steps)), concurrency=1,
                       latency_fn=lambda op, rng: 2_000_000_000)
    invokes = [op["time"] for op in history if op["type"] == "invoke"]
    assert invokes == [1_000_000_000, 3_000_000_000]


def test_a_schedule_package_plays_the_script_and_heals_what_it_used(tmp_path: Path) -> None:
    path = tmp_path / "repro.jsonl"
    path.write_text(JSONL)
    pkg = build_package(NemesisOptions(schedule=path))
    assert pkg.nemesis is not None
    assert pkg.nemesis.fs() == frozenset({"kill", "start", "start-partition", "stop-partition",
                                          "await-recovery"})
    assert pkg.final_generator == [{"f": "stop-partition", "value": None},
                                   {"f": "start", "value": "all"},
                                   {"f": "await-recovery", "value": None}]
    history = simulate(nemesis(pkg.generator), concurrency=1)
    # a script's heals get no await-recovery of their own: the script says when things happen
    assert [op["f"] for op in history if op["type"] == "invoke"] == [
        "kill", "start", "start-partition"]
    assert not NemesisOptions(schedule=path).needs_faketime
    clock = tmp_path / "clock.toml"
    clock.write_text('[[step]]\nat = 1\nf = "bump-clock"\nvalue = {target = "n1", delta-ms = 5}\n')
    assert NemesisOptions(schedule=clock).needs_faketime


def test_a_script_may_wait_for_recovery_itself(tmp_path: Path) -> None:
    path = tmp_path / "wait.jsonl"
    path.write_text('{"at": 1, "f": "kill", "value": "n1"}\n{"at": 2, "f": "start"}\n'
                    '{"at": 2, "f": "await-recovery"}\n{"at": 3, "f": "kill", "value": "n2"}\n')
    steps = NemesisOptions(schedule=path).steps()
    assert [s.f for s in steps] == ["kill", "start", "await-recovery", "kill"]
