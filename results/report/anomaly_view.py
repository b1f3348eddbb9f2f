"""Per-anomaly panels: the sentence that explains it, the ops that prove it, an offset grid.

The grid is the picture a person draws by hand when checking an anomaly: the
key's offsets down the side, the ops that wrote or read them across the top,
and in each cell who wrote and who read which value. Conflicts are marked
where the contract defines them: an offset holding several values
(``inconsistent-offsets``), a value at several offsets (``duplicate``), and a
value written but never read (``lost-write``/``unseen``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Any

from checkers import anomaly_ops as checker_anomaly_ops
from checkers import render_verdict
from results.report.history_table import Record

MAX_ROWS = 32
MAX_COLS = 24


def _list(value: Any) -> list[Any]:
    """``value`` if it is a list, else empty: examples are free-form JSON in results.json."""
    return value if type(value) is list else []


def anomaly_ops(a: Mapping[str, Any]) -> list[int]:
    """Op indices (completions) an anomaly points at, without repeats, in field order.

    The fields are the registry's (``harness.base.contract``), read by the checker's
    own ``anomaly_ops``, so the panels name the same ops as the verdict's ``ops``.
    """
    return checker_anomaly_ops(dict(a))


def anomaly_keys(a: Mapping[str, Any]) -> list[str]:
    """Keys an anomaly is about (cycles name them per step)."""
    keys = [a["key"]] if isinstance(a.get("key"), str) else []
    keys += [s["key"] for s in _list(a.get("steps"))
             if isinstance(s, dict) and isinstance(s.get("key"), str)]
    return list(dict.fromkeys(keys))


def explain(kind: str, a: Mapping[str, Any], ops: Mapping[str, Any]) -> str:
    """The checker's own sentence for one anomaly (``checkers.render_verdict``).

    An example from a hand-edited or foreign results.json may lack a field the
    sentence needs (a ``lost-write`` without ``writer``); it is then shown as
    its raw fields, since the panel's purpose is to show what the file says.
    """
    one = {"valid": False, "anomaly-types": [kind], "bad-anomaly-types": [],
           "anomalies": {kind: [dict(a)]}, "anomaly-counts": {kind: 1}, "ops": ops}
    try:
        text = render_verdict(one, per_type=1)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        text = ""
    for line in text.splitlines():
        if line.startswith("  - "):
            return line[4:]
    return ", ".join(f"{k}={v}" for k, v in a.items())


def _focus_values(a: Mapping[str, Any]) -> set[int]:
    values: set[int] = set()
    if type(a.get("value")) is int:
        values.add(a["value"])
    for name in ("values", "skipped"):
        values.update(v for v in _list(a.get(name))[:16] if type(v) is int)
    return values


def _focus_offsets(a: Mapping[str, Any]) -> set[int]:
    offsets = {a[n] for n in ("offset", "max-read-offset") if type(a.get(n)) is int}
    offsets.update(o for o in _list(a.get("offsets")) if type(o) is int)
    return offsets


class KeyRecords:
    """One key's records indexed by offset and by value, built once for all its anomalies."""

    def __init__(self, records: Iterable[Record]) -> None:
        self.by_offset: dict[int | None, list[Record]] = {}
        self.by_value: dict[int, list[Record]] = {}
        self.read_ok: set[int] = set()
        for r in records:
            self.by_offset.setdefault(r[0], []).append(r)
            self.by_value.setdefault(r[1], []).append(r)
            if r[3] == "r" and r[4] == 0:
                self.read_ok.add(r[1])
        self.offsets = sorted(o for o in self.by_offset if o is not None)

    def offsets_of(self, value: int) -> set[int]:
        return {r[0] for r in self.by_value.get(value, ()) if r[0] is not None}

    def between(self, lo: int, hi: int) -> list[int]:
        """Offsets holding a record, lo <= offset <= hi."""
        return self.offsets[bisect.bisect_left(self.offsets, lo):
                            bisect.bisect_right(self.offsets, hi)]


def evidence_ops(a: Mapping[str, Any], key: KeyRecords | None, limit: int = 12) -> list[int]:
    """The ops an anomaly names or, when it names none (``unseen``, ``duplicate``,
    ``inconsistent-offsets``), the ops that wrote or read its values and offsets."""
    named = anomaly_ops(a)
    if named or key is None:
        return named
    found = {r[2] for v in _focus_values(a) for r in key.by_value.get(v, ())}
    found |= {r[2] for o in _focus_offsets(a) for r in key.by_offset.get(o, ())}
    return sorted(found)[:limit]


def offset_grid(a: Mapping[str, Any], key: KeyRecords) -> dict[str, Any] | None:
    """The offsets x ops grid around an anomaly on its key, or None when nothing places it.

    Columns are op indices (``ops``); the caller adds process/f/type for headers.
    """
    values = _focus_values(a)
    offsets = _focus_offsets(a).union(*(key.offsets_of(v) for v in values))
    if not offsets:
        return None
    rows = sorted(set(key.between(min(offsets) - 3, max(offsets) + 3)) | offsets)
    if len(rows) > MAX_ROWS:  # far-apart focus offsets: keep each with two neighbours
        near = {r for f in offsets for r in key.between(f - 2, f + 2)} | offsets
        rows = sorted(near)[:MAX_ROWS]
    in_view = [r for o in rows for r in key.by_offset.get(o, ())]
    in_view += [r for v in values for r in key.by_value.get(v, ()) if r[0] is None]
    priority = anomaly_ops(a) + [r[2] for r in in_view if r[1] in values]
    cols = list(dict.fromkeys(priority))
    cols += sorted({r[2] for r in in_view} - set(cols))
    shown = sorted(cols[:MAX_COLS])
    col_at = {c: i for i, c in enumerate(shown)}
    has_unplaced = any(r[0] is None for r in in_view)
    row_keys: list[int | None] = [*rows, *([None] if has_unplaced else [])]
    row_at = {o: i for i, o in enumerate(row_keys)}
    cells: list[list[list[Any]]] = [[[] for _ in shown] for _ in row_keys]
    values_at: dict[int, set[int]] = {}
    for o, v, op, kind, _t in in_view:
        if o is not None:
            values_at.setdefault(o, set()).add(v)
        if op in col_at:
            cell = cells[row_at[o]][col_at[op]]
            if [kind, v] not in cell:
                cell.append([kind, v])
    seen_values = {r[1] for r in in_view}
    return {
        "offsets": row_keys,
        "ops": shown,
        "cells": cells,
        "focus": sorted(values),
        "multi_value_offsets": sorted(o for o, vs in values_at.items() if len(vs) > 1),
        "multi_offset_values": sorted(v for v in seen_values if len(key.offsets_of(v)) > 1),
        "never_read": sorted({r[1] for r in in_view if r[3] == "w"} - key.read_ok),
        "hidden_ops": len(cols) - len(shown),
    }
