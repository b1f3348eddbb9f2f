"""The run directory of results/LAYOUT.md: where one ``insync run`` keeps everything, both ways.

The one place that spells the run files' names (``tests/test_run_file_names.py``
keeps it that way): everything else asks a ``RunDir`` for a path
(``history_path``, ``test_path``, ...) or for what a file holds:

* writing: ``RunDir.create`` makes ``<results>/<test-name>/<timestamp>/`` (UTC,
  with milliseconds, so runs sort by name and never collide); the JSON files
  are written atomically (a temporary file renamed over the old one) so a
  reader never sees half a ``results.json``, and ``results/latest`` is swapped
  the same way, as a relative symlink so the results folder can be moved;
* reading: ``RunDir.open`` takes a directory a person named and says in one
  line when it is not a run; ``history()`` yields its ops
  (``harness.base.history.read_history``), ``test()`` and ``verdict()`` its
  ``test.json`` and ``results.json``, shape-checked (``harness.base.shapes``),
  or None when the run has none (a bare history, a run not checked yet).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from harness.base.errors import HistoryError, UsageError
from harness.base.history import Op, read_history
from harness.base.paths import existing_dir
from harness.base.shapes import RESULTS_FIELDS, RESULTS_REQUIRED, TEST_FIELDS, read_object
from harness.base.userfile import open_regular

HISTORY = "history.jsonl"
TEST = "test.json"
RESULTS = "results.json"
LOG = "insync.log"
NODES = "nodes"
REPORT = "report.html"
LATEST = "latest"
#: The files that make a directory a stored run, any one of them (the results browser's test).
RUN_FILES = (HISTORY, RESULTS, TEST)


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
    """One run's directory: the names of the files in it, and what they hold."""

    path: Path  # <results>/<test-name>/<timestamp>

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
        return cls(path)

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """The run directory ``path`` names (it, or its history), or one ``UsageError`` line.

        A run here is any directory holding a history: one of ours, or a bare
        history someone put in a folder (test.json and results.json are optional).
        """
        p = Path(path)
        if p.name == HISTORY:
            p = p.parent
        existing_dir(p, hint=f"give a run directory, one holding {HISTORY}")
        run = cls(p)
        try:
            has_history = run.history_path.is_file()
            there = has_history or run.history_path.exists()
        except OSError:
            has_history = there = False
        if there and not has_history:  # a FIFO, a device, a directory: say which
            open_regular(run.history_path, str(run.history_path), error=HistoryError,
                         hint=f"replace it with the run's {HISTORY}").close()
        if not has_history:
            raise UsageError(f"{p} has no {HISTORY}",
                             hint="give a run directory written by 'insync run'")
        return run

    @property
    def root(self) -> Path:
        """The results folder the run was created in (``point_latest`` links there)."""
        return self.path.parent.parent

    # -- where each file is ----------------------------------------------------------

    @property
    def history_path(self) -> Path:
        return self.path / HISTORY

    @property
    def test_path(self) -> Path:
        return self.path / TEST

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    @property
    def log_path(self) -> Path:
        return self.path / LOG

    @property
    def nodes_path(self) -> Path:
        return self.path / NODES

    @property
    def report_path(self) -> Path:
        return self.path / REPORT

    # -- reading ---------------------------------------------------------------------

    def history(self) -> Iterator[Op]:
        """The ops of the history, in file order (a last line cut by a crash is dropped)."""
        return read_history(self.history_path)

    def test(self, *, within: Path | None = None) -> dict[str, Any] | None:
        """test.json, shape-checked; None when the run has none (a bare history).

        With ``within``, a test.json that a symlink places outside that directory
        is refused (a ``HistoryError``), as the results browser needs.
        """
        path = self.test_path
        hint = f"fix {path.name} as results/LAYOUT.md describes, or move it out of {path.parent}"
        return read_object(path, TEST_FIELDS, (), hint, within)

    def verdict(self, *, within: Path | None = None) -> dict[str, Any] | None:
        """results.json, shape-checked; None when there is none (the run is not checked yet)."""
        path = self.results_path
        hint = (f"recreate it with: insync check {shlex.quote(str(self.path))} --json > "
                f"{shlex.quote(str(path))}")
        return read_object(path, RESULTS_FIELDS, RESULTS_REQUIRED, hint, within)

    # -- writing ---------------------------------------------------------------------

    def write_test(self, data: dict[str, Any]) -> None:
        write_json(self.test_path, data)

    def write_results(self, data: dict[str, Any]) -> None:
        write_json(self.results_path, data)

    def point_latest(self) -> Path:
        """Make ``<root>/latest`` point at this run (relative link, swapped atomically)."""
        root = self.root
        link = root / LATEST
        target = os.path.relpath(self.path, root)
        tmp = root / f".{LATEST}.{os.getpid()}"
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
