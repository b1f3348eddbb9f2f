"""Version ranges as scenario files, ``catalogue --versions`` and ``matrix
--kafka-version`` spell them (``0.10.2..2.8``, ``2.8..``, ``..1.1``), and the one
reading of a version list they share.

A range compares any release or build by version, so an open end covers
releases Maven Central lists later; :func:`spans` writes a set of table
versions back as ranges for the catalogue's tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cluster.version_order import line_floor
from cluster.versions import VERSIONS, KafkaVersion, line_of, names_a_line, resolve_version
from harness.base.errors import UsageError


@dataclass(frozen=True)
class VersionRange:
    """Releases from ``lo`` to ``hi``, spelled ``0.10.2..2.8``, ``2.8..`` or ``..1.1``.

    An end that names a line (``2.8``) takes in the whole line, whichever
    patches Maven Central lists now or later; an end that names a release
    (``2.8.1``) stops at it. A missing end is open: ``2.8..`` holds every
    release from 2.8.0 on, including ones published after the file was
    written. Any release compares by its number.
    """

    lo: KafkaVersion | None
    hi: KafkaVersion | None
    lo_exact: bool = False
    hi_exact: bool = False

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """``A..B``, ``A..``, ``..B`` or ``A`` alone (``A..A``); each end a line or
        release Maven Central lists (``cluster.versions.resolve_version``).

        ``UsageError`` (message only: the loader names the file and key) otherwise.
        """
        lo_text, dots, hi_text = (t.strip() for t in text.partition(".."))
        if not dots:
            hi_text = lo_text
        if not lo_text and not hi_text:
            raise UsageError(f"{text!r} names no version at either end")
        lo = resolve_version(lo_text) if lo_text else None
        hi = resolve_version(hi_text) if hi_text else None
        made = cls(lo, hi, bool(lo_text) and not names_a_line(lo_text),
                   bool(hi_text) and not names_a_line(hi_text))
        if lo is not None and hi is not None and not made._below_hi(lo):
            raise UsageError(f"{text!r} runs backwards ({made._end(lo, made.lo_exact)} is "
                             f"newer than {made._end(hi, made.hi_exact)})")
        return made

    @staticmethod
    def _key(version: KafkaVersion, exact: bool) -> tuple[int, ...]:
        """Where the end sorts (``cluster.version_order``): a line starts below its
        first build (``4.5..`` holds ``4.5.0-SNAPSHOT``), a release at itself."""
        return version.order if exact else line_floor(line_of(version.number))

    @staticmethod
    def _end(version: KafkaVersion, exact: bool) -> str:
        return version.version if exact else version.line

    def _below_hi(self, version: KafkaVersion) -> bool:
        if self.hi is None:
            return True
        if self.hi_exact:
            return version.order <= self.hi.order
        line = line_of(self.hi.number)
        return version.number[: len(line)] <= line

    def __contains__(self, version: object) -> bool:
        """Whether ``version`` (a release or a build: ``4.5.0-SNAPSHOT`` sorts just
        before 4.5.0) falls in the range."""
        if not isinstance(version, KafkaVersion):
            return False
        if self.lo is not None and version.order < self._key(self.lo, self.lo_exact):
            return False
        return self._below_hi(version)

    def within(self, outer: VersionRange) -> bool:
        """Whether every release this range holds, ``outer`` holds too."""
        if outer.lo is not None and (self.lo is None or self.lo not in outer):
            return False
        return outer.hi is None or (self.hi is not None and self.hi in outer)

    def versions(self) -> list[KafkaVersion]:
        """The table's versions in the range, oldest first."""
        return sorted((v for v in VERSIONS if v in self), key=lambda v: v.order)

    def __str__(self) -> str:
        lo = "" if self.lo is None else self._end(self.lo, self.lo_exact)
        hi = "" if self.hi is None else self._end(self.hi, self.hi_exact)
        return lo if lo == hi else f"{lo}..{hi}"


def expand_versions(items: Sequence[str]) -> list[KafkaVersion]:
    """Each item a version (``4.1.x``) or a range (``2.8..``) standing for the table's
    versions in it, oldest first; a version named twice counts once. The one
    reading of a version list that ``catalogue --versions`` and ``matrix
    --kafka-version`` share."""
    found: list[KafkaVersion] = []
    for item in items:
        for version in (VersionRange.parse(item).versions() if ".." in item
                        else [resolve_version(item)]):
            if version not in found:
                found.append(version)
    return found


def spans(versions: Sequence[KafkaVersion]) -> str:
    """``0.10.2..1.1, 4.1``: runs of consecutive table versions, or ``none``."""
    if not versions:
        return "none"
    order = sorted(VERSIONS, key=lambda v: v.order)
    chosen = sorted(versions, key=lambda v: v.order)
    groups: list[list[KafkaVersion]] = []
    for v in chosen:
        if groups and order.index(v) == order.index(groups[-1][-1]) + 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    return ", ".join(str(VersionRange(g[0], g[-1])) for g in groups)
