"""The public names of ``checkers`` are a contract with the rest of insync."""

from __future__ import annotations

import checkers


def test_public_names_are_pinned() -> None:
    assert sorted(checkers.__all__) == [
        "ANOMALY_TYPES",
        "DEFAULT_CYCLE_BUDGET_S",
        "REWIND_CLASSES",
        "anomaly_ops",
        "check",
        "check_file",
        "check_history",
        "describe_rewinds",
        "describe_stall",
        "exit_code",
        "read_stalls_in",
        "render_verdict",
        "unread_intervals",
        "without_drain",
    ]
    for name in checkers.__all__:
        assert getattr(checkers, name) is not None


def test_every_type_of_the_contract_is_known() -> None:
    assert set(checkers.ANOMALY_TYPES) == {
        "lost-write", "unseen", "duplicate", "inconsistent-offsets", "nonmonotonic-send",
        "int-nonmonotonic-send", "int-send-skip", "poll-skip", "nonmonotonic-poll",
        "int-poll-skip", "int-nonmonotonic-poll", "G1a", "precommitted-read", "garbage-read",
        "G0", "G1c", "lost-commit", "commit-skip", "garbage-commit", "duplicate-output",
        "missing-output",
    }
