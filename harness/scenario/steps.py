"""A scenario's fault script, checked by the one schedule parser (``nemesis.schedule``).

A scenario's ``[[step]]`` tables are ``--nemesis-schedule`` steps, so the
parser that reads schedules is the one that judges them: a step it refuses
is refused here with its message, prefixed by the scenario file and the
step's number. No second list of ops or keys lives here.

The scenario vocabulary adds *wait steps* (``wait = "isr-is-leader"``, ``key``,
``node``, ``timeout``) and ``after = S`` to the schedule format; the parser
learns them on another branch. Until it does, :data:`WAIT_STEPS_PARSED` is
False: steps that use only the keys the parser knows are parsed in full, and
a step using the new keys is kept as written, unchecked
(``Scenario.parsed`` is None and ``insync scenario show`` says so); so is
a step naming an op of :data:`NEW_OPS` the fault registry lacks yet. The
probe below asks the parser itself, so once it knows wait steps every step
of every scenario goes through it with no change here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.base.errors import UsageError
from harness.base.faults import all_fs
from nemesis.recovery import AWAIT
from nemesis.schedule import ScheduleStep, parse_schedule

#: The keys the scenario vocabulary adds to a schedule step (agreed across the
#: scenario work; the parser is their judge once it knows them).
WAIT_KEYS = frozenset({"after", "wait", "key", "node", "timeout"})
STEP_HINT = ("a step is at|after = S, f = OP, value = ...; or wait = COND, key, timeout "
             "(harness/scenario/catalogue/README.md)")
#: Ops the scenario vocabulary adds (a fault kind on another branch): a step naming
#: one waits, unchecked, until the registry (``harness.base.faults``) has it.
NEW_OPS = frozenset({"power-loss"})
#: A step of each new kind, as the agreed vocabulary spells it.
_PROBE = (
    {"wait": "isr-is-leader", "key": "t0-0", "timeout": 30},
    {"after": 1, "f": "kill", "value": "leader:t0-0"},
)


def known_fs() -> frozenset[str]:
    """The ops a script may name: every fault kind's, and waiting for recovery
    (as ``nemesis.settings.NemesisOptions.steps`` allows in a schedule)."""
    return all_fs() | {AWAIT}


def _parse_one(step: Mapping[str, Any], where: str) -> ScheduleStep:
    """One step through the schedule parser, as a one-line JSON schedule."""
    try:
        (parsed,) = parse_schedule(json.dumps(dict(step)), toml=False,
                                   known_fs=known_fs(), source=where)
    except UsageError as err:
        # The parser says "<source> step 1, line 1: ..."; a step has no line of its own here.
        message = err.message.replace(f"{where} step 1, line 1", where, 1)
        raise UsageError(message, hint=err.hint or STEP_HINT) from None
    return parsed


def _parser_knows_wait_steps() -> bool:
    try:
        for step in _PROBE:
            _parse_one(step, "probe")
    except UsageError:
        return False
    return True


#: Whether ``nemesis.schedule`` reads wait steps and ``after`` yet (see the module doc).
WAIT_STEPS_PARSED = _parser_knows_wait_steps()


def check_steps(
    raw: Sequence[Mapping[str, Any]], where: str
) -> tuple[ScheduleStep, ...] | None:
    """Every step through the parser (``UsageError`` naming ``where`` and the step);
    None when some step waits for the parser to learn wait steps."""
    parsed: list[ScheduleStep] = []
    pending = False
    for i, step in enumerate(raw, 1):
        if (not WAIT_STEPS_PARSED and WAIT_KEYS & set(step)) or (
                step.get("f") in NEW_OPS - known_fs()):
            pending = True
            continue
        parsed.append(_parse_one(step, f"{where} [[step]] {i}"))
    return None if pending else tuple(parsed)
