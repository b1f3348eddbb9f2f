"""The history contract of docs/HISTORY.md as data: client ops, outcomes, anomaly types.

One registry entry per client op (``CLIENT_OPS``) and per anomaly type
(``ANOMALY_TYPES``, whose table is in ``harness.base.anomaly_types``); every
other list of them in the project (the checker's tables, its malformed-input
messages, the Spark engine's rules, the workload's op kinds, the report's
severity order and op fields, the analysis columns) is
derived from here, as ``harness.base.faults`` is for fault kinds. It sits on the
ground floor so that a report, the workload and both checker engines read it
without importing one another.

Adding a client op is one ``ClientOp`` entry plus its parsing and checker
rules; adding an anomaly type is one ``AnomalyType`` entry plus its detector
(and a row of docs/HISTORY.md's anomaly table, or HISTORY-GROUPS.md's for a
consumer-group type, which a test holds to this one).

The helpers read the registries each time they are called (a handful of
entries), never a copy made at import, so a test that swaps a registry sees
every derived table change with it. Hot loops take their tables once per
history (``checkers._history.Scanner``), never per line.

**Pairing rule** (every reader of a history follows it: the checker's scanner,
its parallel chunk merge, the ground floor's ``harness.base.history.pairs``, the
Spark engine's window per process). Lines are taken in file order. A client
line with ``type`` ``invoke`` opens the one pending op of its ``process``; the
next client line of the same ``process`` is its completion (``ok``, ``fail`` or
``info``) and must carry the same ``f``; a completion without a pending invoke,
or a second invoke while one is pending, is malformed. An ``info`` or ``fail``
completion without a ``value`` takes its invoke's value. An invoke still pending
at the end of the file completes as ``info`` (``PENDING``), after every line, in
invoke order. Nemesis lines (``process`` ``"nemesis"``) are never paired by
this rule: each is an action of its own, read by the fault kinds' registry.
The agreement tests hold every implementation to this rule
(``tests/harness/test_history_pairs.py``, the Spark agreement tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeVar

from harness.base.anomaly_types import (
    ANOMALY_TYPES,
    ENGINES,
    INFO_CONDITIONS,
    AnomalyType,
    Engine,
    InfoWhen,
)

#: The public names: the helpers below and the table re-exported from
#: ``harness.base.anomaly_types`` (this module stays the registry's one public name).
__all__ = [
    "ANOMALY_TYPES",
    "CLIENT_OPS",
    "ENGINES",
    "FAIL",
    "F_MASK",
    "F_SHIFT",
    "F_UNIT",
    "GROUP_MOPS",
    "INFO",
    "INFO_CONDITIONS",
    "INVOKE",
    "KIND_MASK",
    "NEMESIS",
    "NEMESIS_F",
    "NEMESIS_META",
    "OK",
    "OUTCOMES",
    "PENDING",
    "PROCESS_SHIFT",
    "PROCESS_UNIT",
    "TYPE_CODES",
    "TYPE_NAMES",
    "AnomalyType",
    "ClientOp",
    "Engine",
    "InfoWhen",
    "ValueShape",
    "analysis_groups",
    "anomaly_names",
    "anomaly_order",
    "anomaly_type",
    "by_severity",
    "checked_by",
    "client_fs",
    "client_op",
    "f_codes",
    "f_names",
    "group_fs",
    "group_mops_allowed_in",
    "group_types",
    "informational_types",
    "invalidating_types",
    "judged_fs",
    "key_list_fs",
    "mop_fs",
    "needing_drain",
    "op_fields",
    "op_list_fields",
    "op_map_fields",
    "pack_meta",
    "parse_key",
    "rebalance_fs",
    "reset_fs",
    "unpack_meta",
]

#: The ``process`` of every fault line; client processes are integers.
NEMESIS = "nemesis"

# -- outcomes -----------------------------------------------------------------

#: Outcome codes, one numbering for the whole project: an op's ``type`` as a small
#: integer. ``PENDING`` is the code an invoke never completed is judged with (info).
INVOKE, OK, FAIL, INFO = 0, 1, 2, 3
PENDING = INFO
#: Completion types, in code order (also the reports' drawing order).
OUTCOMES: tuple[str, str, str] = ("ok", "fail", "info")
TYPE_CODES: dict[str, int] = {"invoke": INVOKE, "ok": OK, "fail": FAIL, "info": INFO}
TYPE_NAMES: dict[int, str] = {code: name for name, code in TYPE_CODES.items()}

# -- the packed per-line layout -------------------------------------------------

#: The checker keeps, per line, who issued it in one signed 64-bit integer:
#: ``process << PROCESS_SHIFT | f_code << F_SHIFT | kind`` (written as
#: ``process * PROCESS_UNIT + f_code * F_UNIT + kind``, which also packs a
#: negative process). ``kind`` is an outcome code (2 bits), ``f_code`` a
#: ``ClientOp.code`` or ``NEMESIS_F`` (4 bits).
KIND_MASK = 0b11
F_SHIFT = 2
F_MASK = 0b1111
PROCESS_SHIFT = 6
F_UNIT = 1 << F_SHIFT
PROCESS_UNIT = 1 << PROCESS_SHIFT
#: The f code of nemesis lines: the highest the layout holds, which no client op takes.
NEMESIS_F = F_MASK
#: What a nemesis line packs to (process -1).
NEMESIS_META = -PROCESS_UNIT + NEMESIS_F * F_UNIT


def pack_meta(process: int, f_code: int, kind: int) -> int:
    """One line's packed (process, f code, outcome code)."""
    return process * PROCESS_UNIT + f_code * F_UNIT + kind


