"""Resuming ``insync matrix``: which runs a previous (interrupted) matrix already finished.

Resume rule: run ``k`` of a combination is done when some
``<results-dir>/<test-name>/*/`` holds a ``test.json`` whose optional
``matrix`` block (written by :func:`mark` after each run) names the same
combination, the same run number and the same settings (every run option but
seed, name, results dir, cluster name and teardown; an unset option is the same
as one the block does not name), and a ``results.json`` of a run that was not
interrupted. Everything else is run (again).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.rundir import RunDir, read_json, write_json
from harness.matrix.grid import Combination


def matrix_block(combo: Combination, run_no: int) -> dict[str, Any]:
    return {"combination": combo.name, "run": run_no, "settings": combo.settings()}


@dataclass(frozen=True)
class Done:
    """A finished run found on disk: where it is and its verdict."""

    path: Path
    verdict: dict[str, Any]


def done_runs(results_dir: str | Path, combo: Combination) -> dict[int, Done]:
    """Run number -> the finished stored run of ``combo`` (the resume rule)."""
    settings = combo.settings()
    out: dict[int, Done] = {}
    folder = Path(results_dir) / combo.name
    if not folder.is_dir():
        return out
    for run_dir in sorted(folder.iterdir()):
        try:
            stored = RunDir(run_dir)
            test = read_json(stored.test_path)
            results = read_json(stored.results_path)
        except (OSError, ValueError):
            continue
        block = test.get("matrix")
        if not isinstance(block, dict) or block.get("combination") != combo.name:
            continue
        if not same_settings(block.get("settings"), settings):
            continue
        if not isinstance(block.get("run"), int):
            continue
        if (results.get("run") or {}).get("interrupted"):
            continue
        out[block["run"]] = Done(run_dir, results)
    return out


def same_settings(stored: Any, settings: dict[str, Any]) -> bool:
    """Do a stored block's settings equal these? An unset (None) option counts as absent,
    so a run stored before an option existed (``--controllers``, ``--base-image``) still
    resumes while that option is left unset."""
    if not isinstance(stored, dict):
        return False
    return {k: v for k, v in stored.items() if v is not None} == {
        k: v for k, v in settings.items() if v is not None
    }


def mark(result: Any, combo: Combination, run_no: int) -> None:
    """Add the optional ``matrix`` block to the run's test.json (resume reads it)."""
    path = RunDir(Path(result.run_dir.path)).test_path
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return  # the run never wrote test.json: it will count as not done
    data["matrix"] = matrix_block(combo, run_no)
    write_json(path, data)
