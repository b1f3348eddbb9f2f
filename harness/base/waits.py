"""A fault script's waits for cluster state, as the history records them: ``await-state``.

A scripted wait (``nemesis.schedule``: ``wait = "isr-is-leader"``) is one
nemesis op pair in the history::

    invoke  {"f": "await-state", "value": {"until": "isr-is-leader", "key": "t0-0",
                                           "timeout-s": 30, "step": 3}}
    info    {"f": "await-state", "value": {..., "held": false, "seconds": 30.0,
                                           "polls": 31, "observed": {"leader": "n1",
                                                                     "isr": ["n1", "n2"]}}}

The nemesis writes it (``nemesis.waits``), the script's generator stops at a
wait that did not hold, and the checker turns such a completion into
``valid: "unknown"``. Those three live on different floors and must agree on
the op's name and on what "did not hold" means, so both are here, on the
ground floor, once: :func:`not_held` is the one rule, and it words the reason
the verdict gives.

A script may also rest on a change it makes: a ``reconfigure`` step lowers
``min.insync.replicas`` so that a later fault can lose writes. Such a start
(``FaultKind.premise``) whose completion records an ``error`` did not apply, or
applied only in part, so the script did not run as written either:
:func:`not_as_written` is the one rule for both, and the verdict lists its
reasons in ``waits-not-held``.

``await-state`` is not a fault kind (no entry in ``harness.base.faults``): it
opens and closes no fault window in spans, coverage or reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.base.faults import premise_fs

#: The nemesis op of a scripted wait.
AWAIT_STATE = "await-state"
#: The nemesis op that waits for the cluster to recover after heals (``nemesis.recovery``);
#: its completion says ``"recovered"``.
AWAIT_RECOVERY = "await-recovery"

#: The conditions a wait may name, and whether each needs ``key`` and ``node``.
CONDITIONS: Mapping[str, tuple[bool, bool]] = {
    "isr-is-leader": (True, False),
    "left-isr": (True, True),
    "in-isr": (True, True),
    "leader-changed": (True, False),
    "leader-is": (True, True),
    "recovered": (False, False),
}


def describe(value: Mapping[str, Any]) -> str:
    """``step 3: wait isr-is-leader t0-0`` for a wait's value (whatever it lacks left out)."""
    parts = ["wait", str(value.get("until", "?"))]
    parts += [str(value[k]) for k in ("key", "node") if value.get(k) is not None]
    step = value.get("step")
    return f"step {step}: {' '.join(parts)}" if step is not None else " ".join(parts)


def not_held(op: Mapping[str, Any]) -> str | None:
    """Why the script behind ``op`` did not run as written, if ``op`` says so; else None.

    Only an ``await-state`` completion can say so: one whose value does not
    record ``"held": true`` (it timed out, was cut short by the end of the main
    phase, or failed and recorded an error instead).
    """
    if op.get("f") != AWAIT_STATE or op.get("type") in (None, "invoke"):
        return None
    value = op.get("value")
    value = value if isinstance(value, Mapping) else {}
    if value.get("held") is True:
        return None
    seconds = value.get("timeout-s")
    within = f"within {seconds:g} s" if isinstance(seconds, int | float) else "in time"
    reason = f"{describe(value)} did not hold {within}"
    if value.get("cut-short"):
        reason += f" (cut short after {value.get('seconds', '?')} s: the main phase ended)"
    error = op.get("error")
    if error:
        reason += f" ({error})" if isinstance(error, str) else f" ({error!r})"
    return reason


def not_applied(op: Mapping[str, Any]) -> str | None:
    """Why the premise step behind ``op`` did not apply, if ``op`` is the completion of
    a ``FaultKind.premise`` start that records an error; else None."""
    if op.get("f") not in premise_fs() or op.get("type") in (None, "invoke"):
        return None
    error = op.get("error")
    if not error:  # a nemesis completes every op info; only an error says it did not apply
        return None
    value = op.get("value")
    value = value if isinstance(value, Mapping) else {}
    what = ", ".join(str(r) for r in value.get("resources") or []) or "its resources"
    why = (error if isinstance(error, str)
           else "; ".join(f"{k}: {v}" for k, v in error.items()) if isinstance(error, Mapping)
           else repr(error))
    return f"{op.get('f')} of {what} did not apply ({why})"


def not_as_written(op: Mapping[str, Any]) -> str | None:
    """Why the fault script did not run as written, if ``op`` shows it: a wait that did
    not hold (:func:`not_held`) or a premise step that did not apply (:func:`not_applied`)."""
    return not_held(op) or not_applied(op)
