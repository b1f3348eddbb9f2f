"""The run directory of results/LAYOUT.md: where one ``insync run`` keeps everything.

``RunDir.create`` makes ``<results>/<test-name>/<timestamp>/`` (UTC, with
milliseconds, so runs sort by name and never collide); the JSON files are
written atomically (a temporary file renamed over the old one) so a reader
never sees half a ``results.json``, and ``results/latest`` is swapped the same
way, as a relative symlink so the results folder can be moved or copied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

HISTORY = "history.jsonl"
TEST = "test.json"
RESULTS = "results.json"
LOG = "insync.log"
NODES = "nodes"
LATEST = "latest"


def timestamp(when: datetime) -> str:
    """``20261121T031501.123Z``: the directory name of a run started at ``when``."""
    utc = when.astimezone(UTC)
    return utc.strftime("%Y%m%dT%H%M%S.") + f"{utc.microsecond // 1000:03d}Z"


def iso(when: datetime) -> str:
    """``2026-11-21T03:15:01.123Z``: how test.json records the start."""
    utc = when.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class RunDir:
    """One run's directory and the names of the files in it."""

    root: Path  # the results folder
    path: Path  # root / test-name / timestamp

    @classmethod
    def create(cls, root: str | Path, name: str, started: datetime) -> RunDir:
        if not name or "/" in name or name in (".", "..", LATEST):
            raise ValueError(f"not a usable test name: {name!r}")
        base = Path(root)
        stamp = timestamp(started)
        path = base / name / stamp
        n = 1
        while path.exists():  # two runs in one millisecond: keep both
            path = base / name / f"{stamp}-{n}"
            n += 1
        path.mkdir(parents=True)
        (path / NODES).mkdir()
        return cls(base, path)

    @property
    def history(self) -> Path:
        return self.path / HISTORY

    @property
    def test(self) -> Path:
        return self.path / TEST

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    @property
    def log(self) -> Path:
        return self.path / LOG

    @property
    def nodes(self) -> Path:
        return self.path / NODES

    def write_test(self, data: dict[str, Any]) -> None:
        write_json(self.test, data)

    def write_results(self, data: dict[str, Any]) -> None:
        write_json(self.results, data)

    def point_latest(self) -> Path:
        """Make ``<root>/latest`` point at this run (relative link, swapped atomically)."""
        link = self.root / LATEST
        target = os.path.relpath(self.path, self.root)
        tmp = self.root / f".{LATEST}.{os.getpid()}"
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, link)
        return link


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON, atomically."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data
