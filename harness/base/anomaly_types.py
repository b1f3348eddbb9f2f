"""The anomaly-type table of the history contract: one ``AnomalyType`` per type.

The data only; ``harness.base.contract`` re-exports it and derives every list
the project needs from it (order, severity, the informational rule, op fields,
the analysis columns), reading ``contract.ANOMALY_TYPES`` at each call so that a
test swapping the registry there sees every derived table change. The table
lives apart because it is long (one entry per type, each with its meaning and
fields) while the derivations are short: a reader adding a type edits this file
and its detector, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
    # docs/HISTORY-GROUPS.md's exactly-once section: memory engine only (they rest on the
    # group pass's required records and latest committed reads).
    AnomalyType(
        "duplicate-output",
        "one input record of a group has more than one committed output derived from it. "
        "Exactly-once is violated: a zombie or a re-read transaction committed again",
        ("key", "group", "value", "outputs", "writers", "count"), 38, "duplicate-outputs",
        op_list_fields=("writers",), groups=True),
    AnomalyType(
        "missing-output",
        "an input record below the group's final committed offset has no committed output "
        "derived from it. The group consumed it, yet its transformation never committed",
        ("key", "group", "offset", "op", "missing", "count"), 33, "missing-outputs",
        needs_drain=True, op_fields=("op",), groups=True),
)
"""The registry, in docs/HISTORY.md's order, then docs/HISTORY-GROUPS.md's (the verdict
lists types in it)."""
