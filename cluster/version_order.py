"""How Kafka versions compare, builds included: ``4.4.0-rc1 < 4.4.0 < 4.5.0-SNAPSHOT < 4.5.0``.

A release is a plain number (``4.1.2``, ``0.10.2.2``). A build a person makes
carries a suffix: ``./gradlew releaseTarGz`` on a branch writes
``4.5.0-SNAPSHOT`` (the work towards 4.5.0), a release candidate is voted on as
``4.4.0-rc1``. Each counts as its number for what it can do (its eras), and
sorts just before the release it leads to, so that a range ending at ``4.4.0``
takes in ``4.4.0-rc2`` and one starting at ``4.5.0`` leaves ``4.5.0-SNAPSHOT``
out. The order is: every snapshot of a number, then its candidates by number,
then the release.

The key is a plain tuple of ints, so every comparison in insync (eras, scenario
ranges, sorting columns) is tuple comparison on :func:`order_key`.
"""

from __future__ import annotations

import re

__all__ = ["PARTS", "SNAPSHOT", "line_floor", "order_key", "parse_version", "split_version"]

#: Kafka numbers have at most four parts (``0.10.2.2``); keys pad to this many.
PARTS = 4
SNAPSHOT = "-SNAPSHOT"
#: A build's pre-release stage, in the order it comes before its release.
_SNAPSHOT_STAGE, _RC_STAGE, _RELEASE_STAGE = 0, 1, 2

_VERSION = re.compile(
    r"(?P<number>\d+(?:\.\d+){1,3})(?:(?P<snapshot>-snapshot)|-rc(?P<rc>\d+))?",
    re.ASCII | re.IGNORECASE,
)


def split_version(text: str) -> tuple[tuple[int, ...], str] | None:
    """``"4.5.0-SNAPSHOT"`` -> ``((4, 5, 0), "-SNAPSHOT")``; ``"4.1.2"`` -> ``((4, 1, 2), "")``.

    None for anything but a number with an optional ``-SNAPSHOT`` or ``-rcN``.
    """
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    number = tuple(int(p) for p in match.group("number").split("."))
    return number, text.strip()[len(match.group("number")):]


def parse_version(text: str) -> tuple[int, ...] | None:
    """The number part of a release or build version, or None if ``text`` is neither."""
    parts = split_version(text)
    return None if parts is None else parts[0]


def order_key(text: str) -> tuple[int, ...] | None:
    """A key that sorts versions as Kafka's history runs (see the module docstring).

    The number padded to :data:`PARTS` with zeros, then the stage (snapshot,
    candidate, release) and the candidate's number.
    """
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    number = [int(p) for p in match.group("number").split(".")]
    padded = (*number, *([0] * (PARTS - len(number))))
    if match.group("snapshot"):
        return (*padded, _SNAPSHOT_STAGE, 0)
    if match.group("rc") is not None:
        return (*padded, _RC_STAGE, int(match.group("rc")))
    return (*padded, _RELEASE_STAGE, 0)


def line_floor(line: tuple[int, ...]) -> tuple[int, ...]:
    """The smallest key of any version on ``line`` (``(4, 5)``): below 4.5.0-SNAPSHOT."""
    return (*line, *([0] * (PARTS - len(line))), _SNAPSHOT_STAGE, 0)
