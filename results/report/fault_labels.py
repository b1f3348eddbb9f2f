"""Short labels for fault bands: what was done to which nodes, in the words of a run's log.

A band's label is read at a glance on a plot strip a few hundred pixels wide, so it
names the kind and the nodes (``partition n2 | n1,n3``, ``kill n1``, ``pause n2
(leader of t0-3)``); the op's full value, the JSON the nemesis recorded, goes with
it for the reader who clicks (``report.js``). The label is derived from the
completion's value as the nemesis kinds write it (``nemesis/process.py``,
``nemesis/shapes.py``, ``nemesis/clock.py``, ``nemesis/packet.py``); a value of a
shape this module does not know falls back to compact JSON, cut to 60 characters,
so no fault is ever unlabelled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Keys under which a process-style fault records the nodes it acted on
#: (node -> pid), per kind of act.
_ACTED = ("killed", "paused", "lost", "started", "resumed")

#: Symbolic targets that say *why* these nodes, worth showing next to their names.
_ROLES = {"leaders": "leaders", "primaries": "leaders", "controller": "controller",
          "non-controllers": "non-controllers"}

MAX_FALLBACK = 60
#: A node's name as clusters name them (``n1``, ``n2``, ...).
_NODE = re.compile(r"n[0-9]+")


def compact(value: Any) -> str:
    """``value`` as one line of JSON (what a band's details show in full)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _nodes(names: Iterable[Any]) -> str:
    return ",".join(sorted(str(n) for n in names)) or "none"


def _role(target: Any) -> str | None:
    """The role a symbolic target names (``leader of t0-3``), or None for plain ones."""
    if not isinstance(target, str):
        return None
    base, _, arg = target.partition(":")
    if base == "leader" and arg:
        return f"leader of {arg}"
    if base == "followers" and arg:
        return f"followers of {arg}"
    return _ROLES.get(base)


def _components(grudge: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Groups of nodes that still hear each other both ways (a grudge: node -> nodes it drops)."""
    nodes = sorted({n for n in grudge} | {m for ms in grudge.values() for m in ms})
    drops = {n: set(grudge.get(n, ())) for n in nodes}
    groups: list[list[str]] = []
    for n in nodes:
        for group in groups:
            if all(n not in drops[m] and m not in drops[n] for m in group):
                group.append(n)
                break
        else:
            groups.append([n])
    return groups


def _partition(value: Mapping[str, Any]) -> str | None:
    shape = str(value.get("shape", ""))
    if value.get("withheld"):
        return f"withheld ({shape})" if shape else "withheld"
    isolated = value.get("isolated")
    if isinstance(isolated, list) and all(isinstance(c, list) for c in isolated):
        return " | ".join(_nodes(c) for c in isolated)
    grudge = value.get("grudge")
    if isinstance(grudge, Mapping):
        groups = sorted(_components(grudge), key=lambda g: (len(g), g))
        drops = {n: set(ms) for n, ms in grudge.items()}
        apart = all(b in drops.get(a, ()) or a in drops.get(b, ())
                    for i, ga in enumerate(groups) for gb in groups[i + 1:]
                    for a in ga for b in gb)
        if len(groups) > 1 and apart:  # groups that hear nothing of each other
            one_way = any(n not in drops.get(m, ()) for n, ms in drops.items() for m in ms)
            return " | ".join(_nodes(g) for g in groups) + (" (one-way)" if one_way else "")
        cuts = "; ".join(f"{n} drops {_nodes(ms)}" for n, ms in sorted(drops.items()) if ms)
        return f"{shape} ({cuts})" if shape else cuts
    return None


def _acted(value: Mapping[str, Any]) -> str | None:
    for key in _ACTED:
        acted = value.get(key)
        if isinstance(acted, Mapping | list):
            return _nodes(acted)
    nodes = value.get("nodes")
    if isinstance(nodes, list):
        return _nodes([str(n) for n in nodes])
    offsets = value.get("offsets-ms")
    if isinstance(offsets, Mapping):
        return _nodes(offsets)
    if value and all(isinstance(k, str) and _NODE.fullmatch(k) for k in value):
        return _nodes(value)  # node -> what was done there (a clock's offset, ...)
    return None


def _wait(value: Mapping[str, Any]) -> str:
    """A recovery wait or a scripted wait for cluster state: did it hold, and after how long."""
    held = value.get("recovered", value.get("held"))
    secs = value.get("seconds")
    took = f" after {secs} s" if isinstance(secs, int | float) else ""
    cut = " (cut short)" if value.get("cut-short") else ""
    return ("held" if held is True else "did not hold") + took + cut


def fault_label(kind: str, value: Any) -> str:
    """``kind`` and the nodes it hit, e.g. ``partition n2 | n1,n3`` or ``kill n1``."""
    if value is None or value in ({}, []):
        return kind
    if isinstance(value, str):
        return f"{kind} {value}"
    what = None
    if isinstance(value, Mapping) and ("recovered" in value or "held" in value):
        what = _wait(value)
    elif isinstance(value, Mapping):
        what = _partition(value) if kind == "partition" else _acted(value)
        role = _role(value.get("target"))
        if what is not None and role is not None:
            what = f"{what} ({role})"
        elif what is None and role is not None:
            what = role
    if what is None:
        text = compact(value)
        what = text if len(text) <= MAX_FALLBACK else f"{text[:MAX_FALLBACK - 3]}..."
    return f"{kind} {what}"
