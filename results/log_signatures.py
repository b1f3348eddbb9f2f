"""Known Kafka bugs that leave an exact line in a broker's own log, and the scan that finds them.

The history shows what clients were told and read; some bugs are plain only in the
broker's log. KAFKA-17507's race, for one, changes a history only when a committed read
happens to catch it, but the broker logs the same exception each time its delayed task
meets the next transaction's offsets too early. Kafka's system tests look for such lines;
here the registry ``SIGNATURES`` is the one place a signature is written (which bug, which
log file, the line, the versions), and ``scan`` counts them in a run's collected logs.

A finding changes no verdict: it says the race or fault path was taken on that broker,
whatever the history shows. A scenario may expect it (``log-signatures``,
``harness.scenario.model.Expectation.logged``) where the history shows the bug only by
chance.

Where the files are: the runner collects each node's log files into
``nodes/<node>/``, each named after its path on the node with ``/`` as ``_``
(``/var/log/kafka/server.log`` is ``var_log_kafka_server.log``), and log4j's hourly
rotation leaves ``server.log.<yyyy-MM-dd-HH>`` beside it. A signature names its file by
its name on the node (``server.log``); the scan reads every collected file of that name,
in whatever directory (a ZooKeeper node's ``server.log`` too, which is small and holds no
broker's line), the rotated ones first (they are older). The broker's ``stdout.log``
repeats ``server.log`` and is not read, so each event counts once.

The scan streams each file in bounded lines (logs reach hundreds of MB; a binary file
with no line breaks is read in pieces), never raises (an unreadable file is logged and
skipped) and returns plain JSON-able data: results.json's ``run.log_signatures``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

from harness.base.rundir import NODES

LOG = logging.getLogger(__name__)

#: The longest piece of a line read at once: a longer line is read in pieces, and only
#: a piece that begins a line is matched (a signature is anchored at the line's start).
PIECE = 1 << 20
#: How much of the first matching line is kept.
FIRST_CHARS = 400


@dataclass(frozen=True)
class LogSignature:
    """One known bug's line in one of the broker's log files."""

    id: str  # the bug's name in Kafka's JIRA
    words: str  # what happened, in a few words, for the closing line
    file: str  # the log file's name on the node (``server.log``)
    pattern: str  # a regex matched at the start of a line
    affected: str  # the broker versions that have the bug, in words
    fixed: str  # the versions with the fix, in words
    meaning: str  # what a matching line means, in one sentence

    @property
    def regex(self) -> re.Pattern[bytes]:
        """The pattern, compiled once, for lines read as bytes (a log need not be UTF-8)."""
        return _compiled(self.pattern)


@cache
def _compiled(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode())


SIGNATURES: tuple[LogSignature, ...] = (
    LogSignature(
        id="KAFKA-17507",
        words="transactional offsets completed early",
        file="server.log",
        pattern=(r"java\.lang\.IllegalStateException: Trying to complete a transactional "
                 r"offset commit for producerId -?\d+ and groupId .* even though the offset "
                 r"commit record itself hasn't been appended to the log\."),
        affected=("0.11.0.3, 1.0.2, 1.1.1 and 2.0 to 3.9.0 (the brokers with KAFKA-6917's "
                  "asynchronous completion of transactional offsets)"),
        fixed="3.9.1 and 4.0.0",
        meaning=("The group coordinator's delayed task that moves a committed transaction's "
                 "offsets into its cache (run after the marker request was answered) found "
                 "the same producer's next transactional offset commit, not yet appended, "
                 "among the pending offsets it keeps by producer id: the race in which that "
                 "task makes the next transaction's offsets the group's, even an aborted "
                 "one's, was open on that broker."),
    ),
)

_ROTATED = re.compile(r"(?P<base>.+)\.\d{4}-\d{2}-\d{2}(?:-\d{2})?")


def _kind_of(name: str) -> tuple[str, bool]:
    """(the file's name on the node as far as it can be told, rotated?):
    ``var_log_kafka_server.log.2026-11-29-14`` is (``var_log_kafka_server.log``, True)."""
    m = _ROTATED.fullmatch(name)
    return (m["base"], True) if m else (name, False)


def _is_kind(collected: str, file: str) -> bool:
    return collected == file or collected.endswith("_" + file)


def _files(node: Path, file: str) -> list[Path]:
    """The node's collected files of that name, rotated ones first (oldest first)."""
    found = []
    for path in node.iterdir():
        base, rotated = _kind_of(path.name)
        if _is_kind(base, file) and path.is_file():
            found.append((not rotated, path.name, path))
    return [p for *_, p in sorted(found)]


def _line_starts(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, the line or its first ``PIECE`` bytes), one line in memory at a time."""
    with path.open("rb") as f:
        number, at_start = 0, True
        for piece in iter(partial(f.readline, PIECE), b""):
            if at_start:
                number += 1
                yield number, piece
            at_start = piece.endswith(b"\n")


@dataclass
class _Found:
    count: int = 0
    nodes: dict[str, int] = field(default_factory=dict)
    first: str = ""
    where: str = ""

    def add(self, node: str, line: bytes, where: str) -> None:
        self.count += 1
        self.nodes[node] = self.nodes.get(node, 0) + 1
        if not self.first:
            self.first = line.decode("utf-8", "replace").strip()[:FIRST_CHARS]
            self.where = where

    def block(self) -> dict[str, Any]:
        return {"count": self.count, "nodes": dict(sorted(self.nodes.items())),
                "first": self.first, "where": self.where}


def scan(nodes: Path, signatures: Iterable[LogSignature] = SIGNATURES) -> dict[str, Any] | None:
    """Each signature found in the node logs under ``nodes`` (a run's ``nodes/``):
    ``{id: {"count", "nodes": {node: count}, "first": the first matching line,
    "where": "<node>/<file>:<line number>"}}``; ``{}`` when none is found, None when
    there is no log file of any signature's kind to read (no ``nodes/``, no node logs
    collected). Never raises: a file or directory that cannot be read is logged and
    skipped."""
    by_file: dict[str, list[LogSignature]] = {}
    for sig in signatures:
        by_file.setdefault(sig.file, []).append(sig)
    try:
        node_dirs = sorted(p for p in nodes.iterdir() if p.is_dir())
    except OSError as err:
        LOG.debug("no node logs under %s: %s", nodes, err)
        return None
    found: dict[str, _Found] = {}
    read_any = False
    for node in node_dirs:
        for file, sigs in by_file.items():
            try:
                paths = _files(node, file)
            except OSError as err:
                LOG.warning("node logs of %s not read: %s", node, err)
                continue
            for path in paths:
                read_any = _scan_file(path, node.name, sigs, found) or read_any
    if not read_any:
        return None
    return {sig_id: f.block() for sig_id, f in sorted(found.items())}


def _scan_file(path: Path, node: str, sigs: list[LogSignature],
               found: dict[str, _Found]) -> bool:
    """Count ``sigs`` in one file into ``found``; False when it could not be read."""
    regexes = [(s.id, s.regex) for s in sigs]
    try:
        for number, line in _line_starts(path):
            for sig_id, regex in regexes:
                if regex.match(line):
                    found.setdefault(sig_id, _Found()).add(
                        node, line, f"{node}/{path.name}:{number}")
    except (OSError, ValueError) as err:
        LOG.warning("broker log %s not scanned: %s", path, err)
        return False
    return True


def scan_run(run_dir: Path) -> dict[str, Any] | None:
    """``scan`` of a run directory's ``nodes/``."""
    return scan(Path(run_dir) / NODES)


# -- in words ------------------------------------------------------------------------------


def by_id(sig_id: str) -> LogSignature | None:
    return next((s for s in SIGNATURES if s.id == sig_id), None)


def describe(block: Any) -> str | None:
    """``KAFKA-17507 (transactional offsets completed early) 3 times, on n3``, one part per
    signature found, ``; `` between them; None when the block holds none (or is no block).
    Reads a stored block defensively: results.json is a file anyone can edit."""
    if not isinstance(block, Mapping):
        return None
    parts = []
    for sig_id, entry in sorted(block.items()):
        if not isinstance(entry, Mapping):
            continue
        count = entry.get("count")
        if type(count) is not int or count <= 0:
            continue
        sig = by_id(sig_id)
        nodes = entry.get("nodes")
        where = ", ".join(sorted(str(n) for n in nodes)) if isinstance(nodes, Mapping) else ""
        parts.append(f"{sig_id}{f' ({sig.words})' if sig else ''} "
                     f"{'once' if count == 1 else f'{count} times'}"
                     + (f", on {where}" if where else ""))
    return "; ".join(parts) or None


def with_log_signatures(run_dir: Path, verdict: Mapping[str, Any]) -> Mapping[str, Any]:
    """``verdict`` with ``run.log_signatures`` scanned from the run's node logs when it was
    stored before the key existed; else ``verdict`` itself (also when it has no ``run``
    block, or no node logs to read)."""
    run = verdict.get("run")
    if not isinstance(run, Mapping) or "log_signatures" in run:
        return verdict
    block = scan_run(run_dir)
    if block is None:
        return verdict
    return {**verdict, "run": {**run, "log_signatures": block}}
