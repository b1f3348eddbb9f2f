"""Confining a path to the results directory: ``resolve_within(root, rel)``.

``insync serve`` hands out files of the results directory to a browser, and
its index reads every run's ``test.json``/``results.json``. A run directory is
a plain folder that anyone can put a symlink in (``history.jsonl ->
/etc/shadow``), so *every* path a request names, and every run file the index
reads, is resolved with all symlinks followed and refused unless it stays
under the root. This is the one place that decides; callers map the reason
to what they answer (an HTTP status, an empty index field).

The reasons a path is refused are distinct because they deserve distinct
answers: a path that leaves the root is forbidden, a symlink loop names
nothing that exists, and an over-long name is a request the file system
cannot even look up (``ENAMETOOLONG``), never a crash.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Literal

#: Longest file name (one path component), in bytes, on the file systems we run on.
NAME_MAX = 255
#: Longest whole path, in bytes.
PATH_MAX = 4096

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
