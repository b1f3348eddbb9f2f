"""Did the run test anything? Coverage figures computed from a history.

A VALID verdict on a cluster that accepted no write while faults were in force
proves nothing. These figures say how much the run really exercised:

- **acknowledged sends**, in total and per second of the main phase;
- **live seconds**: the share of the main phase's seconds (1-second bins from
  its start) in which at least one send was acknowledged;
- per fault kind: how long it was in force, how many sends were acknowledged
  while it was, and the live share of the seconds it covered; and the same
  figures for the seconds in which *any* fault was in force (``in_faults``: a
  union, so overlapping faults count once), from which the seconds outside
  faults follow (``outside_faults``);
- per heal inside the main phase: the time from the heal to the first
  acknowledged send after it (how long the cluster took to recover, as a
  client sees it);
- acknowledged commits (``commits``, docs/HISTORY-GROUPS.md), in all and from the
  first fault's start to the last fault's end (``at_risk``);
- the fault starts that failed (``failed_starts``: their completion records an
  ``error``), and the heals inside the main phase that failed (``failed_heals``), without
  either of which a fault script did not run as written;
- the final heal (``final_heal``): the heals at or after the main phase's end
  (``--time-limit``), when clients no longer send, so they have no "next
  acknowledged send"; instead, how long after the end the last of them
  completed, and when the recovery wait that follows them saw the cluster
  recovered.

The main phase ends at ``--time-limit`` (the runner passes that window): the
last client ops completing and the final heal after it are not main-phase
seconds. Every figure is clipped to the window: a fault in force at the end
counts up to the end, a send acknowledged after it counts in no fault.

A fault is *in force* from the completion of the op that started it to the
invoke of the op that stopped it (conservative on both ends: a send
acknowledged during that window was acknowledged while the fault held). A start
op that holds its fault while it runs and records how long (``"duration-s"`` in
its completion: a ``strobe-clock`` flips the clock until it returns) is in force
from its invoke: counted from its completion, a 10 s strobe followed at once by
its reset was in force for 0 s and "no send acknowledged" while it was. A start
whose completion carries an ``error``, or that the nemesis withheld (``"withheld":
true``: it would have taken the quorum with the faults already in force),
applied nothing, so it opens no window.

Pure: a list of ops in, plain JSON-able data out. The runner, the report and
``insync analyze`` use the same function, so they can never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.base.waits import AWAIT_RECOVERY

NS = 1_000_000_000
#: Below this live share a VALID run says its coverage was poor.
POOR_LIVE_SHARE = 0.6

Window = tuple[int, int]


@dataclass(frozen=True)
class _Fault:
    label: str
    start_ns: int
    stop_ns: int | None  # None: still in force when the history ended


def acked_sends(op: Mapping[str, Any]) -> int:
    """Sends acknowledged by a completion (0 unless it is an ``ok`` send or txn)."""
    if op.get("type") != "ok" or op.get("f") not in ("send", "txn"):
        return 0
    return sum(1 for m in op.get("value") or () if m and m[0] == "send")


def acked_commits(op: Mapping[str, Any]) -> int:
    """Commits acknowledged by a completion: the keys of its commit micro-ops that hold
    offsets, in an ``ok`` op (docs/HISTORY-GROUPS.md: a commit's outcome is its op's)."""
    if op.get("type") != "ok":
        return 0
    return sum(len(m[1]) for m in op.get("value") or ()
               if isinstance(m, list | tuple) and len(m) > 1 and m[0] == "commit"
               and isinstance(m[1], Mapping))


def slim(op: Mapping[str, Any]) -> dict[str, Any]:
    """``op`` cut to the fields these figures read, so a long history's ops fit in memory
    (the report and ``insync analyze`` compute coverage of old runs from the file)."""
    out = {k: op[k] for k in ("process", "type", "f", "time", "error") if k in op}
    # a nemesis value says whether a start applied (``withheld``) and held (``duration-s``)
    if op.get("process") == "nemesis" and "value" in op:
        out["value"] = op["value"]
    elif sends := acked_sends(op):  # only their number is read: one shared marker each
        out["value"] = [_SEND] * sends
    if acked_commits(op):  # a few keys each: kept as they are
        out["value"] = [*out.get("value", ()),
                        *(m for m in op["value"] if isinstance(m, list | tuple) and m
                          and m[0] == "commit")]
    return out


#: What ``slim`` leaves of each acknowledged send: 8 bytes a send, not its key and value.
_SEND = ("send",)


def _ack_times(ops: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    return [(int(op["time"]), n) for op in ops if (n := acked_sends(op))]


def _faults(ops: Sequence[Mapping[str, Any]], spans: Mapping[str, tuple[str, str]]) -> list[_Fault]:
    """Each fault window, from its start's completion (its invoke, for a start that
    held the fault for a ``"duration-s"`` while it ran) to its stop's invoke."""
    starts = {start: label for label, (start, _stop) in spans.items()}
    stops: dict[str, list[str]] = {}
    for label, (_start, stop) in spans.items():
        stops.setdefault(stop, []).append(label)
    open_: dict[str, int] = {}
    invoked: dict[str, int] = {}  # the nemesis runs one op at a time
    out: list[_Fault] = []
    for op in ops:
        if op.get("process") != "nemesis":
            continue
        f, kind, t = op.get("f"), op.get("type"), int(op.get("time", 0))
        if kind == "invoke" and isinstance(f, str):
            invoked[f] = t
        if f in starts and kind != "invoke" and _applied(op):
            value = op.get("value")
            held = isinstance(value, dict) and "duration-s" in value
            open_.setdefault(starts[f], invoked.get(f, t) if held else t)
        elif f in stops and kind == "invoke":
            for label in stops[f]:
                if label in open_:
                    out.append(_Fault(label, open_.pop(label), t))
    out += [_Fault(label, t, None) for label, t in open_.items()]
    return sorted(out, key=lambda x: (x.start_ns, x.label))


