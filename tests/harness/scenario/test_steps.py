"""``harness.scenario.steps``: every step goes through the one schedule parser,
wait steps and power loss included."""

from __future__ import annotations

import pytest

from harness.base.errors import UsageError
from harness.base.waits import AWAIT_STATE
from harness.scenario.steps import check_steps


def test_known_steps_are_parsed_by_the_schedule_parser() -> None:
    parsed = check_steps([{"at": 5, "f": "kill", "value": "n1"},
                          {"at": 1, "f": "await-recovery"}], "f.toml:")
    assert [(p.at, p.f) for p in parsed] == [(5.0, "kill"), (1.0, "await-recovery")]


@pytest.mark.parametrize(
    ("step", "needle"),
    [({"at": 1, "f": "explode"}, "f.toml: [[step]] 1: unknown nemesis op 'explode'"),
     ({"at": "soon", "f": "kill"}, "f.toml: [[step]] 1: 'at' must be a number"),
     ({"at": 1, "f": "kill", "why": "x"}, "f.toml: [[step]] 1: unknown keys ['why']")],
    ids=["unknown-op", "bad-at", "unknown-key"],
)
def test_a_bad_step_is_the_parsers_refusal_naming_the_step(step: dict[str, object],
                                                           needle: str) -> None:
    with pytest.raises(UsageError) as err:
        check_steps([step], "f.toml:")
    line = err.value.one_line()
    assert needle in line and "line 1" not in line and err.value.hint


def test_wait_and_after_steps_are_parsed_with_the_rest() -> None:
    parsed = check_steps([{"at": 1, "f": "kill", "value": "n1"},
                          {"wait": "isr-is-leader", "key": "t0-0", "timeout": 9},
                          {"after": 2, "f": "power-loss", "value": "leader:t0-0"}], "f:")
    assert [(p.at, p.f, p.after) for p in parsed] == [
        (1.0, "kill", 0.0), (None, AWAIT_STATE, 0.0), (None, "power-loss", 2.0)]
    with pytest.raises(UsageError, match=r"f: \[\[step\]\] 2"):  # a bad wait names its step
        check_steps([{"at": 1, "f": "kill"}, {"wait": "isr-is-leader", "key": "t0-0"}], "f:")
