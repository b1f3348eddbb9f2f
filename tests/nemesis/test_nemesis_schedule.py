"""Schedules: both formats parse to the same steps; bad steps are named; timing is exact."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from harness.base.errors import UsageError
from harness.base.faults import all_fs
from harness.base.waits import CONDITIONS
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


# -- steps that wait for cluster state ------------------------------------------------

SCRIPT = """
[[step]]
f = "start-partition"
value = { isolate = "followers:t0-0" }

[[step]]
wait = "isr-is-leader"
key = "t0-0"
timeout = 30

[[step]]
after = 2
f = "kill"
value = "leader:t0-0"

[[step]]
at = 1
wait = "left-isr"
key = "t0-0"
node = "n2"
timeout = 12.5
"""


def test_wait_steps_become_await_state_ops_in_file_order() -> None:
    steps = parse_schedule(SCRIPT, toml=True, known_fs=all_fs(), source="isr.toml")
    assert steps == [
        ScheduleStep(None, "start-partition", {"isolate": "followers:t0-0"}),
        ScheduleStep(None, "await-state",
                     {"until": "isr-is-leader", "key": "t0-0", "timeout-s": 30, "step": 2}),
        ScheduleStep(None, "kill", "leader:t0-0", after=2.0),
        ScheduleStep(1.0, "await-state", {"until": "left-isr", "key": "t0-0", "node": "n2",
                                          "timeout-s": 12.5, "step": 4}),
    ], "a script with waits runs in file order, even where an 'at' is earlier"
    jsonl = "\n".join(json.dumps(s) for s in tomllib.loads(SCRIPT)["step"])
    assert parse_schedule(jsonl, toml=False, known_fs=all_fs()) == steps


def test_every_condition_parses_with_exactly_the_keys_it_needs() -> None:
    text = "\n".join([
        '{"wait": "isr-is-leader", "key": "t0-0", "timeout": 1}',
        '{"wait": "left-isr", "key": "t0-0", "node": "followers:t0-0", "timeout": 1}',
        '{"wait": "in-isr", "key": "t0-0", "node": "leader:t0-1", "timeout": 1}',
        '{"wait": "leader-changed", "key": "t0-0", "timeout": 1}',
        '{"wait": "leader-is", "key": "t0-0", "node": "controller", "timeout": 1}',
        '{"wait": "recovered", "timeout": 60}',
    ])
    steps = parse_schedule(text, toml=False, known_fs=all_fs())
    assert [s.value["until"] for s in steps] == list(CONDITIONS)
    assert all(s.waits and s.at is None and s.after == 0.0 for s in steps)


def test_a_wait_may_name_any_partition_and_the_non_controllers() -> None:
    text = "\n".join([
        '{"wait": "leader-changed", "key": "*", "timeout": 1}',
        '{"wait": "leader-is", "key": "*", "node": "non-controllers", "timeout": 1}',
    ])
    steps = parse_schedule(text, toml=False, known_fs=all_fs())
    assert [(s.value["key"], s.value.get("node")) for s in steps] == [
        ("*", None), ("*", "non-controllers")]


WAIT = 'wait = "isr-is-leader"\nkey = "t0-0"\ntimeout = 30\n'


@pytest.mark.parametrize(("body", "match"), [
    ('wait = "isr-is-leader"\nkey = "t0-0"\n',
     "s.toml step 2: wait isr-is-leader needs 'timeout' .give the seconds"),
    (WAIT.replace("30", "0"), "s.toml step 2: 'timeout' must be a number of seconds > 0, got 0"),
    (WAIT.replace("30", '"30"'), "step 2: 'timeout' must be a number of seconds > 0, got '30'"),
    (WAIT.replace("isr-is-leader", "isr-shrunk"),
     "step 2: 'wait' must be one of isr-is-leader, left-isr, in-isr, leader-changed, "
     "leader-is, recovered, got 'isr-shrunk'"),
    ('wait = "isr-is-leader"\ntimeout = 3\n',
     "step 2: wait isr-is-leader needs 'key' .give a topic-partition such as t0-0"),
    (WAIT.replace('"t0-0"', '"t0"'), "step 2: 'key' must be a topic-partition such as t0-0"),
    ('wait = "left-isr"\nkey = "t0-0"\ntimeout = 3\n',
     "step 2: wait left-isr needs 'node' .give a node name .n2., leader:KEY"),
    (WAIT + 'node = "n2"\n', "step 2: wait isr-is-leader takes no 'node' .wait isr-is-leader "
     "takes key, and a timeout"),
    ('wait = "recovered"\nkey = "t0-0"\ntimeout = 3\n',
     "step 2: wait recovered takes no 'key' .wait recovered takes neither key nor node"),
    ('wait = "leader-is"\nkey = "t0-0"\nnode = "minority"\ntimeout = 3\n',
     "step 2: 'node' must be a node name .n2., leader:KEY, followers:KEY, controller or "
     "non-controllers, got 'minority'"),
    (WAIT + "at = 1\nafter = 2\n", "step 2: 'at' and 'after' together .give one"),
    (WAIT + "after = -1\n", "step 2: 'after' must be a number of seconds >= 0, got -1"),
    (WAIT + 'f = "kill"\n', "step 2: a step has 'f' .an action. or 'wait' .a wait., not both"),
    (WAIT + "retries = 3\n", "step 2: unknown key 'retries' in a wait step"),
    ('f = "kill"\nvalue = "n1"\ntimeout = 3\n',
     "step 2: 'timeout' belongs to wait steps .give 'wait'."),
    ('value = "n1"\n', "step 2: 'f' must be a nemesis op name, got None .or give 'wait'"),
], ids=["no-timeout", "zero-timeout", "string-timeout", "unknown-condition", "no-key",
        "bad-key", "no-node", "node-not-taken", "key-not-taken", "random-node", "at-and-after",
        "negative-after", "f-and-wait", "unknown-wait-key", "timeout-on-action", "neither"])
def test_a_malformed_wait_step_is_one_line_naming_file_step_key_and_what_is_accepted(
        body: str, match: str) -> None:
    text = '[[step]]\nat = 1\nf = "kill"\nvalue = "n1"\n\n[[step]]\n' + body
    with pytest.raises(UsageError) as err:
        parse_schedule(text, toml=True, known_fs=all_fs(), source="s.toml")
    line = err.value.one_line()  # what the CLI prints: the message and its hint
    assert re.search(match, line), line
    assert "\n" not in line


def test_json_lines_name_the_step_and_the_line() -> None:
    text = ('# a comment\n{"f": "kill", "value": "n1"}\n\n'
            '{"wait": "leader-changed", "key": "t0-0"}\n')
    with pytest.raises(UsageError, match=r"s.jsonl step 2, line 4: wait leader-changed needs "
                                         r"'timeout'"):
        parse_schedule(text, toml=False, known_fs=all_fs(), source="s.jsonl")
