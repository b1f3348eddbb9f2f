"""The per-key state the collector folds every op into (``checkers._collect`` says why).

Its own module so that the analyses, the version order and the parallel merge
read the state without the collector's walking code.
"""

from __future__ import annotations

from array import array

#: Offset recorded for a send whose offset is unknown or not in the version order.
NO_OFFSET = -(2**63)


class KeyState:
    """Everything the history said about one key (topic-partition)."""

    __slots__ = (
        "extra",
        "extra_ops",
        "log",
        "ok_reads",
        "other_reads",
        "proc_poll",
        "proc_send",
        "rgroups",
        "roffs",
        "rvals",
        "sgroups",
        "soffs",
        "svals",
        "writer_kind",
        "writers",
    )

    def __init__(self) -> None:
        self.log: dict[int, int] = {}
        self.extra: dict[int, list[int]] = {}
        #: (offset, divergent value) -> the op that recorded it there
        self.extra_ops: dict[tuple[int, int], int] = {}
        self.writers: dict[int, int] = {}
        self.writer_kind: dict[int, int] = {}
        self.ok_reads: dict[int, int] = {}
        self.other_reads: dict[int, int] = {}
        self.rvals = array("q")
        self.roffs = array("q")
        self.rgroups = array("q")
        self.svals = array("q")
        self.soffs = array("q")
        self.sgroups = array("q")
        self.proc_poll = array("q")
        self.proc_send = array("q")

    def diverge(self, offset: int, value: int, op: int) -> None:
        """A second, different value recorded at ``offset`` (by ``op``)."""
        seen = self.extra.setdefault(offset, [])
        if value not in seen:
            seen.append(value)
            self.extra_ops[offset, value] = op
