"""Per-anomaly panels: the sentence that explains it, the ops that prove it, an offset grid.

The grid is the picture a person draws by hand when checking an anomaly: the
key's offsets down the side, the ops that wrote or read them across the top,
and in each cell who wrote and who read which value. Conflicts are marked
where the contract defines them: an offset holding several values
(``inconsistent-offsets``), a value at several offsets (``duplicate``), and a
value written but never read (``lost-write``/``unseen``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from checkers import render_verdict
from results.history_table import Record

#: Fields of an anomaly that name op indices, in the order they are listed.
OP_FIELDS = ("writer", "reader", "max-read", "op")
OP_LIST_FIELDS = ("ops", "cycle")
MAX_ROWS = 32
MAX_COLS = 24


def anomaly_ops(a: Mapping[str, Any]) -> list[int]:
    """Op indices (completions) an anomaly points at, without repeats, in field order."""
    out: list[int] = []
    for name in OP_FIELDS:
        if type(a.get(name)) is int:
            out.append(a[name])
    for name in OP_LIST_FIELDS:
        out.extend(x for x in a.get(name) or () if type(x) is int)
    return list(dict.fromkeys(out))


def evidence_ops(a: Mapping[str, Any], records: Iterable[Record], limit: int = 12) -> list[int]:
    """The ops an anomaly names, or when it names none (``unseen``, ``duplicate``,
    ``inconsistent-offsets``), the ops that wrote or read its values and offsets."""
    named = anomaly_ops(a)
    if named:
        return named
    values, offsets = _focus_values(a), _focus_offsets(a)
    found = [op for o, v, op, _, _ in records if v in values or (o is not None and o in offsets)]
    return sorted(set(found))[:limit]


def anomaly_keys(a: Mapping[str, Any]) -> list[str]:
    """Keys an anomaly is about (cycles name them per step)."""
    keys = [a["key"]] if isinstance(a.get("key"), str) else []
    keys += [s["key"] for s in a.get("steps") or () if isinstance(s, dict) and "key" in s]
    return list(dict.fromkeys(keys))


def explain(kind: str, a: Mapping[str, Any], ops: Mapping[str, Any]) -> str:
    """The checker's own sentence for one anomaly (``checkers.render_verdict``)."""
    one = {"valid": False, "anomaly-types": [kind], "bad-anomaly-types": [],
           "anomalies": {kind: [dict(a)]}, "anomaly-counts": {kind: 1}, "ops": ops}
    for line in render_verdict(one, per_type=1).splitlines():
        if line.startswith("  - "):
            return line[4:]
    return ", ".join(f"{k}={v}" for k, v in a.items())


def _focus_values(a: Mapping[str, Any]) -> set[int]:
    values: set[int] = set()
    if type(a.get("value")) is int:
        values.add(a["value"])
    for name in ("values", "skipped"):
        values.update(v for v in (a.get(name) or ())[:16] if type(v) is int)
    return values


def _focus_offsets(a: Mapping[str, Any]) -> set[int]:
    offsets = {a[n] for n in ("offset", "max-read-offset") if type(a.get(n)) is int}
    offsets.update(o for o in a.get("offsets") or () if type(o) is int)
    return offsets


def offset_grid(
    a: Mapping[str, Any], records: Iterable[Record], meta: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The offsets x ops grid around an anomaly on its key, or None when nothing places it.

    ``records`` are the key's (offset, value, op, "w"/"r", outcome) records;
    ``meta`` gives process/f/type of ops by index, for column headers.
    """
    recs = list(records)
    values = _focus_values(a)
    offsets = _focus_offsets(a) | {o for o, v, *_ in recs if v in values and o is not None}
    if not offsets:
        return None
    lo, hi = min(offsets) - 3, max(offsets) + 3
    rows = sorted({o for o, *_ in recs if o is not None and lo <= o <= hi} | offsets)
    if len(rows) > MAX_ROWS:  # far-apart focus offsets: keep each with two neighbours
        near = {r for r in rows for f in offsets if abs(r - f) <= 2}
        rows = sorted(near)[:MAX_ROWS]
    row_set = set(rows)
    in_view = [r for r in recs if (r[0] in row_set) or (r[0] is None and r[1] in values)]
    refs = anomaly_ops(a)
    priority = refs + [r[2] for r in in_view if r[1] in values]
    cols = list(dict.fromkeys(priority))
    cols += sorted({r[2] for r in in_view} - set(cols))
    cols = sorted(cols[:MAX_COLS])
    col_at = {c: i for i, c in enumerate(cols)}
    has_unplaced = any(r[0] is None for r in in_view)
    row_keys: list[int | None] = [*rows, *([None] if has_unplaced else [])]
    row_at = {o: i for i, o in enumerate(row_keys)}
    cells: list[list[list[Any]]] = [[[] for _ in cols] for _ in row_keys]
    values_at: dict[int | None, set[int]] = {}
    offsets_of: dict[int, set[int]] = {}
    read_values = {v for _, v, _, kind, t in recs if kind == "r" and t == 0}
    for o, v, op, kind, _t in in_view:
        values_at.setdefault(o, set()).add(v)
        if o is not None:
            offsets_of.setdefault(v, set()).add(o)
        if op in col_at:
            cell = cells[row_at[o]][col_at[op]]
            if [kind, v] not in cell:
                cell.append([kind, v])
    return {
        "offsets": row_keys,
        "ops": [{"index": c, **dict(meta.get(c, {}))} for c in cols],
        "cells": cells,
        "focus": sorted(values),
        "multi_value_offsets": sorted(o for o, vs in values_at.items()
                                      if o is not None and len(vs) > 1),
        "multi_offset_values": sorted(v for v, os in offsets_of.items() if len(os) > 1),
        "never_read": sorted({v for _, v, _, kind, _ in in_view if kind == "w"} - read_values),
        "hidden_ops": max(0, len(set(priority) | {r[2] for r in in_view}) - len(cols)),
    }
