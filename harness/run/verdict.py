"""The run's verdict: the workload's checker on its history, and the exit status.

A workload names its checker (``workloads.protocol.CheckerSpec``) rather than
importing it (workloads and checkers share a floor with no arrow between
them); :data:`CHECKERS`, a floor above both, maps each name to the function
(``tests/workloads/test_registry.py`` checks every registered workload's name is here).
A checker never raises while judging; a malformed history (a bug in insync,
since the runner wrote it) becomes ``valid: "unknown"`` with exit 3.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkers import check_file, exit_code, without_drain
from harness.base.drain import CUT_SHORT
from harness.base.errors import HistoryError
from workloads.protocol import CheckerSpec

CheckFile = Callable[..., dict[str, Any]]

#: Every checker a workload may name: ``"history"`` judges docs/HISTORY.md histories.
CHECKERS: dict[str, CheckFile] = {"history": check_file}


def unknown(error: str) -> dict[str, Any]:
    """A verdict that decides nothing, saying why."""
    return {
        "valid": "unknown",
        "anomaly-types": [],
        "bad-anomaly-types": [],
        "anomalies": {},
        "error": error,
    }


def judge(checker: CheckerSpec, history: Path, *, drain_finished: bool | None = None,
          why: str = CUT_SHORT) -> tuple[dict[str, Any], int]:
    """The verdict of ``checker`` on ``history``, and the run's exit status.

    ``drain_finished`` False (the run was cut short before its drain ended): the types
    that need the drain are not judged (``harness.base.drain``), ``why`` saying so.
    """
    try:
        verdict = CHECKERS[checker.name](history, **checker.options)
    except HistoryError as err:
        return unknown(f"malformed history: {err.one_line()}"), 3
    if drain_finished is False:
        verdict = without_drain(verdict, why)
    return verdict, exit_code(verdict)
