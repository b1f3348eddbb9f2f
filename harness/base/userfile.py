"""Opening a file a user named: never blocking, only regular files, at most a stated size.

Every command reads files a person points it at (``insync check``, ``--hosts``,
``--config``, ``--nemesis-schedule``, ``--scenario-file``/``--scenario-dir``,
``--replay``, ``insync report``), and any of them may be a FIFO (an ``open``
that waits forever for a writer), a device (``/dev/zero`` reads without end), a
directory or a symlink to one of those. One opener, here on the ground floor,
answers for all of them: ``O_NONBLOCK`` so the open itself cannot hang, then
``fstat`` on what was opened (not on the name, which could be swapped in
between) and a refusal unless it is a regular file; readers of whole files also
stop at a stated size. Each refusal is one line of the caller's error class
(``UsageError`` for options, exit 64; ``HistoryError`` for histories, exit 3).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from harness.base.errors import InsyncError, UsageError

#: Longest text file (config, fault script, scenario, inventory, test.json) read whole.
MAX_TEXT_BYTES = 16 * 2**20
#: The UTF-8 byte-order mark some editors write first; the text after it is what counts.
BOM = b"\xef\xbb\xbf"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | Path, what: str, *, error: type[InsyncError] = UsageError,
                 hint: str = "pass a regular file") -> BinaryIO:
    """``path`` opened for reading if it is a regular file, else one ``error`` line.

    ``what`` names the file in the message (``"--config x.toml"``).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise error(f"{what}: cannot read it: no such file", hint="check the path") from None
    except IsADirectoryError:
        raise error(f"{what} is a directory, not a file", hint=hint) from None
    except OSError as err:
        raise error(f"{what}: cannot read it: {err.strerror or err}",
                    hint="check the file's permissions") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise error(f"{what} is {_kind(mode)}, not a regular file", hint=hint)
    return os.fdopen(fd, "rb")


def read_regular(path: str | Path, what: str, *, limit: int = MAX_TEXT_BYTES,
                 error: type[InsyncError] = UsageError,
                 hint: str = "pass a regular file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, else one ``error`` line."""
    with open_regular(path, what, error=error, hint=hint) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as err:
            raise error(f"{what}: cannot read it: {err.strerror or err}",
                        hint="check the file") from None
    if len(data) > limit:
        raise error(f"{what} is larger than {limit >> 20} MiB", hint="pass a smaller file")
    return data


def read_user_text(path: str | Path, what: str, *, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a file the user named (a leading byte-order mark dropped), or one
    ``UsageError`` line: not a regular file, too large, binary or not UTF-8."""
    data = read_regular(path, what, limit=limit)
    if data.startswith(BOM):
        data = data[len(BOM):]
    if b"\0" in data:
        raise UsageError(f"{what} is a binary file, not text", hint="pass a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(f"{what} is not UTF-8 text (byte {err.start})",
                         hint="save it as UTF-8") from None
