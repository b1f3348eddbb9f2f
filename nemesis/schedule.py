"""Explicit, timed nemesis scripts: reproduce a reported bug step by step.

``--nemesis-schedule FILE`` replaces the random fault generator by a script.
Two formats, chosen by the file name:

TOML (``*.toml``), one ``[[step]]`` table per fault::

    [[step]]
    at = 10            # seconds after the run's main phase starts
    f = "kill"
    value = "leader:t0-0"

    [[step]]
    at = 15
    f = "start"
    value = "all"

    [[step]]
    at = 16
    f = "start-partition"
    value = { isolate = "followers:t0-0" }

JSON Lines (any other name): one object per line, the same keys,
e.g. ``{"at": 10, "f": "kill", "value": "leader:t0-0"}``; blank lines and lines
starting with ``#`` are skipped.

``f`` is any nemesis op (see ``harness.base.faults.all_fs``); ``value`` is what that
op takes (a target, a shape, or an object), optional. Steps run in ``at`` order
(ties keep file order); a step whose time has come while the nemesis is still
busy runs as soon as it is free, and its history op shows when it really ran.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.errors import UsageError
from harness.gen.combinators import ns
from harness.gen.core import Context, Gen, Pending, Step, fill_in


@dataclass(frozen=True)
class ScheduleStep:
    """One scripted fault: op ``f`` with ``value`` at ``at`` seconds into the run."""

    at: float
    f: str
    value: Any = None


def _step(raw: Any, where: str, known_fs: Iterable[str] | None) -> ScheduleStep:
    if not isinstance(raw, Mapping):
        raise UsageError(f"{where}: a step must be a table/object with at, f and value")
    extra = sorted(set(raw) - {"at", "f", "value"})
    if extra:
        raise UsageError(f"{where}: unknown keys {extra}", hint="a step has at, f and value")
    at, f = raw.get("at"), raw.get("f")
    if isinstance(at, bool) or not isinstance(at, int | float) or at < 0:
        raise UsageError(f"{where}: 'at' must be a number of seconds >= 0, got {at!r}")
    if not isinstance(f, str):
        raise UsageError(f"{where}: 'f' must be a nemesis op name, got {f!r}")
    if known_fs is not None and f not in set(known_fs):
        raise UsageError(f"{where}: unknown nemesis op {f!r}",
                         hint=f"ops are {', '.join(sorted(known_fs))}")
    return ScheduleStep(float(at), f, raw.get("value"))


def parse_schedule(
    text: str, *, toml: bool, known_fs: Iterable[str] | None = None, source: str = "schedule"
) -> list[ScheduleStep]:
    """The steps of a schedule, sorted by time; ``UsageError`` naming the bad step."""
    steps: list[ScheduleStep] = []
    if toml:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise UsageError(f"{source}: not valid TOML: {err}") from err
        raw_steps = data.get("step", [])
        if set(data) - {"step"} or not isinstance(raw_steps, list):
            raise UsageError(f"{source}: expected only [[step]] tables")
        steps = [_step(s, f"{source} step {i + 1}", known_fs) for i, s in enumerate(raw_steps)]
    else:
        for no, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as err:
                raise UsageError(f"{source} line {no}: not JSON: {err.msg}") from err
            steps.append(_step(raw, f"{source} line {no}", known_fs))
    return sorted(steps, key=lambda s: s.at)


def load_schedule(path: Path, known_fs: Iterable[str] | None = None) -> list[ScheduleStep]:
    try:
        text = path.read_text()
    except OSError as err:
        raise UsageError(f"cannot read the nemesis schedule {path}: {err.strerror}") from err
    return parse_schedule(text, toml=path.suffix == ".toml", known_fs=known_fs, source=str(path))


@dataclass(frozen=True, slots=True)
class Timed(Gen):
    """Ops at fixed offsets (ns) from the moment this generator is first asked."""

    steps: tuple[tuple[int, Mapping[str, Any]], ...]
    start: int | None = None

    def op(self, ctx: Context) -> Step:
        if not self.steps:
            return None
        start = ctx.time if self.start is None else self.start
        at, template = self.steps[0]
        if ctx.time < start + at:
            return Pending(start + at), Timed(self.steps, start)
        op = fill_in(template, ctx)
        if isinstance(op, Pending):
            return op, Timed(self.steps, start)
        return op, Timed(self.steps[1:], start)


def schedule_gen(steps: Sequence[ScheduleStep]) -> Gen:
    """The generator that plays ``steps`` (run it on the nemesis thread)."""
    return Timed(tuple((ns(s.at), {"f": s.f, "value": s.value}) for s in steps))
