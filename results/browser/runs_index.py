"""Every stored run in a results directory, summarised for the ``insync serve`` index page.

A run is a directory (``<test-name>/<timestamp>/``, results/LAYOUT.md) holding
any of the run files (``harness.base.rundir.RUN_FILES``). Each is reduced to the
fields a person sorts and filters by: verdict, date, Kafka version, the
durability settings (acks, min.insync.replicas, unclean leader election), the
faults injected, and anomaly counts. The files are read through
``harness.base.rundir.RunDir`` confined to the results directory: a malformed file, or
one that a symlink places outside the root, makes the fields empty (and a
malformed results.json the verdict "unreadable"), never the index fail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.base.errors import HistoryError
from harness.base.paths import printable, url_path
from harness.base.rundir import RUN_FILES, RunDir

log = logging.getLogger(__name__)
MAX_DEPTH = 3


@dataclass
class RunInfo:
    """One row of the index."""

    path: str
    name: str
    verdict: str
    date: str
    kafka: str
    acks: str
    min_insync: str
    unclean: str
    faults: list[str]
    anomalies: dict[str, int]
    ops: int | None
    has_report: bool
    files: list[str] = field(default_factory=list)
    #: ``/runs/<path>`` percent-encoded byte for byte (``path`` is for reading: a name
    #: that is not UTF-8 shows U+FFFD there, and a link built from it would miss the run)
    href: str = ""

    def text(self) -> str:
        """Everything searchable, lower case."""
        parts = [self.path, self.name, self.verdict, self.date, f"kafka {self.kafka}",
                 f"acks={self.acks}", f"min.insync={self.min_insync}",
                 f"unclean={self.unclean}", *self.faults, *self.anomalies]
        return " ".join(parts).lower()


def _read(read: Callable[..., dict[str, Any] | None], root: Path,
          ) -> tuple[dict[str, Any], bool]:
    """A run file through ``read`` (``RunDir.test`` or ``.verdict``, confined to ``root``):
    (its object, whether it is malformed). A file that is absent, malformed or outside
    the root gives ``{}``."""
    try:
        return read(within=root) or {}, False
    except HistoryError as err:
        log.debug("index: %s", err.one_line())
        return {}, True


def _find(root: Path) -> Iterable[Path]:
    """Run directories under root (not following symlinks such as ``latest``)."""
    stack = [(root, 0)]
    while stack:
        d, depth = stack.pop()
        try:
            entries = list(d.iterdir())
        except OSError:
            continue
        if d != root and any(e.name in RUN_FILES and e.is_file() for e in entries):
            yield d
            continue
        if depth < MAX_DEPTH:
            stack.extend((e, depth + 1) for e in entries if e.is_dir() and not e.is_symlink()
                         and not e.name.startswith("."))


def _verdict(results: Mapping[str, Any]) -> str:
    valid = results.get("valid", None) if results else None
    if valid is True:
        return "valid"
    if valid is False:
        return "invalid"
    return "unknown" if results else "unchecked"


def _date(run: Path, test: Mapping[str, Any]) -> str:
    if isinstance(test.get("started"), str):
        return str(test["started"])
    try:
        return datetime.strptime(run.name, "%Y%m%dT%H%M%S.%fZ").strftime("%Y-%m-%dT%H:%M:%S.%f")[
            :-3] + "Z"
    except ValueError:
        pass
    # lstat: the date of a link itself, never of a file outside the root it points at
    newest = max((run / f).lstat().st_mtime for f in RUN_FILES
                 if (run / f).is_symlink() or (run / f).exists())
    return datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def describe(root: Path, run: Path) -> RunInfo:
    """The index row of one run directory."""
    stored = RunDir(run)
    test, _ = _read(stored.test, root)
    results, unreadable = _read(stored.verdict, root)
    workload = test.get("workload") or {}
    cluster = test.get("cluster") or {}
    nemesis = test.get("nemesis") or {}
    counts = results.get("anomaly-counts") or {
        k: len(v) for k, v in (results.get("anomalies") or {}).items() if isinstance(v, list)}
    stats = results.get("stats") or {}
    rel = run.relative_to(root).as_posix()
    return RunInfo(
        path=printable(rel),
        href="/runs/" + url_path(rel),
        name=printable(str(test.get("name") or run.parent.name)),
        verdict="unreadable" if unreadable else _verdict(results),
        date=_date(run, test),
        kafka=_text(cluster.get("kafka_version_exact") or cluster.get("kafka_version")),
        acks=_text(workload.get("acks")),
        min_insync=_text(workload.get("min_insync")),
        unclean=_text(workload.get("unclean_leader_election")),
        faults=[str(f) for f in nemesis.get("faults") or []],
        anomalies={str(k): int(v) for k, v in counts.items()},
        ops=stats.get("ops") if isinstance(stats.get("ops"), int) else None,
        has_report=stored.report_path.is_file(),
        files=sorted(printable(p.name) for p in run.iterdir()
                     if p.is_file() and not p.name.startswith(".")),
    )


def scan(root: Path) -> list[RunInfo]:
    """Every run under ``root``, newest first."""
    runs = [describe(root, d) for d in _find(root)]
    runs.sort(key=lambda r: (r.date, r.path), reverse=True)
    return runs


def matches(run: RunInfo, query: str) -> bool:
    """Every word of ``query`` occurs in the run's searchable text (case-insensitive)."""
    text = run.text()
    return all(word in text for word in query.lower().split())


def as_json(runs: Iterable[RunInfo]) -> list[dict[str, Any]]:
    """Rows as plain dicts (for the page and ``/api/runs.json``)."""
    return [asdict(r) for r in runs]
