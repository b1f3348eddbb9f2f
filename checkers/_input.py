"""Which file a history is, how much of it to judge, and why it cannot be read at all.

Both engines start here (``checkers.check_file`` and ``checkers.spark.check``),
so a missing file, a directory without ``history.jsonl``, a compressed file
or a last line cut by a crash get the same answer whichever engine reads it.
Only the head and the tail of the file are read here: the lines themselves are
the scanner's business.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from harness.base.errors import HistoryError
from harness.base.history import cut_short_at
from harness.base.rundir import HISTORY
from harness.base.userfile import open_regular

HISTORY_NAME = HISTORY  # the run directory's name for it (harness.base.rundir)
_READ_BLOCK = 1 << 24
#: (magic bytes, format, what decompresses it): a compressed history is not JSON Lines
COMPRESSED = (
    (b"\x1f\x8b", "gzip", "gunzip"),
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
    (b"\xfd7zXZ\x00", "xz", "unxz"),
    (b"BZh", "bzip2", "bunzip2"),
    (b"PK\x03\x04", "zip", "unzip"),
)


@dataclass(frozen=True)
class Source:
    """A history file ready to read: ``end`` bytes of it, and what was left out."""

    path: Path
    #: bytes to judge: the whole file, or up to a last line cut short by a crash
    end: int
    #: True when the last line was cut short and is left out (then ``end`` is where it starts)
    cut_short: bool = False


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """A run directory means its ``history.jsonl``; anything else is the file itself."""
    p = Path(path)
    if p.is_dir():
        p = p / HISTORY_NAME
        if not p.is_file() and not p.exists():  # something else there: open_history says what
            raise HistoryError(
                f"{path} is a directory without {HISTORY_NAME}",
                hint="pass a history file or a run directory (results/<test>/<timestamp>/)",
            )
    return p


def open_history(path: Path) -> BinaryIO:
    """Open a history file for reading, or say why it cannot be read (never blocking: a
    FIFO or a device is refused, ``harness.base.userfile``)."""
    return open_regular(path, str(path), error=HistoryError,
                        hint="pass a history .jsonl or a run directory that holds history.jsonl")


def open_source(path: str | os.PathLike[str]) -> Source:
    """Resolve ``path`` and look at its head and tail; raises ``HistoryError`` if unusable."""
    resolved = resolve_path(path)
    with open_history(resolved) as handle:
        head = handle.read(8)
        for magic, name, tool in COMPRESSED:
            if head.startswith(magic):
                raise HistoryError(
                    f"{resolved} looks like a {name} file, not JSON Lines",
                    hint=f"decompress it first, e.g. with {tool}, and check it again",
                )
        cut = cut_short_at(handle)
        size = handle.seek(0, os.SEEK_END)
    if cut == 0:
        raise HistoryError(
            "the history's only line is cut short (no final newline, not JSON)", line=1,
            hint="the harness died before it wrote a whole op: there is nothing to judge",
        )
    return Source(resolved, size if cut is None else cut, cut is not None)


def cut_short_warning(line: int) -> str:
    """The one-line warning for a dropped last line (both engines print this)."""
    return (
        f"line {line} has no final newline and is not JSON: the harness died while "
        f"writing it, so it is dropped and the {line - 1} lines before it are judged"
    )


def count_lines(path: Path, start: int, end: int) -> int:
    """Newlines in ``[start, end)``: where line numbering resumes after them."""
    n = 0
    with path.open("rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            block = f.read(min(_READ_BLOCK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


def parse_lines(handle: BinaryIO, source: Source | None = None) -> Iterator[Any]:
    """One parsed JSON value per line of ``source`` (all lines when None).

    ``map`` keeps this loop in C. A line that is not JSON raises
    ``orjson.JSONDecodeError`` out of the map; ``Scanner.feed_all`` knows which
    line it was and turns it into a ``HistoryError``.
    """
    if source is None or not source.cut_short:
        return map(orjson.loads, handle)
    return map(orjson.loads, islice(handle, count_lines(source.path, 0, source.end)))
