"""A run's coverage: the block its results.json holds, or one computed from its history.

Every run ``insync run`` finishes carries ``run.coverage`` in results.json,
computed by the runner over the main phase (``results.coverage``). Older runs
and hand-written histories have none, or one from before ``in_faults``
existed: for those the block is computed here from history.jsonl with the same
function. The history does not say where the main phase was, so that block
covers the whole history (first to last client op), and says so.

A block from before ``failed_starts`` and ``failed_heals`` existed lacks the
scripted steps that failed, so a scenario run judged on it would count a control
whose fault never applied as a test: ``with_failed_steps`` adds them from the
history's nemesis lines over the stored main phase.

The report and ``insync analyze`` both take their figures from here, so they
never disagree about a run; ``RunDir.verdict`` (``harness.base.shapes``) has
already checked the stored block's shape.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.base.errors import HistoryError
from harness.base.faults import fault_spans
from harness.base.history import read_history
from harness.base.rundir import HISTORY
from results.coverage import NS, coverage, failed_steps, poor_coverage, slim

LOG = logging.getLogger(__name__)

#: Where the figures were counted: the runner's main phase, or first to last client op.
MAIN, WHOLE_HISTORY = "main", "history"
#: The fields a stored block needs to be used as it is (the current shape).
NEEDED = ("main_s", "acked_sends_main", "acked_per_s", "seconds", "live_seconds",
          "live_share", "faults", "in_faults", "recoveries")


@dataclass(frozen=True)
class RunCoverage:
    """One run's coverage figures, where they were counted, and the verdict they qualify."""

    figures: dict[str, Any]
    window: str
    valid: object = None

    @property
    def poor(self) -> str | None:
        """``poor_coverage``'s one line, whatever the verdict (None: coverage was fine)."""
        return poor_coverage(self.figures)

    @property
    def warning(self) -> str | None:
        """The poor-coverage line when the verdict is VALID: a VALID verdict that proves little
        must say so (an INVALID one stands on its anomalies)."""
        return self.poor if self.valid is True else None


def stored(verdict: Mapping[str, Any]) -> dict[str, Any] | None:
    """results.json's coverage block, when it has every field the views read."""
    run = verdict.get("run")
    block = run.get("coverage") if isinstance(run, dict) else None
    if isinstance(block, dict) and all(block.get(k) is not None for k in NEEDED):
        return block
    return None


def spans_of(test: Mapping[str, Any] | None) -> dict[str, tuple[str, str]]:
    """Fault spans: the registry's, and any test.json adds or redefines (as the bands do)."""
    extra = ((test or {}).get("nemesis") or {}).get("fault_spans") or {}
    return {**fault_spans(), **{k: (v[0], v[1]) for k, v in extra.items()}}


def _slim_ops(history: Path) -> Iterator[dict[str, Any]]:
    for op in read_history(history):
        if type(op.get("time")) is not int:
            raise HistoryError(f"op {op.get('index')!r} has no integer time")
        yield slim(op)


def from_history(history: Path, test: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The coverage block of a history, over the whole of it; ``HistoryError`` naming the
    file when it cannot be read."""
    hint = f"check it with: insync check {history}"
    try:
        return coverage(_slim_ops(history), spans_of(test))
    except HistoryError as err:
        raise HistoryError(f"{history}: {err.message}", hint=hint) from err
    except OSError as err:
        raise HistoryError(f"cannot read {history}: {err.strerror or err}", hint=hint) from err
    except (TypeError, ValueError, KeyError, IndexError) as err:  # a value of the wrong shape
        raise HistoryError(f"{history}: cannot count acknowledged sends ({err})",
                           hint=hint) from err


def run_coverage(run_dir: Path, test: Mapping[str, Any] | None,
                 verdict: Mapping[str, Any]) -> RunCoverage:
    """The run's stored block, or one computed from its history when it has none."""
    block = stored(verdict)
    if block is not None:
        return RunCoverage(block, MAIN, verdict.get("valid"))
    return RunCoverage(from_history(run_dir / HISTORY, test), WHOLE_HISTORY, verdict.get("valid"))


def with_failed_steps(run_dir: Path, verdict: Mapping[str, Any],
                      test: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """``verdict`` with ``failed_starts`` and ``failed_heals`` in its coverage block, from
    the history, when the stored block predates them; else ``verdict`` itself.

    The history's time zero is where the warm-up began (the runner starts both at once),
    so the main phase in history time is the stored ``phase_times`` main start less the
    warm-up start, for the block's ``main_s``. A run whose files do not say so is left
    as it is, and the log says why: never an exception, since callers judge many runs."""
    run = verdict.get("run")
    if not isinstance(run, Mapping):
        return verdict
    block = run.get("coverage")
    if not isinstance(block, Mapping) or ("failed_starts" in block and "failed_heals" in block):
        return verdict
    try:
        phases = run["phase_times"]
        start = round((float(phases["main"][0]) - float(phases["warm-up"][0])) * NS)
        window = (start, start + round(float(block["main_s"]) * NS))
        steps = failed_steps(_nemesis_lines(run_dir / HISTORY), spans_of(test), window)
    except (OSError, ValueError, TypeError, KeyError, IndexError) as err:
        LOG.warning("%s: failed scripted steps not counted: %s", run_dir, err)
        return verdict
    return {**verdict, "run": {**run, "coverage": {**steps, **block}}}


def _nemesis_lines(history: Path) -> list[dict[str, Any]]:
    """The history's nemesis lines, without parsing the client ops' (most of a history)."""
    with history.open("rb") as f:
        return [op for line in f if b'"nemesis"' in line
                for op in (json.loads(line),) if op.get("process") == "nemesis"]
