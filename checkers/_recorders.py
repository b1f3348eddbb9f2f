"""Which op first recorded a (key, offset, value): the witness of a divergence found at a
chunk edge by the parallel read (``checkers._parallel``), found by reading that chunk again.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from checkers._input import open_history
from harness.base import contract
from harness.base.contract import OK, TYPE_CODES

if TYPE_CHECKING:
    from checkers._collect import Collector


def find_recorders(
    path: Path, start: int, lines: int, into: Collector, conflicts: list[tuple[str, int, int]]
) -> None:
    """The op that first recorded each conflicting (key, offset, value) in the later chunk
    (its ``lines`` lines from byte ``start``).

    Only histories whose replicas diverged across the edge get here, so a second
    read of that chunk is cheap enough, and it keeps the witness exact.
    """
    wanted = set(conflicts)
    mop_fs = contract.mop_fs()
    with open_history(path) as handle:
        handle.seek(start)
        for raw in islice(handle, lines):
            op = orjson.loads(raw)
            for k, o, v in records(op, mop_fs):
                if (k, o, v) in wanted:
                    into.keys[k].extra_ops[o, v] = op["index"]
                    wanted.discard((k, o, v))
            if not wanted:
                return


def records(op: dict[str, Any], mop_fs: frozenset[str]) -> Iterator[tuple[str, int, int]]:
    """The (key, offset, value) an already validated completion recorded in the log."""
    kind = TYPE_CODES.get(op.get("type"))  # type: ignore[arg-type]
    value = op.get("value")
    if not kind or op.get("f") not in mop_fs or type(value) is not list:
        return
    for mop in value:
        if mop[0] == "poll" and len(mop) == 2:
            for k, records in mop[1].items():
                for o, v in records:
                    yield k, o, v
        elif mop[0] == "send" and kind == OK and type(mop[2]) is list:
            o, v = mop[2]
            if o is not None:
                yield mop[1], o, v
