"""``harness.scenario.steps``: steps go through the one schedule parser, and only the new
vocabulary waits for it."""

from __future__ import annotations

import pytest

from harness.base.errors import UsageError
from harness.scenario import steps
from harness.scenario.steps import WAIT_STEPS_PARSED, check_steps


def test_known_steps_are_parsed_by_the_schedule_parser() -> None:
    parsed = check_steps([{"at": 5, "f": "kill", "value": "n1"},
                          {"at": 1, "f": "await-recovery"}], "f.toml:")
    assert parsed is not None
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


@pytest.mark.skipif(WAIT_STEPS_PARSED, reason="the parser reads wait steps: nothing is pending")
def test_wait_steps_are_pending_until_the_parser_reads_them() -> None:
    assert check_steps([{"at": 1, "f": "kill", "value": "n1"},
                        {"wait": "isr-is-leader", "key": "t0-0", "timeout": 9}], "f:") is None
    with pytest.raises(UsageError):  # a plain step is still checked beside a pending one
        check_steps([{"at": 1, "f": "explode"}, {"after": 1, "f": "kill"}], "f:")


def test_the_probe_asks_the_parser_itself() -> None:
    assert steps.WAIT_STEPS_PARSED is steps._parser_knows_wait_steps()
