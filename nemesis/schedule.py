"""Fault scripts: reproduce a reported bug step by step, timed or waiting for cluster state.

``--nemesis-schedule FILE`` replaces the random fault generator by a script.
Two formats, chosen by the file name: TOML (``*.toml``), one ``[[step]]``
table per step, or JSON Lines (any other name), one object per line with the
same keys (blank lines and lines starting with ``#`` are skipped).

An **action step** runs one nemesis op: ``f`` is any nemesis op (see
``harness.base.faults.all_fs``, plus ``await-recovery``) and ``value`` what it
takes (a target, a shape, or an object), optional::

    [[step]]
    f = "start-partition"
    value = { isolate = "followers:t0-0" }

A **wait step** waits for the cluster's state, as the nemesis op
``await-state`` (``nemesis.waits``, ``harness.base.waits``)::

    [[step]]
    wait = "isr-is-leader"   # the condition
    key = "t0-0"             # the topic-partition it is about
    timeout = 30             # seconds; required

    [[step]]
    after = 2                # then, 2 s after the wait held:
    f = "kill"
    value = "leader:t0-0"

Conditions (``NODE`` is ``node = <target>``: a node name, ``leader:KEY``,
``followers:KEY`` or ``controller``, resolved when the wait starts; a target
naming several nodes means all of them for ``left-isr``/``in-isr``, any of
them for ``leader-is``):

* ``isr-is-leader``: the ISR of KEY is exactly {its leader};
* ``left-isr`` / ``in-isr``: NODE is not in / is back in the ISR of KEY;
* ``leader-changed``: KEY's leader differs from the leader the script last
  acted on through ``leader:KEY`` (if it never did, from the leader when the
  wait began);
* ``leader-is``: KEY's leader is NODE;
* ``recovered``: what ``await-recovery`` waits for (no key, no node).

When a step runs: ``at = S`` is S seconds after the main phase starts;
``after = S`` is S seconds after the previous step completed (a wait
completes when its condition holds); neither means ``after = 0``,
immediately; not both. Steps run one at a time, in file order, except that a
script of timed action steps only (every step has ``at``, none waits) runs in
``at`` order, ties in file order, as before waits existed. A step whose time
has come while the nemesis is still busy runs as soon as it is free; its
history op shows when it really ran.

A wait that does not hold within its timeout stops the script: no later step
runs (the final generator still heals everything), and the run's verdict is
``valid: "unknown"``, naming the step (``step 3: wait isr-is-leader t0-0 did
not hold within 30 s``). Steps are numbered from 1 in file order.

Every malformed step is refused before the run in one line naming the file,
the step, the key and what is accepted (``UsageError``).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.errors import UsageError
from harness.base.waits import AWAIT_STATE, CONDITIONS

ACTION_KEYS = frozenset({"at", "after", "f", "value"})
WAIT_KEYS = frozenset({"at", "after", "wait", "key", "node", "timeout"})
#: A topic-partition (``t0-0``), or ``*``: any workload partition (``nemesis.waits``).
KEY = re.compile(r"^([A-Za-z0-9._-]+-[0-9]+|\*)$")
#: A node a wait may name: a node name, or one target resolved from metadata.
NODE = re.compile(
    r"^(n[0-9]+|controller|non-controllers|(leader|followers):[A-Za-z0-9._-]+-[0-9]+)$")
#: The longest time a step may name (a year): anything longer is a typo, not a plan.
MAX_SECONDS = 365 * 86400
STEP_FORMS = ("an action step has f, value and at or after; "
              "a wait step has wait, key, node, timeout and at or after")


@dataclass(frozen=True)
class ScheduleStep:
    """One step: op ``f`` with ``value``, at ``at`` s into the main phase, or ``after`` s
    after the previous step completed (``at`` None). A wait step's ``f`` is ``await-state``."""

    at: float | None
    f: str
    value: Any = None
    after: float = 0.0

    @property
    def waits(self) -> bool:
        return self.f == AWAIT_STATE


def _seconds(raw: Mapping[str, Any], name: str, where: str, *, positive: bool = False
             ) -> float | None:
    """``raw[name]`` as seconds (None if absent); ``UsageError`` for anything else: NaN,
    infinities (``1e400`` reads as one) and times beyond any run are refused here."""
    if name not in raw:
        return None
    x = raw[name]
    if (isinstance(x, bool) or not isinstance(x, int | float)
            or not 0 <= x <= MAX_SECONDS or (positive and x == 0)):
        bound = "> 0" if positive else ">= 0"
        raise UsageError(f"{where}: '{name}' must be a number of seconds {bound}, got {x!r}")
    return float(x)


def _when(raw: Mapping[str, Any], where: str) -> tuple[float | None, float]:
    at, after = _seconds(raw, "at", where), _seconds(raw, "after", where)
    if at is not None and after is not None:
        raise UsageError(f"{where}: 'at' and 'after' together",
                         hint="give one: at = seconds from the main phase's start, "
                              "after = seconds after the previous step completed")
    return at, after or 0.0


