"""Fetching single ops out of a big history by index, for ``insync serve``'s ``/api/op``.

A 1M-op report embeds full values only for the ops a person most likely
wants (see ``report_data``); when it is opened through ``insync serve`` the
page asks for any other op on demand. The index is the line number, so one
pass finding newlines (numpy over 16 MB chunks, ~0.2 s per 100 MB) gives every
line's byte offset; it is cached per file version (path, size, mtime).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import orjson

from results.report.plot_data import Array

CHUNK = 16 * 2**20
#: How far back from a completion to look for its invoke.
MAX_LOOKBACK = 20_000


@lru_cache(maxsize=4)
def _offsets(path: str, size: int, mtime_ns: int) -> Array:
    starts = [np.zeros(1, dtype=np.int64)]
    base = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            nl = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            starts.append(nl.astype(np.int64) + base + 1)
            base += len(chunk)
    offsets = np.concatenate(starts)
    return offsets[offsets < size] if size else offsets[:0]


def line_offsets(path: Path) -> Array:
    """Byte offset of each line of ``path`` (cached while the file is unchanged)."""
    st = path.stat()
    return _offsets(str(path), st.st_size, st.st_mtime_ns)


def _line(fh: BinaryIO, offsets: Array, i: int) -> dict[str, Any] | None:
    fh.seek(int(offsets[i]))
    try:
        op = orjson.loads(fh.readline())
    except orjson.JSONDecodeError:
        return None
    return op if isinstance(op, dict) else None


def lookup(path: Path, indices: list[int]) -> dict[int, dict[str, Any]]:
    """For each op index (a line): ``{"completion": op, "invoke": op}`` or ``{"invoke": op}``.

    Indices outside the file are left out. A completion's invoke is the nearest
    earlier line of the same process (processes run one op at a time).
    """
    offsets = line_offsets(path)
    out: dict[int, dict[str, Any]] = {}
    with path.open("rb") as fh:
        for i in indices:
            if not 0 <= i < offsets.size:
                continue
            op = _line(fh, offsets, i)
            if op is None:
                continue
            if op.get("type") == "invoke":
                out[i] = {"invoke": op}
                continue
            found: dict[str, Any] = {"completion": op}
            for j in range(i - 1, max(-1, i - MAX_LOOKBACK), -1):
                prev = _line(fh, offsets, j)
                if prev is not None and prev.get("process") == op.get("process"):
                    if prev.get("type") == "invoke":
                        found["invoke"] = prev
                    break
            out[i] = found
    return out
