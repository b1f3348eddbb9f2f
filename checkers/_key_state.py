"""The per-key state the collector folds every op into (``checkers._collect`` says why).

Its own module so that the analyses, the version order and the parallel merge
read the state without the collector's walking code.
"""

from __future__ import annotations

from array import array

#: The typecode of every per-key stream: unsigned, because ``array('Q')`` stores a Python
#: int directly where ``'q'`` parses it as a call argument (about 5x the cost of an append,
#: on the checker's hottest lines). Everything stored is a non-negative int below 2**63
#: (checked before it is stored), or ``NO_OFFSET``.
STREAM = "Q"
#: Offset recorded for a send whose offset is unknown or not in the version order: above
#: every real offset, so a difference with one is beyond ``checkers._analyses.SUSPECT``.
NO_OFFSET = 2**64 - 1


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
        self.rvals = array(STREAM)
        self.roffs = array(STREAM)
        self.rgroups = array(STREAM)
        self.svals = array(STREAM)
        self.soffs = array(STREAM)
        self.sgroups = array(STREAM)
        self.proc_poll = array(STREAM)
        self.proc_send = array(STREAM)

    def diverge(self, offset: int, value: int, op: int) -> None:
        """A second, different value recorded at ``offset`` (by ``op``)."""
        seen = self.extra.setdefault(offset, [])
        if value not in seen:
            seen.append(value)
            self.extra_ops[offset, value] = op
