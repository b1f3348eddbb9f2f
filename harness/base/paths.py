"""Paths named from outside: what is there, said in one line, and whether it stays in a root.

A user points a command at a path (``insync report RUN_DIR``, ``--out DIR``), a
browser names one in a URL (``insync serve``), and a run directory is a plain
folder anyone can put a symlink in (``history.jsonl -> /etc/shadow``). Both
questions are answered here, on the ground floor, because the run directory
(``harness.base.rundir``) asks them before anything above it reads a file:

* ``existing_dir`` and ``output_file``: is the path a directory to read, or a
  place a file can be written? If not, one ``UsageError`` saying what is there
  instead (nothing, a file, a broken link, a loop), before any work starts;
* ``resolve_within(root, rel)``: ``root/rel`` with every symlink followed,
  refused (``Refused``) unless it stays under the root. ``insync serve``
  resolves every path a request names this way, and its index reads every
  run's files through it. The reasons are distinct because they deserve
  distinct answers: a path that leaves the root is forbidden, a symlink loop
  names nothing that exists, and an over-long name is a request the file
  system cannot even look up (``ENAMETOOLONG``), never a crash.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from harness.base.errors import UsageError

#: Longest file name (one path component), in bytes, on the file systems we run on.
NAME_MAX = 255
#: Longest whole path, in bytes.
PATH_MAX = 4096
#: Longest path or value quoted in a message.
SHOWN_CHARS = 60

Reason = Literal["outside", "loop", "too-long", "invalid", "unreadable"]


class Refused(Exception):
    """A path that cannot be served or read; ``reason`` says why, ``str()`` says it in words."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason: Reason = reason


def too_long(path: str) -> bool:
    """Whether ``path`` has a component or a total length the file system refuses."""
    raw = os.fsencode(path)
    return len(raw) > PATH_MAX or any(len(part) > NAME_MAX for part in raw.split(b"/"))


def resolve_within(root: Path, rel: str | Path) -> Path:
    """``root/rel`` with every symlink followed, if that stays under ``root``.

    ``rel`` may be absolute (it is taken relative to ``root``) and need not
    exist; ``..`` and symlinks are followed before the check, so neither can
    leave the root. Raises ``Refused``.
    """
    text = str(rel)
    if "\0" in text:
        raise Refused("invalid", "a path cannot contain a NUL byte")
    if too_long(text):
        raise Refused("too-long", f"a name is longer than {NAME_MAX} bytes "
                                  f"or the path longer than {PATH_MAX}")
    base = root.resolve()
    try:
        target = (base / text.lstrip("/")).resolve()
    except RuntimeError as err:  # Python < 3.13: a symlink loop
        raise Refused("loop", "a symlink loop") from err
    except OSError as err:
        raise _refused(err) from err
    if target != base and base not in target.parents:
        raise Refused("outside", "outside the results directory")
    if too_long(str(target)):  # a symlink may expand a short name into a long one
        raise Refused("too-long", f"the path resolves to more than {PATH_MAX} bytes")
    return target


def _refused(err: OSError) -> Refused:
    if err.errno == errno.ELOOP:
        return Refused("loop", "a symlink loop")
    if err.errno == errno.ENAMETOOLONG:
        return Refused("too-long", "a name too long for the file system")
    return Refused("unreadable", err.strerror or str(err))


# -- names that are not UTF-8 -------------------------------------------------------------


def printable(name: str) -> str:
    """``name`` as text a page or a terminal can hold: bytes that are not UTF-8 (Python keeps
    them as lone surrogates, ``surrogateescape``) shown as U+FFFD."""
    return os.fsencode(name).decode("utf-8", "replace")


def url_path(name: str) -> str:
    """``name`` percent-encoded byte for byte, so a link names the very file, UTF-8 or not
    (``urllib.parse.unquote(..., errors="surrogateescape")`` reads it back)."""
    from urllib.parse import quote

    return quote(os.fsencode(name))


# -- what is at a path, in words ------------------------------------------------------


def shown(text: object) -> str:
    """``text`` cut to a readable length for a one-line message."""
    s = str(text)
    return s if len(s) <= SHOWN_CHARS else s[:SHOWN_CHARS - 3] + "..."


def shown_path(path: Path) -> str:
    """``path`` in full, unless it is too long for the file system (then cut)."""
    return shown(path) if too_long(str(path)) else str(path)


MISSING, BROKEN_LINK = "it does not exist", "it is a broken symlink"


def _look(path: Path) -> tuple[str, int]:
    """What is at ``path``: ("", mode) when it can be looked at, else (why not, 0)."""
    if too_long(str(path)):
        return "the file name is too long", 0
    try:
        return "", path.stat().st_mode
    except FileNotFoundError:
        return (BROKEN_LINK if path.is_symlink() else MISSING), 0
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "it is a symlink loop", 0
        if err.errno == errno.ENOTDIR:
            return "a parent of it is not a directory", 0
        return str(err.strerror or err), 0


def existing_dir(path: Path, hint: str, label: str = "") -> Path:
    """``path`` if it is a directory; otherwise a ``UsageError`` saying what it is instead.

    ``label`` names the option the path came from (``"--out "``), if any.
    """
    problem, mode = _look(path)
    if not problem and not stat.S_ISDIR(mode):
        problem = "it is a file, not a directory"
    if problem:
        raise UsageError(f"{label}{shown_path(path)}: {problem}", hint=hint)
    return path


def output_file(path: Path, hint: str) -> Path:
    """``path`` if a file can be written there (absent, or a file); a ``UsageError`` if not."""
    problem, mode = _look(path)
    if problem in (MISSING, BROKEN_LINK):  # written by renaming over it: fine
        return path
    if not problem and stat.S_ISDIR(mode):
        problem = "it is a directory"
    if problem:
        raise UsageError(f"cannot write {shown_path(path)}: {problem}", hint=hint)
    return path
