"""wait_until: returns the first truthy value; on timeout names the last error."""

from __future__ import annotations

import pytest

from cluster.wait import WaitTimeout, wait_until


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_returns_first_truthy_value() -> None:
    clock = FakeClock()
    answers = iter([None, 0, "yes"])
    assert (
        wait_until(lambda: next(answers), timeout_s=10, message="x", clock=clock, sleep=clock.sleep)
        == "yes"
    )


def test_timeout_reports_last_error() -> None:
    clock = FakeClock()

    def boom() -> None:
        raise RuntimeError("connection refused")

    with pytest.raises(WaitTimeout, match="broker up: not true after 5s; last error: connection"):
        wait_until(boom, timeout_s=5, message="broker up", clock=clock, sleep=clock.sleep)
    assert clock.now >= 5
