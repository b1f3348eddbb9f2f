"""Which anomaly types need the drain, and how a run directory says whether its drain finished.

The registry of anomaly types (``harness.base.contract``) says which ones need it;
this module holds what a run records about its drain.

The drain (the last phase) reads every key again from the beginning. Some anomaly
types are proven only by that re-read: ``unseen`` says an acknowledged value was
never read *by the end of the run*, which means nothing when the end never came
(a signal, an error, a killed process). Every other type is proven by what the
history already holds, whatever came after: a ``lost-write`` sits at or below a
position some read reached, a ``duplicate`` or ``inconsistent-offsets`` is two
records some read returned, a ``G1a`` is a read of an aborted value, and the
order and cycle types compare ops that both happened.

A run records the fact in its ``test.json`` (results/LAYOUT.md): ``drain_finished``
is written ``false`` when the run starts and ``true`` once the drain phase ran to
its end, so a run cut short in any way (even SIGKILL) says so. ``insync check`` of
that run directory then judges the history as the run itself did; a bare history,
or a run directory from an insync that did not record it, is judged in full.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.base.contract import needing_drain

#: Anomaly types whose proof needs the drain to have read everything again: the
#: registry's ``AnomalyType.needs_drain`` (``harness.base.contract``), as of import.
NEEDS_DRAIN: frozenset[str] = frozenset(needing_drain())

#: The test.json field (bool) that records whether the drain ran to its end.
DRAIN_FIELD = "drain_finished"

#: What a verdict says about the types it could not judge.
CUT_SHORT = "the run was cut short"


def drain_finished(test: Mapping[str, Any] | None) -> bool | None:
    """What a run's test.json says about its drain: True, False, or None (not recorded)."""
    if not isinstance(test, Mapping):
        return None
    value = test.get(DRAIN_FIELD)
    return value if isinstance(value, bool) else None
