"""Former home of the run-file readers, now on the ground floor; only old names are left here.

Reading a run directory moved down to ``harness.base.rundir.RunDir`` (``open``,
``test``, ``verdict``, ``history``), its shape checks to ``harness.base.shapes``
and the path checks a command makes to ``harness.base.paths``. What is left are
the names ``results.ingest`` and ``results.analyze`` still import: both are
being changed on another branch at the same time, so their imports move (and
this module goes) once that work is merged. New code imports from the ground
floor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.base.paths import existing_dir, output_file, shown_path
from harness.base.rundir import RunDir

__all__ = ["existing_dir", "output_file", "read_test", "read_verdict", "shown_path"]


def read_test(run_dir: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """``RunDir(run_dir).test(within=within)``."""
    return RunDir(run_dir).test(within=within)


def read_verdict(run_dir: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """``RunDir(run_dir).verdict(within=within)``."""
    return RunDir(run_dir).verdict(within=within)