def _applied(op: Mapping[str, Any]) -> bool:
    """Whether a start op did something: not an error, not withheld by the nemesis."""
    value = op.get("value")
    return "error" not in op and not (isinstance(value, dict) and value.get("withheld"))


def _heals(ops: Sequence[Mapping[str, Any]], spans: Mapping[str, tuple[str, str]]) -> list[Any]:
    stop_fs = {stop for _start, stop in spans.values()}
    return [
        op for op in ops
        if op.get("process") == "nemesis" and op.get("type") != "invoke" and op.get("f") in stop_fs
    ]


def default_window(ops: Sequence[Mapping[str, Any]]) -> Window:
    """First to last client op, for histories that do not say where the main phase was."""
    times = [int(op["time"]) for op in ops if op.get("process") != "nemesis"]
    return (min(times), max(times)) if times else (0, 0)


def until_limit(window: Window | None, limit_s: float | None) -> Window | None:
    """A main phase's window cut at ``limit_s`` seconds after its start (``--time-limit``);
    a phase that ended sooner (a fault script's tail) keeps its end."""
    if window is None or limit_s is None:
        return window
    start, end = window
    return start, min(end, start + round(limit_s * NS))


def coverage(
    ops: Iterable[Mapping[str, Any]],
    spans: Mapping[str, tuple[str, str]],
    main: Window | None = None,
) -> dict[str, Any]:
    """Coverage of one history; ``main`` is the main phase in history nanoseconds."""
    rows = list(ops)
    start, end = main if main is not None else default_window(rows)
    end = max(end, start)
    acks = _ack_times(rows)
    in_main = [(t, n) for t, n in acks if start <= t < end]
    bins = math.ceil((end - start) / NS)
    live = {(t - start) // NS for t, _n in in_main}
    faults = [f for f in _faults(rows, spans) if f.start_ns < end]
    heals = _heals(rows, spans)
    main_s = (end - start) / NS
    return {
        "main_s": round(main_s, 3),
        "acked_sends": sum(n for _t, n in acks),
        "acked_sends_main": sum(n for _t, n in in_main),
        "acked_per_s": round(sum(n for _t, n in in_main) / main_s, 1) if main_s > 0 else 0.0,
        "seconds": bins,
        "live_seconds": len(live),
        "live_share": round(len(live) / bins, 3) if bins else 0.0,
        "faults": _per_kind(faults, acks, spans, (start, end), live),
        "in_faults": _figures(_windows(faults, end), acks, (start, end), live),
        "recoveries": _recoveries(
            [h for h in heals if start <= int(h["time"]) < end], acks, start
        ),
        "final_heal": _final_heal(rows, [h for h in heals if int(h["time"]) >= end], end),
        "commits": _commits(rows, faults, (start, end)),
        **failed_steps(rows, spans, (start, end)),
    }


def failed_steps(rows: Sequence[Mapping[str, Any]], spans: Mapping[str, tuple[str, str]],
                 main: Window) -> dict[str, list[dict[str, Any]]]:
    """``failed_starts`` and ``failed_heals`` of a history's ops (its nemesis ops are
    enough) over the main phase ``main``: the coverage block's, and what
    ``results.run_coverage.with_failed_steps`` adds to a stored block older than them."""
    start, end = main
    return {"failed_starts": _failed(rows, {s for s, _stop in spans.values()}, start),
            "failed_heals": _failed(rows, {stop for _s, stop in spans.values()}, start, end)}


def _failed(rows: Sequence[Mapping[str, Any]], fs: set[str], start: int,
            end: int | None = None) -> list[dict[str, Any]]:
    """The nemesis ops named ``fs`` (fault starts, or heals before ``end``) whose
    completion records an ``error``: each did nothing the run can count on, so a fault
    script that asked for it did not run as written (``harness.scenario.runs.failed_steps``).
    A heal at or after the main phase's end is the final heal's (``final_heal``), not the
    script's. ``at_s`` is from the main phase's start."""
    return [{"f": op["f"], "at_s": round((int(op.get("time", 0)) - start) / NS, 1),
             "error": str(op["error"])[:200]}
            for op in rows
            if op.get("process") == "nemesis" and op.get("type") != "invoke"
            and op.get("f") in fs and op.get("error")
            and (end is None or int(op.get("time", 0)) < end)]


def _commits(rows: Sequence[Mapping[str, Any]], faults: Sequence[_Fault],
             main: Window) -> dict[str, int]:
    """Acknowledged commits: in all, and ``at_risk``, those acknowledged in the main phase
    from the first fault's start to the last fault's end. A commit acknowledged only
    after every fault ended is one no fault could have lost or moved back, so a group
    run with none at risk tested nothing (``harness.scenario.runs.untested``)."""
    start, end = main
    times = [(int(op["time"]), n) for op in rows if (n := acked_commits(op))]
    windows = _windows(faults, end)
    first, last = (max(windows[0][0], start), min(windows[-1][1], end)) if windows else (0, 0)
    return {"acked": sum(n for _t, n in times),
            "at_risk": sum(n for t, n in times if first <= t < last)}


def _windows(faults: Iterable[_Fault], end: int) -> list[Window]:
    """The faults' windows merged where they overlap (one still in force runs to ``end``)."""
    merged: list[Window] = []
    for a, b in sorted((f.start_ns, f.stop_ns if f.stop_ns is not None else end) for f in faults):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _figures(
    windows: Sequence[Window], acks: Sequence[tuple[int, int]], main: Window, live: set[int]
) -> dict[str, Any]:
    """In force, acknowledged sends and live seconds over disjoint ``windows``, each
    clipped to ``main``."""
    start, end = main
    windows = [(max(a, start), min(b, end)) for a, b in windows if a < end and b > start]
    bins = math.ceil((end - start) / NS)
    sent = sum(n for t, n in acks if any(a <= t < b for a, b in windows))
    # a second of the main phase is "in a fault" when its middle is
    covered = [b for b in range(bins)
               if any(a <= start + b * NS + NS // 2 < z for a, z in windows)]
    return {
        "in_force_s": round(sum(b - a for a, b in windows) / NS, 3),
        "acked_sends": sent,
        "seconds": len(covered),
        "live_seconds": sum(1 for b in covered if b in live),
    }


def _per_kind(
    faults: Sequence[_Fault],
    acks: Sequence[tuple[int, int]],
    spans: Mapping[str, tuple[str, str]],
    main: Window,
    live: set[int],
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for label in spans:
        mine = [f for f in faults if f.label == label]
        if mine:
            out[label] = {"count": len(mine),
                          **_figures(_windows(mine, main[1]), acks, main, live)}
    return out


def outside_faults(cov: Mapping[str, Any]) -> dict[str, int]:
    """Seconds of the main phase with no fault in force, and how many of them were live."""
    inside = cov.get("in_faults") or {}
    return {
        "seconds": int(cov.get("seconds", 0)) - int(inside.get("seconds", 0)),
        "live_seconds": int(cov.get("live_seconds", 0)) - int(inside.get("live_seconds", 0)),
    }


def _recoveries(
    heals: Sequence[Mapping[str, Any]], acks: Sequence[tuple[int, int]], start: int
) -> list[dict[str, Any]]:
    times = sorted(t for t, _n in acks)
    out = []
    for heal in heals:
        t = int(heal["time"])
        first = next((a for a in times if a >= t), None)
        out.append({
            "f": heal.get("f"),
            "healed_at_s": round((t - start) / NS, 3),
            "first_ack_after_s": None if first is None else round((first - t) / NS, 3),
        })
    return out


def _final_heal(
    ops: Sequence[Mapping[str, Any]], heals: Sequence[Mapping[str, Any]], end: int
) -> dict[str, Any] | None:
    """The heals at or after ``end`` and the recovery wait after them, timed from ``end``;
    None when nothing was healed there."""
    if not heals:
        return None
    last = max(int(h["time"]) for h in heals)
    wait = next((op for op in ops if op.get("process") == "nemesis"
                 and op.get("f") == AWAIT_RECOVERY and op.get("type") != "invoke"
                 and int(op.get("time", 0)) >= last), None)
    value = wait.get("value") if wait is not None else None
    recovered = isinstance(value, dict) and value.get("recovered") is True
    return {
        "heals": [h.get("f") for h in heals],
        "healed_after_s": round((last - end) / NS, 3),
        "recovered_after_s": round((int(wait["time"]) - end) / NS, 3)
        if wait is not None and recovered else None,
    }


def final_heal_words(final: Any) -> str | None:
    """The final heal in a few words, for the run's summary and its report; None without one."""
    if not isinstance(final, Mapping) or not final.get("heals"):
        return None
    recovered = final.get("recovered_after_s")
    return (f"final heal at the time limit ({', '.join(map(str, final['heals']))}): done "
            f"{float(final.get('healed_after_s') or 0):.1f}s after it, cluster "
            + ("not seen recovered" if recovered is None
               else f"recovered {float(recovered):.1f}s after it"))


def poor_coverage(cov: Mapping[str, Any]) -> str | None:
    """One line saying what a run failed to exercise and what to change, or None."""
    problems = []
    share = cov.get("live_share", 0.0)
    if cov.get("seconds") and share < POOR_LIVE_SHARE:
        problems.append(
            f"only {share:.0%} of the main phase's seconds saw an acknowledged send"
        )
    # a kind in force for less than a second (started and stopped at once) proves nothing
    dead = sorted(k for k, v in (cov.get("faults") or {}).items()
                  if v.get("seconds") and not v.get("acked_sends"))
    if dead:
        problems.append(f"no send was acknowledged while {', '.join(dead)} was in force")
    if not problems:
        return None
    return (
        "coverage is poor: " + "; ".join(problems) + " (the verdict says little about those "
        "faults: target fewer nodes, e.g. --nemesis-targets one,minority, lengthen "
        "--nemesis-interval so the cluster recovers between faults, or lengthen --time-limit)"
    )
