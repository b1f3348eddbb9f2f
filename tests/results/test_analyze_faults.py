"""Which ops the analysis counts as opening and healing a fault: every registered one, nothing else.

``fault_delta`` (a Spark column) opens on ``start-*`` or ``STARTS`` and heals on
``stop-*`` or ``STOPS``; this checks those lists against the fault-kind
registry without starting Spark.
"""

from __future__ import annotations

import pytest

from harness.base.faults import FAULT_KINDS, FaultKind, all_fs
from results.analysis.analyze import STARTS, STOPS


def delta(f: str) -> int:
    """``fault_delta``'s rule, in plain Python."""
    if f.startswith("start-") or f in STARTS:
        return 1
    if f.startswith("stop-") or f in STOPS:
        return -1
    return 0


@pytest.mark.parametrize("kind", FAULT_KINDS, ids=lambda k: k.name)
def test_every_start_opens_and_the_stop_heals(kind: FaultKind) -> None:
    assert [delta(f) for f in kind.starts] == [1] * len(kind.starts)
    assert delta(kind.stop) == -1


def test_only_registered_ops_are_listed() -> None:
    assert set(STARTS) | set(STOPS) <= all_fs()
    assert "freeze-clock" in STARTS and "strobe-clock" in STARTS
    assert delta("heal") == 0 and delta("compact-logs") == 0
