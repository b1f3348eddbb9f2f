"""The history contract of docs/HISTORY.md as data: client ops, outcomes, anomaly types.

One registry entry per client op (``CLIENT_OPS``) and per anomaly type
(``ANOMALY_TYPES``); every other list of them in the project (the checker's
tables, its malformed-input messages, the Spark engine's rules, the workload's
op kinds, the report's severity order and op fields, the analysis columns) is
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


# -- anomaly types --------------------------------------------------------------

#: When a type is informational (never makes a run invalid): ``never`` (it always
#: makes a run invalid), ``always``, ``ww-deps`` (the search was given write-write
#: edges and the cycle needs one), ``rebalance`` (the history has a ``rebalances``
#: op such as ``subscribe``). The checker decides which conditions hold for a history.
InfoWhen = Literal["never", "always", "ww-deps", "rebalance"]
INFO_CONDITIONS: tuple[InfoWhen, ...] = ("never", "always", "ww-deps", "rebalance")
#: The checker engines: ``memory`` (``checkers``) and ``spark`` (``checkers.spark``).
Engine = Literal["memory", "spark"]
ENGINES: tuple[Engine, ...] = ("memory", "spark")


@dataclass(frozen=True)
class AnomalyType:
    """One anomaly type: its name in the verdict and everything said about it."""

    #: Its name in ``anomaly-types`` and ``anomalies``.
    name: str
    #: docs/HISTORY.md's "reported when", one line.
    meaning: str
    #: The fields of each example, in docs/HISTORY.md's order.
    fields: tuple[str, ...]
    #: Rank from most alarming (0: data lost or made up) to least; reports sort by it.
    severity: int
    #: The analysis column it is counted in (``insync analyze``; ``-`` becomes ``_``): one
    #: of its own, or a group named for what its types share (``ordering-violations``).
    group: str
    #: When it is informational (see ``InfoWhen``).
    informational: InfoWhen = "never"
    #: Which engines look for it.
    engines: tuple[Engine, ...] = ("memory",)
    #: Proving it needs the final drain to have read everything back: a run cut short
    #: before the drain may show it without it being real (``unseen``).
    needs_drain: bool = False
    #: Fields holding one op index (a completion's), a list of them, a map to them.
    op_fields: tuple[str, ...] = ()
    op_list_fields: tuple[str, ...] = ()
    op_map_fields: tuple[str, ...] = ()
    #: Optional fields an example may also carry (the contract grows only by these).
    optional_fields: tuple[str, ...] = ()
    #: Defined by docs/HISTORY-GROUPS.md (consumer groups and committed offsets) and
    #: judged by ``checkers.groups``, which reads a history again only when it uses them.
    groups: bool = False

    def __post_init__(self) -> None:
        if self.informational not in INFO_CONDITIONS:
            raise ValueError(f"anomaly type {self.name!r}: informational "
                             f"{self.informational!r} is none of {INFO_CONDITIONS}")
        unknown = set(self.engines) - set(ENGINES)
        if unknown or not self.engines:
            raise ValueError(f"anomaly type {self.name!r}: engines {self.engines} not in {ENGINES}")
        named = {*self.op_fields, *self.op_list_fields, *self.op_map_fields}
        known = {*self.fields, *self.optional_fields}
        if not named <= known:
            raise ValueError(f"anomaly type {self.name!r}: op fields "
                             f"{sorted(named - known)} are not among its fields")


_BOTH: tuple[Engine, ...] = ("memory", "spark")

ANOMALY_TYPES: tuple[AnomalyType, ...] = (
    AnomalyType(
        "lost-write",
        "a value that must have been committed sits in the version order at or below the "
        "highest position some `ok` read reached, yet no `ok` read saw it",
        ("key", "value", "index", "max-read-index", "writer", "max-read"), 0, "lost-writes",
        engines=_BOTH, op_fields=("writer", "max-read"),
        optional_fields=("offset", "max-read-offset")),
    AnomalyType(
        "unseen",
        "a value acknowledged by an `ok` send was never read by any `ok` poll by the end of "
        "the run",
        ("key", "count", "values"), 70, "unseen", engines=_BOTH, needs_drain=True,
        op_list_fields=("writers",), optional_fields=("writers",)),
    AnomalyType(
        "duplicate", "one value appears at more than one offset",
        ("key", "value", "count", "offsets"), 40, "duplicates", engines=_BOTH,
        op_fields=("writer", "reader"), optional_fields=("writer", "reader")),
    AnomalyType(
        "inconsistent-offsets", "one offset holds more than one value (replicas diverged)",
        ("key", "offset", "index", "values"), 10, "inconsistent-offsets", engines=_BOTH,
        op_map_fields=("witnesses",), optional_fields=("witnesses",)),
    AnomalyType(
        "nonmonotonic-send",
        "a process's send lands at or before its previous send to the same key",
        ("key", "values", "delta", "ops"), 80, "ordering-violations", op_list_fields=("ops",)),
    AnomalyType(
        "int-nonmonotonic-send", "inside one op, a later send lands at or before an earlier one",
        ("key", "values", "delta", "op"), 90, "ordering-violations", op_fields=("op",)),
    AnomalyType(
        "int-send-skip",
        "inside one op, another value lands between two consecutive sends (informational)",
        ("key", "values", "delta", "skipped", "op"), 150, "ordering-violations",
        informational="always", op_fields=("op",)),
    AnomalyType(
        "poll-skip",
        "a process's poll starts past the record right after its previous `ok` poll of that key",
        ("key", "delta", "skipped", "ops"), 120, "ordering-violations", informational="rebalance",
        op_list_fields=("ops",)),
    AnomalyType(
        "nonmonotonic-poll",
        "a process's poll starts at or before the last record its previous `ok` poll returned",
        ("key", "values", "delta", "ops"), 100, "ordering-violations", informational="rebalance",
        op_list_fields=("ops",)),
    AnomalyType(
        "int-poll-skip", "inside one op, consecutive records of a key skip over a record",
        ("key", "values", "delta", "skipped", "op"), 130, "ordering-violations", op_fields=("op",)),
    AnomalyType(
        "int-nonmonotonic-poll", "inside one op, records of a key go backwards or repeat",
        ("key", "values", "delta", "op"), 110, "ordering-violations", op_fields=("op",)),
    AnomalyType(
        "G1a", "an `ok` read saw a value written by a `fail`ed op (aborted read)",
        ("key", "value", "writer", "reader"), 30, "isolation", op_fields=("writer", "reader")),
    AnomalyType(
        "precommitted-read", "one op reads a value it sent itself, before its commit",
        ("op", "key", "value"), 60, "isolation", op_fields=("op",)),
    AnomalyType(
        "garbage-read", "a read returned a value that no operation in the history sent",
        ("key", "value", "op"), 20, "garbage-reads", op_fields=("op",)),
    AnomalyType(
        "G0", "a dependency cycle among transactions through write-write edges only",
        ("cycle", "steps"), 140, "isolation", informational="always", op_list_fields=("cycle",)),
    AnomalyType(
        "G1c", "a dependency cycle among transactions through write-write and write-read edges",
        ("cycle", "steps"), 50, "isolation", informational="ww-deps", op_list_fields=("cycle",)),
    # docs/HISTORY-GROUPS.md: judged by the memory engine only (ordered scans across ops,
    # not joins); none needs the drain, whose reads come after the final committed reads
    # and never justify an observation made before them.
    AnomalyType(
        "lost-commit",
        "the group's committed offset for a key, as a committed read returned it or as "
        "the start of a newly assigned member shows it, is below an offset established "
        "before that read or start began, and no commit explains it. This is the "
        "signature of KAFKA-20634, of O1 with `earliest`, and of O2",
        ("key", "group", "via", "offset", "writer", "read", "op", "values"), 32, "lost-commits",
        op_fields=("writer", "op"), groups=True),
    AnomalyType(
        "commit-skip",
        "the group's committed offset (committed, or read back), or the start of a "
        "member, passes over a record that no member of the group had received. "
        "At-least-once is violated. This is the signature of O4 auto-commit and of O1 "
        "with `latest`",
        ("key", "group", "via", "offset", "op", "skipped", "count"), 34, "commit-skips",
        op_fields=("op",), groups=True),
    AnomalyType(
        "garbage-commit",
        "a committed read returned an offset that no commit of the group could have "
        "written. With `writer`, that offset was committed only by an aborted (`fail`) "
        "op",
        ("key", "group", "offset", "op", "writer"), 36, "garbage-commits",
        op_fields=("op", "writer"), groups=True),
)
"""The registry, in docs/HISTORY.md's order, then docs/HISTORY-GROUPS.md's (the verdict
lists types in it)."""


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
