"""Resuming ``insync matrix``: which runs a previous (interrupted) matrix already finished.

Resume rule: run ``k`` of a combination is done when some
``<results-dir>/<test-name>/*/`` holds a ``test.json`` whose optional
``matrix`` block (written by :func:`mark` after each run) names the same
combination, the same run number and the same settings (every run option but
seed, name, results dir, cluster name and teardown; an option the block does
not name is the same as one unset or at its default now, since a run stored
before the option existed ran as its default does), and a ``results.json`` of
a run that was not interrupted. Everything else is run (again); a finished run of the combination
whose settings differ is left where it is, and the rerun says in one line which
settings changed (:func:`not_reused`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from harness.base.rundir import RunDir, read_json, write_json
from harness.matrix.grid import Combination
from harness.run.options import RunOptions
from results.log_signatures import with_log_signatures
from results.run_coverage import with_failed_steps

#: Each run option's default: what a run stored before the option existed ran with.
DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(RunOptions)
                            if f.default is not MISSING}


def matrix_block(combo: Combination, run_no: int) -> dict[str, Any]:
    return {"combination": combo.name, "run": run_no, "settings": combo.settings()}


@dataclass(frozen=True)
class Done:
    """A finished run found on disk: where it is and its verdict."""

    path: Path
    verdict: dict[str, Any]


def done_runs(results_dir: str | Path, combo: Combination) -> dict[int, Done]:
    """Run number -> the finished stored run of ``combo`` (the resume rule). A verdict
    whose coverage predates the failed scripted steps gets them from its history, so a
    stored run is judged as a new one would be; one stored before ``log_signatures``
    existed gets it from its node logs, so its run line says what a new one's would."""
    settings = combo.settings()
    return {run_no: Done(path, dict(with_log_signatures(
                path, with_failed_steps(path, results, test))))
            for path, run_no, stored, results, test in _finished(results_dir, combo)
            if same_settings(stored, settings)}


@dataclass(frozen=True)
class Changed:
    """A finished stored run of the combination that is not reused: its settings differ."""

    path: Path
    #: option -> (stored value, value now), for each option that differs
    diff: dict[str, tuple[Any, Any]]


def changed_runs(results_dir: str | Path, combo: Combination) -> list[Changed]:
    """The finished stored runs of ``combo`` whose settings differ from its settings now
    (a changed option or, for a scenario, a changed fault script): the rerun says why
    it does not reuse them (:func:`not_reused`)."""
    settings = combo.settings()
    return [Changed(path, settings_diff(stored, settings))
            for path, _, stored, _, _ in _finished(results_dir, combo)
            if not same_settings(stored, settings)]


def not_reused(name: str, changed: list[Changed]) -> str:
    """``scenario-x-4.1.x: 2 stored run(s) not reused, settings changed: another fault
    script (scenario-x-0a1b.schedule.jsonl, now scenario-x-2c3d.schedule.jsonl)``."""
    diff: dict[str, tuple[Any, Any]] = {}
    for c in changed:
        for k, pair in c.diff.items():
            diff.setdefault(k, pair)
    words = [_changed_word(k, was, now) for k, (was, now) in sorted(diff.items())]
    return (f"{name}: {len(changed)} stored run(s) not reused, settings changed: "
            f"{'; '.join(words)}")


def _changed_word(key: str, was: Any, now: Any) -> str:
    if key == "nemesis_schedule":
        def name(x: Any) -> str:
            return Path(x).name if isinstance(x, str) else "none"

        return f"another fault script ({name(was)}, now {name(now)})"
    return f"--{key.replace('_', '-')} {was!r}, now {now!r}"


def _finished(
    results_dir: str | Path, combo: Combination
) -> Iterator[tuple[Path, int, Any, dict[str, Any], dict[str, Any]]]:
    """(run dir, run number, stored settings, results, test.json) of each stored run of
    ``combo`` that finished and was not interrupted, whatever its settings."""
    folder = Path(results_dir) / combo.name
    if not folder.is_dir():
        return
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
        if not isinstance(block.get("run"), int):
            continue
        if (results.get("run") or {}).get("interrupted"):
            continue
        yield run_dir, block["run"], block.get("settings"), results, test


def same_settings(stored: Any, settings: dict[str, Any]) -> bool:
    """Do a stored block's settings equal these? An unset (None) option counts as absent,
    and an absent one as its default, so a run stored before an option existed
    (``--controllers``, ``--record-keys``) still resumes while that option is left unset
    or at its default."""
    return isinstance(stored, dict) and not settings_diff(stored, settings)


def settings_diff(stored: Any, settings: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """option -> (stored, now) for each option whose set values differ (None is unset; an
    option the stored block does not name is taken at its default)."""
    block = stored if isinstance(stored, dict) else {}
    was = {k: v for k, v in block.items() if v is not None}
    was.update({k: DEFAULTS[k] for k in settings.keys() - block.keys()
                if DEFAULTS.get(k) is not None})
    now = {k: v for k, v in settings.items() if v is not None}
    return {k: (was.get(k), now.get(k)) for k in sorted(was.keys() | now.keys())
            if was.get(k) != now.get(k)}


def mark(result: Any, combo: Combination, run_no: int) -> None:
    """Add the optional ``matrix`` block to the run's test.json (resume reads it)."""
    path = RunDir(Path(result.run_dir.path)).test_path
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return  # the run never wrote test.json: it will count as not done
    data["matrix"] = matrix_block(combo, run_no)
    write_json(path, data)