def _wait(raw: Mapping[str, Any], where: str, number: int) -> ScheduleStep:
    extra = sorted(set(raw) - WAIT_KEYS)
    if extra:
        raise UsageError(f"{where}: unknown key {extra[0]!r} in a wait step", hint=STEP_FORMS)
    until = raw["wait"]
    if not isinstance(until, str) or until not in CONDITIONS:
        raise UsageError(f"{where}: 'wait' must be one of {', '.join(CONDITIONS)}, got {until!r}")
    needs_key, needs_node = CONDITIONS[until]
    value: dict[str, Any] = {"until": until}
    for name, needed, pattern, form in (
        ("key", needs_key, KEY, "a topic-partition such as t0-0, or * for any"),
        ("node", needs_node, NODE,
         "a node name (n2), leader:KEY, followers:KEY, controller or non-controllers"),
    ):
        x = raw.get(name)
        if x is None and needed:
            raise UsageError(f"{where}: wait {until} needs '{name}'", hint=f"give {form}")
        if x is not None and not needed:
            takes = [n for n, on in zip(("key", "node"), CONDITIONS[until], strict=True) if on]
            what = " and ".join(takes) or "neither key nor node"
            raise UsageError(f"{where}: wait {until} takes no '{name}'",
                             hint=f"wait {until} takes {what}, and a timeout")
        if x is not None and (not isinstance(x, str) or not pattern.match(x)):
            raise UsageError(f"{where}: '{name}' must be {form}, got {x!r}")
        if x is not None:
            value[name] = x
    timeout = _seconds(raw, "timeout", where, positive=True)
    if timeout is None:
        raise UsageError(f"{where}: wait {until} needs 'timeout'",
                         hint="give the seconds it may wait, e.g. timeout = 30")
    value["timeout-s"] = int(timeout) if timeout.is_integer() else timeout
    value["step"] = number
    at, after = _when(raw, where)
    return ScheduleStep(at, AWAIT_STATE, value, after)


def _step(raw: Any, where: str, number: int, known_fs: Iterable[str] | None) -> ScheduleStep:
    if not isinstance(raw, Mapping):
        raise UsageError(f"{where}: a step must be a table/object", hint=STEP_FORMS)
    if "wait" in raw:
        if "f" in raw or "value" in raw:
            raise UsageError(f"{where}: a step has 'f' (an action) or 'wait' (a wait), not both",
                             hint=STEP_FORMS)
        return _wait(raw, where, number)
    extra = sorted(set(raw) - ACTION_KEYS)
    if extra:
        wait_key = next((k for k in extra if k in WAIT_KEYS), None)
        if wait_key is not None:
            raise UsageError(f"{where}: '{wait_key}' belongs to wait steps (give 'wait')",
                             hint=STEP_FORMS)
        raise UsageError(f"{where}: unknown keys {extra}", hint=STEP_FORMS)
    f = raw.get("f")
    if not isinstance(f, str):
        raise UsageError(f"{where}: 'f' must be a nemesis op name, got {f!r}",
                         hint="or give 'wait' for a wait step")
    if known_fs is not None and f not in set(known_fs):
        raise UsageError(f"{where}: unknown nemesis op {f!r}",
                         hint=f"ops are {', '.join(sorted(known_fs))}")
    at, after = _when(raw, where)
    problem = _not_plain(raw.get("value"))
    if problem:
        raise UsageError(f"{where}: 'value' holds {problem}",
                         hint="a value is text, a whole or finite number, true/false, "
                              "or a list or table of those")
    return ScheduleStep(at, f, raw.get("value"), after)


def _not_plain(x: Any) -> str | None:
    """What in a step's value the history (JSON) cannot hold, or that no fault can mean:
    a TOML date or time, NaN or an infinity (``1e400`` reads as one); None if nothing."""
    if x is None or isinstance(x, str | bool | int):
        return None
    if isinstance(x, float):
        return None if math.isfinite(x) else f"{x!r}, not a finite number"
    if isinstance(x, list):
        return next((p for p in map(_not_plain, x) if p), None)
    if isinstance(x, Mapping):
        return next((p for p in map(_not_plain, x.values()) if p), None)
    return f"{x!r}, which is no value a fault takes"


def in_run_order(steps: list[ScheduleStep]) -> list[ScheduleStep]:
    """File order; a script of timed action steps only keeps its old meaning: ``at`` order."""
    if all(s.at is not None and not s.waits for s in steps):
        return sorted(steps, key=lambda s: s.at or 0.0)
    return steps


def parse_schedule(
    text: str, *, toml: bool, known_fs: Iterable[str] | None = None, source: str = "schedule"
) -> list[ScheduleStep]:
    """The steps of a script, in the order they run; ``UsageError`` naming the bad step."""
    steps: list[ScheduleStep] = []
    if toml:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise UsageError(f"{source}: not valid TOML: {err}") from err
        raw_steps = data.get("step", [])
        if set(data) - {"step"} or not isinstance(raw_steps, list):
            raise UsageError(f"{source}: expected only [[step]] tables")
        steps = [_step(s, f"{source} step {i + 1}", i + 1, known_fs)
                 for i, s in enumerate(raw_steps)]
    else:
        # split on newlines only: str.splitlines also breaks at U+2028 and other separators
        # a JSON string may hold, cutting a valid line in two
        for no, line in enumerate(text.split("\n"), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as err:
                raise UsageError(f"{source} line {no}: not JSON: {err.msg}") from err
            number = len(steps) + 1
            steps.append(_step(raw, f"{source} step {number}, line {no}", number, known_fs))
    return in_run_order(steps)


def load_schedule(path: Path, known_fs: Iterable[str] | None = None) -> list[ScheduleStep]:
    from harness.base.userfile import read_user_text

    text = read_user_text(path, f"the nemesis schedule {path}")
    return parse_schedule(text, toml=path.suffix == ".toml", known_fs=known_fs, source=str(path))
