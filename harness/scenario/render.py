"""The words of ``insync scenario list`` and ``insync scenario show``.

Plain text for a terminal: the list is one row per scenario (which bug, where
it shows, where it was fixed); ``show`` is everything a reader needs to judge
a scenario before running it: story, sources, settings, the fault script and
the expected outcome per version, for the scenario and each variant.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from harness.scenario.model import Expectation, Scenario
from harness.scenario.ranges import spans

WIDTH = 100


def list_table(catalogue: Mapping[str, Scenario]) -> str:
    """``name  bug  affected  fixed``, one row per scenario, by name."""
    rows = [("name", "bug", "affected", "fixed")]
    for name in sorted(catalogue):
        s = catalogue[name]
        rows.append((name, s.bug, spans(s.affected()), spans(s.fixed())))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(
        "  ".join([*(cell.ljust(w) for cell, w in zip(r[:3], widths, strict=True)), r[3]])
        .rstrip() for r in rows)


def _setting(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return ",".join(value) if isinstance(value, list) else str(value)


def _settings(settings: Mapping[str, Any], broker: Mapping[str, str]) -> list[str]:
    out = [f"  --{k.replace('_', '-')} {_setting(v)}" for k, v in settings.items()]
    return out + [f"  {k} = {v}" for k, v in broker.items()]


def _expect(expect: tuple[Expectation, ...]) -> list[str]:
    return [f"  {e.versions!s:<16} {e.describe()}" for e in expect]


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="  ", subsequent_indent="  ")


def show(s: Scenario) -> str:
    """Everything one scenario says, for a reader."""
    lines = [f"{s.name}: {s.bug}", "", *_wrap(s.story), "", "sources:"]
    lines += [f"  {url}" for url in s.sources]
    covered = ", ".join(f"{v.line} ({s.mode_for(v)})" for v in s.covered())
    lines += ["", f"versions: {s.versions} in {', '.join(s.modes)} mode: {covered}"]
    lines += ["", "settings (insync run flags; then server.properties):"]
    lines += _settings(s.settings, s.broker) or ["  (insync run's defaults)"]
    lines += ["", "fault script:"]
    lines += [f"  {i:>2}. {json.dumps(dict(step), sort_keys=False)}"
              for i, step in enumerate(s.steps, 1)]
    lines += ["", "expected:", *_expect(s.expect)]
    for v in s.variants:
        lines += ["", f"variant {v.name} (versions {v.versions}):"]
        lines += _wrap(v.story) if v.story else []
        lines += _settings(v.settings, v.broker)
        lines += ["  expected:", *("  " + e for e in _expect(v.expect))]
    if s.path is not None:
        lines += ["", f"file: {s.path}"]
    return "\n".join(lines)
