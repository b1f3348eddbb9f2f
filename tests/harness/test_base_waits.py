"""The one rule for "a scripted wait did not hold", and the reason the verdict gives."""

from __future__ import annotations

from typing import Any

import pytest

from harness.base.faults import all_fs, kind_of
from harness.base.waits import AWAIT_STATE, CONDITIONS, not_applied, not_held


def done(value: Any, **extra: Any) -> dict[str, Any]:
    return {"process": "nemesis", "type": "info", "f": AWAIT_STATE, "value": value, **extra}


@pytest.mark.parametrize(("op", "reason"), [
    (done({"until": "left-isr", "key": "t0-1", "node": "followers:t0-1", "timeout-s": 20,
           "step": 2, "held": False}),
     "step 2: wait left-isr t0-1 followers:t0-1 did not hold within 20 s"),
    (done({"until": "recovered", "timeout-s": 7.5, "step": 5, "held": False}),
     "step 5: wait recovered did not hold within 7.5 s"),
    (done({"until": "leader-changed", "key": "t0-0", "held": False}),
     "wait leader-changed t0-0 did not hold in time"),
    (done(None, error="boom"), "wait ? did not hold in time (boom)"),
], ids=["with-node", "recovered", "no-step-no-timeout", "no-value"])
def test_the_reason_names_the_step_and_what_it_waited_for(op: dict[str, Any],
                                                         reason: str) -> None:
    assert not_held(op) == reason


@pytest.mark.parametrize("op", [
    done({"until": "isr-is-leader", "key": "t0-0", "held": True}),
    {**done({"until": "isr-is-leader", "key": "t0-0"}), "type": "invoke"},
    {"process": "nemesis", "type": "info", "f": "await-recovery", "value": {"recovered": False}},
    {"process": "nemesis", "type": "info", "f": "kill", "value": {"held": False}},
], ids=["held", "invoke", "await-recovery", "other-op"])
def test_only_an_await_state_completion_without_held_true_counts(op: dict[str, Any]) -> None:
    assert not_held(op) is None


def test_await_state_is_no_fault_kind_so_it_opens_no_fault_window() -> None:
    assert kind_of(AWAIT_STATE) is None and AWAIT_STATE not in all_fs()
    assert list(CONDITIONS) == ["isr-is-leader", "left-isr", "in-isr", "leader-changed",
                                "leader-is", "recovered"]


def test_only_a_premise_start_that_failed_did_not_apply() -> None:
    base = {"f": "reconfigure", "value": {"resources": ["topic t0"]}}
    assert not_applied({**base, "type": "invoke"}) is None
    assert not_applied({**base, "type": "ok"}) is None
    assert not_applied({**base, "type": "info", "error": "KafkaException: refused"}) == (
        "reconfigure of topic t0 did not apply (KafkaException: refused)")
    assert not_applied({**base, "type": "fail", "error": {"topic t0": "x", "topic t1": "y"}}) == (
        "reconfigure of topic t0 did not apply (topic t0: x; topic t1: y)")
    assert not_applied({"f": "reconfigure", "type": "info"}) is None  # how every op completes
    assert not_applied({"f": "reconfigure", "type": "info", "error": "x"}) == (
        "reconfigure of its resources did not apply (x)")
    assert not_applied({"f": "kill", "type": "info", "error": "x"}) is None  # not a premise
    assert not_applied({"f": "restore-config", "type": "info", "error": "x"}) is None
