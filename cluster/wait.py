"""The one polling primitive: wait until a predicate holds, or say why not.

Modelled on ducktape's ``wait_until``: on timeout the error names what was
awaited, for how long, and the last exception the predicate raised, which is
nearly always the real reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from harness.base.errors import ClusterError

T = TypeVar("T")


class WaitTimeout(ClusterError):
    """A condition did not hold within its time limit."""


def wait_until(
    predicate: Callable[[], T | None],
    *,
    timeout_s: float,
    backoff_s: float = 0.25,
    message: str,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call ``predicate`` until it returns something truthy; return that value.

    Exceptions raised by the predicate count as "not yet" and the last one is
    reported if time runs out.
    """
    deadline = clock() + timeout_s
    last_error: BaseException | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as err:  # the predicate's failures mean "not yet"
            last_error = err
        if clock() >= deadline:
            why = f"; last error: {last_error}" if last_error else ""
            raise WaitTimeout(f"{message}: not true after {timeout_s:.0f}s{why}")
        sleep(backoff_s)
