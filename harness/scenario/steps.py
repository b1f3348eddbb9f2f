"""A scenario's fault script, checked by the one schedule parser (``nemesis.schedule``).

A scenario's ``[[step]]`` tables are ``--nemesis-schedule`` steps (``at``/``after``
steps naming an op, and ``wait`` steps naming a cluster state), so the parser
that reads schedules is the one that judges them: a step it refuses is refused
here with its message, prefixed by the scenario file and the step's number.
No second list of ops or keys lives here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.base.errors import UsageError
from harness.base.faults import all_fs
from nemesis.recovery import AWAIT
from nemesis.schedule import ScheduleStep, parse_schedule

STEP_HINT = ("a step is at|after = S, f = OP, value = ...; or wait = COND, key, timeout "
             "(harness/scenario/catalogue/README.md)")


def known_fs() -> frozenset[str]:
    """The ops a script may name: every fault kind's, and waiting for recovery
    (as ``nemesis.settings.NemesisOptions.steps`` allows in a schedule)."""
    return all_fs() | {AWAIT}


def _parse_one(step: Mapping[str, Any], where: str) -> ScheduleStep:
    """One step through the schedule parser, as a one-line JSON schedule."""
    try:
        text = json.dumps(dict(step))
    except (TypeError, ValueError):  # a TOML date or time: JSON, and so a history, has none
        bad = next((k for k, v in step.items() if not _encodable(v)), "?")
        raise UsageError(f"{where}: {bad!r} holds a TOML date or time", hint=STEP_HINT) from None
    try:
        (parsed,) = parse_schedule(text, toml=False,
                                   known_fs=known_fs(), source=where)
    except UsageError as err:
        # The parser says "<source> step 1, line 1: ..."; a step has no line of its own here.
        message = err.message.replace(f"{where} step 1, line 1", where, 1)
        raise UsageError(message, hint=err.hint or STEP_HINT) from None
    return parsed


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def check_steps(raw: Sequence[Mapping[str, Any]], where: str) -> tuple[ScheduleStep, ...]:
    """Every step through the parser (``UsageError`` naming ``where`` and the step)."""
    return tuple(_parse_one(step, f"{where} [[step]] {i}") for i, step in enumerate(raw, 1))