def unpack_meta(packed: int) -> tuple[int, int, int]:
    """(process, f code, outcome code) of a packed line (``pack_meta``'s inverse)."""
    return packed >> PROCESS_SHIFT, (packed >> F_SHIFT) & F_MASK, packed & KIND_MASK


# -- client ops -----------------------------------------------------------------

#: What an op's ``value`` is: a list of micro-ops (``send``/``poll``/``txn``: what the
#: checker judges), a list of keys (``assign``/``subscribe``), a list of group micro-ops
#: only (``commit``/``committed``, docs/HISTORY-GROUPS.md: judged by the group rules),
#: or anything (``crash``).
ValueShape = Literal["mops", "keys", "groups", "any"]


@dataclass(frozen=True)
class ClientOp:
    """One client ``f``, as the history records it."""

    #: The ``f`` of its lines.
    name: str
    #: Its f code in the packed per-line layout (unique, below ``NEMESIS_F``).
    code: int
    #: What its ``value`` holds, which decides how the checkers parse it.
    value: ValueShape
    #: It moves a consumer: an ``ok``/``info`` one makes the process forget its read
    #: and send positions for every key it does not list.
    resets_positions: bool = False
    #: Its presence makes positions per process informational (group rebalances move
    #: consumers legitimately): ``subscribe``.
    rebalances: bool = False
    #: The group micro-ops of docs/HISTORY-GROUPS.md its value may hold.
    group_mops: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0 <= self.code < NEMESIS_F:
            raise ValueError(f"client op {self.name!r}: code {self.code} "
                             f"outside 0..{NEMESIS_F - 1}")
        if self.resets_positions and self.value != "keys":
            raise ValueError(f"client op {self.name!r}: only a list of keys can reset positions")
        if self.group_mops and self.value not in ("mops", "groups"):
            raise ValueError(f"client op {self.name!r}: only micro-ops hold group micro-ops")


#: docs/HISTORY-GROUPS.md's micro-ops: a commit, a committed read, a rebalance's two callbacks.
GROUP_MOPS: tuple[str, ...] = ("commit", "committed", "assigned", "revoked")

CLIENT_OPS: tuple[ClientOp, ...] = (
    ClientOp("send", 0, "mops"),
    ClientOp("poll", 1, "mops", group_mops=GROUP_MOPS),
    ClientOp("txn", 2, "mops", group_mops=GROUP_MOPS),
    ClientOp("assign", 3, "keys", resets_positions=True),
    ClientOp("subscribe", 4, "keys", resets_positions=True, rebalances=True),
    ClientOp("crash", 5, "any"),
    # docs/HISTORY-GROUPS.md
    ClientOp("commit", 6, "groups", group_mops=("commit",)),
    ClientOp("committed", 8, "groups", group_mops=("committed",)),
)
"""The registry, in docs/HISTORY.md's order, then docs/HISTORY-GROUPS.md's (the workload's
op kinds follow it)."""


def parse_key(key: str) -> tuple[str, int]:
    """``"t3-5"`` → ``("t3", 5)``: the topic and partition a history's key names
    (``<topic>-<partition>``, docs/HISTORY.md); ``ValueError`` for anything else."""
    topic, _, partition = key.rpartition("-")
    if not topic or not partition.isdigit():
        raise ValueError(f"not a key of the form <topic>-<partition>: {key!r}")
    return topic, int(partition)


def client_fs() -> tuple[str, ...]:
    """Every client ``f``, in registry order."""
    return tuple(op.name for op in CLIENT_OPS)


def client_op(name: str) -> ClientOp:
    """The client op called ``name``; ``KeyError`` naming the known ones otherwise."""
    return _named(CLIENT_OPS, name, "client op")


def mop_fs() -> frozenset[str]:
    """Client ops whose value is a list of micro-ops."""
    return frozenset(op.name for op in CLIENT_OPS if op.value == "mops")


def key_list_fs() -> frozenset[str]:
    """Client ops whose value is a list of keys."""
    return frozenset(op.name for op in CLIENT_OPS if op.value == "keys")


def group_fs() -> frozenset[str]:
    """Client ops whose value holds group micro-ops only (docs/HISTORY-GROUPS.md)."""
    return frozenset(op.name for op in CLIENT_OPS if op.value == "groups")


