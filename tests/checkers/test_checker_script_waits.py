"""A fault script's wait that did not hold makes the verdict unknown, from the history alone.

The runner keeps no side channel: ``insync check`` on the bare history must reach
the verdict ``insync run`` stored, so these tests give the checker only history
lines (the ``await-state`` pair the nemesis writes, ``tests/support/wait_histories.py``),
in one pass and in chunks. The Spark engine's agreement on the same lines is in
``tests/results/test_spark_check.py``.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from wait_histories import (
    CHANGE_ERROR,
    CHANGE_REASON,
    HELD,
    NOT_HELD,
    REASON,
    history,
    reconfigured,
)

from checkers import check_file, check_history, exit_code
from checkers._fork import can_fork
from checkers._parallel import read_chunked


def test_a_wait_that_held_changes_nothing() -> None:
    verdict = check_history(history(HELD).ops)
    assert verdict["valid"] is True and "waits-not-held" not in verdict and "error" not in verdict


def test_a_wait_that_did_not_hold_makes_a_valid_history_unknown_naming_the_step() -> None:
    verdict = check_history(history(NOT_HELD).ops)
    assert verdict["valid"] == "unknown" and exit_code(verdict) == 2
    assert verdict["waits-not-held"] == [REASON]
    assert verdict["error"] == REASON


def test_it_is_unknown_whatever_the_checker_found_and_the_anomalies_stay_listed() -> None:
    assert check_history(history(HELD, lose=True).ops)["valid"] is False
    verdict = check_history(history(NOT_HELD, lose=True).ops)
    assert verdict["valid"] == "unknown"
    assert "lost-write" in verdict["bad-anomaly-types"], "what was found is still reported"
    assert verdict["error"].startswith(REASON)


@pytest.mark.parametrize(("completion", "error", "reason"), [
    ({"held": False, "seconds": 12.5, "cut-short": True}, None,
     REASON + " (cut short after 12.5 s: the main phase ended)"),
    ({}, "ClusterError: cannot read cluster metadata", REASON
     + " (ClusterError: cannot read cluster metadata)"),
    ({"held": "yes"}, None, REASON),
], ids=["cut-short-by-the-phase", "failed-with-an-error", "held-not-true"])
def test_any_completion_but_held_true_counts(completion: dict[str, Any], error: str | None,
                                             reason: str) -> None:
    verdict = check_history(history(completion, error=error).ops)
    assert verdict["valid"] == "unknown" and verdict["waits-not-held"] == [reason]


def test_the_invoke_alone_is_not_a_failed_wait() -> None:
    """A run cut short mid-wait leaves only the invoke: that is the interruption's story."""
    assert check_history(history(None).ops)["valid"] is True


def test_the_same_verdict_from_a_file_read_in_chunks(tmp_path: Path) -> None:
    h = history(NOT_HELD)
    h.send(2, "t0-0", 2, 3)
    h.poll(1, {"t0-0": [[2, 3]]})
    path = h.write(tmp_path / "history.jsonl")
    whole = check_file(path, jobs=1)
    size = path.stat().st_size
    lines = path.read_bytes().splitlines(keepends=True)
    cuts = [0, sum(len(x) for x in lines[:2]), sum(len(x) for x in lines[:4]), size]
    _, scanner = read_chunked(path, list(pairwise(cuts)))
    assert scanner.waits_not_held == whole["waits-not-held"] == [REASON]
    if can_fork():
        assert check_file(path, jobs=3)["waits-not-held"] == [REASON]


def test_a_premise_step_that_did_not_apply_makes_the_run_unknown_too() -> None:
    """A ``reconfigure`` that timed out partway: the script's later faults ran on a
    cluster it had not fully set up, so what was found (still listed) proves less
    than the scenario claims, and what was not found proves nothing."""
    assert check_history(reconfigured(None).ops)["valid"] is True
    assert check_history(reconfigured(None, lose=True).ops)["valid"] is False
    for lose in (False, True):
        verdict = check_history(reconfigured(CHANGE_ERROR, lose=lose).ops)
        assert verdict["valid"] == "unknown" and exit_code(verdict) == 2
        assert verdict["waits-not-held"] == [CHANGE_REASON]
        assert verdict["error"].startswith(CHANGE_REASON)
    assert ("lost-write" in
            check_history(reconfigured(CHANGE_ERROR, lose=True).ops)["bad-anomaly-types"])


def test_a_restore_that_failed_is_not_a_premise() -> None:
    """The heal putting a config back is not what the script relied on."""
    h = reconfigured(None)
    h.add("nemesis", "invoke", "restore-config", None)
    h.add("nemesis", "info", "restore-config", {"restored": {}, "after": {}},
          error={"topic t0": "TimeoutError: x"})
    assert check_history(h.ops)["valid"] is True