def group_mops_allowed_in() -> dict[str, tuple[str, ...]]:
    """Group micro-op -> the client ops whose value may hold it, in registry order
    (docs/HISTORY-GROUPS.md's micro-op table)."""
    return {tag: tuple(op.name for op in CLIENT_OPS if tag in op.group_mops)
            for tag in GROUP_MOPS}


def reset_fs() -> frozenset[str]:
    """Client ops that make a process forget its positions for keys they do not list."""
    return frozenset(op.name for op in CLIENT_OPS if op.resets_positions)


def rebalance_fs() -> frozenset[str]:
    """Client ops whose presence makes positions per process informational."""
    return frozenset(op.name for op in CLIENT_OPS if op.rebalances)


def judged_fs() -> tuple[str, ...]:
    """Client ops that give a history something to judge (those with micro-ops, group
    micro-ops included): a history with none of them is ``unknown``. In registry order."""
    return tuple(op.name for op in CLIENT_OPS if op.value in ("mops", "groups"))


def f_codes() -> dict[str, int]:
    """``f`` -> its code in the packed per-line layout."""
    codes = {op.name: op.code for op in CLIENT_OPS}
    if len(set(codes.values())) != len(codes):
        raise ValueError(f"client op codes are not unique: {codes}")
    return codes


def f_names() -> dict[int, str]:
    """Packed f code -> ``f`` (``f_codes`` inverted)."""
    return {code: name for name, code in f_codes().items()}


# -- anomaly types (the table: harness.base.anomaly_types) ---------------------


def anomaly_names() -> tuple[str, ...]:
    """Every anomaly type's name, in registry order."""
    return tuple(t.name for t in ANOMALY_TYPES)


def anomaly_type(name: str) -> AnomalyType:
    """The anomaly type called ``name``; ``KeyError`` naming the known ones otherwise."""
    return _named(ANOMALY_TYPES, name, "anomaly type")


_Entry = TypeVar("_Entry", ClientOp, AnomalyType)


def _named(entries: tuple[_Entry, ...], name: str, what: str) -> _Entry:
    """The entry called ``name``, or a ``KeyError`` naming every one there is."""
    for entry in entries:
        if entry.name == name:
            return entry
    raise KeyError(f"no {what} {name!r}; known: {', '.join(e.name for e in entries)}")


def anomaly_order() -> dict[str, int]:
    """name -> its place in registry order (the verdict's order)."""
    return {t.name: i for i, t in enumerate(ANOMALY_TYPES)}


def by_severity() -> tuple[str, ...]:
    """Every type's name, most alarming first."""
    return tuple(t.name for t in sorted(ANOMALY_TYPES, key=lambda t: t.severity))


def informational_types(conditions: set[str] | frozenset[str]) -> set[str]:
    """Types that never make a run invalid when ``conditions`` hold (``always`` always does)."""
    held = {"always", *conditions}
    return {t.name for t in ANOMALY_TYPES if t.informational in held}


def invalidating_types() -> tuple[str, ...]:
    """Types that make a run invalid under some condition (every one not always informational)."""
    return tuple(t.name for t in ANOMALY_TYPES if t.informational != "always")


def analysis_groups() -> dict[str, tuple[str, ...]]:
    """Analysis column (``group`` with ``_`` for ``-``) -> the types counted in it: every
    type that can make a run invalid, columns in registry order."""
    groups: dict[str, list[str]] = {}
    for t in ANOMALY_TYPES:
        if t.informational != "always":
            groups.setdefault(t.group.replace("-", "_"), []).append(t.name)
    return {g: tuple(names) for g, names in groups.items()}


def checked_by(engine: str) -> tuple[str, ...]:
    """Types ``engine`` looks for, in registry order."""
    return tuple(t.name for t in ANOMALY_TYPES if engine in t.engines)


def group_types() -> tuple[str, ...]:
    """Types of docs/HISTORY-GROUPS.md, in registry order."""
    return tuple(t.name for t in ANOMALY_TYPES if t.groups)


def needing_drain() -> tuple[str, ...]:
    """Types whose proof depends on the final drain having read everything back."""
    return tuple(t.name for t in ANOMALY_TYPES if t.needs_drain)


def op_fields() -> tuple[str, ...]:
    """Every field, of any type, that holds one op index, in first-seen registry order."""
    return tuple(dict.fromkeys(f for t in ANOMALY_TYPES for f in t.op_fields))


def op_list_fields() -> tuple[str, ...]:
    """Every field that holds a list of op indices."""
    return tuple(dict.fromkeys(f for t in ANOMALY_TYPES for f in t.op_list_fields))


def op_map_fields() -> tuple[str, ...]:
    """Every field that holds a map whose values are op indices."""
    return tuple(dict.fromkeys(f for t in ANOMALY_TYPES for f in t.op_map_fields))
