"""Driving ``insync matrix``: run what is not done, fold the verdicts, report progress.

The exit status folds every verdict (0 all valid, 1 any invalid, 2 any
unknown). A grid with no valid combination is the ``UsageError`` of its
reason. The cluster is removed at the end only if one of this matrix's runs
brought it up (the provisioner's ``up`` returned it): a matrix that fails
before that leaves a same-named cluster alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cluster.lock import cluster_locks
from cluster.model import NotReady
from harness.base.errors import InsyncError, UsageError
from harness.matrix.axes import Matrix
from harness.matrix.grid import Combination, expand, order, rebuilds
from harness.matrix.resume import changed_runs, done_runs, mark, not_reused
from harness.run.options import RunOptions

# -- progress ------------------------------------------------------------------------------


def duration(seconds: float) -> str:
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s" if m else f"{sec}s"


def progress(done: int, total: int, durations: Sequence[float]) -> str:
    """``runs: 3 done, 5 left; ETA 6m15s (mean 75s per run)``."""
    left = total - done
    if not durations:
        eta = "ETA unknown (no run finished yet)"
    else:
        mean = sum(durations) / len(durations)
        eta = f"ETA {duration(mean * left)} (mean {duration(mean)} per run)"
    return f"runs: {done} done, {left} left; {eta}"


# -- the driver ----------------------------------------------------------------------------


class RunFn(Protocol):
    """``harness.run.run``'s shape; ``on_cluster(name)`` once the run owns that cluster."""

    def __call__(
        self,
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = ...,
        on_cluster: Callable[[str], None] | None = ...,
    ) -> Any: ...


@dataclass
class Tally:
    """The verdicts of one combination."""

    runs: int = 0
    valid: int = 0
    invalid: int = 0
    unknown: int = 0
    lost_writes: int = 0

    def add(self, verdict: Mapping[str, Any]) -> None:
        self.runs += 1
        v = verdict.get("valid")
        if v is True:
            self.valid += 1
        elif v is False:
            self.invalid += 1
        else:
            self.unknown += 1
        self.lost_writes += lost_writes(verdict)


def with_run(result: Any) -> dict[str, Any]:
    """A fresh run's verdict with its ``run`` block, as results.json holds them (and as a
    finished run found on disk is read back)."""
    return {**result.verdict, "run": getattr(result, "summary", {}) or {}}


def lost_writes(verdict: Mapping[str, Any]) -> int:
    counts = verdict.get("anomaly-counts") or {}
    if "lost-write" in counts:
        return int(counts["lost-write"])
    found = (verdict.get("anomalies") or {}).get("lost-write")
    return len(found) if isinstance(found, list) else 0


@dataclass
class Outcome:
    tallies: dict[str, Tally] = field(default_factory=dict)
    ran: int = 0
    resumed: int = 0
    #: Every run's verdict (stored before or run now): combination -> run number -> verdict.
    verdicts: dict[str, dict[int, Mapping[str, Any]]] = field(default_factory=dict)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        if any(t.invalid for t in self.tallies.values()):
            return 1
        if any(t.unknown for t in self.tallies.values()):
            return 2
        return 0


def summary(outcome: Outcome) -> str:
    """The table printed at the end."""
    rows: list[tuple[str, ...]] = [
        ("combination", "runs", "valid", "invalid", "unknown", "lost writes")
    ]
    for name, t in outcome.tallies.items():
        rows.append(
            (name, *(str(n) for n in (t.runs, t.valid, t.invalid, t.unknown, t.lost_writes)))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in rows
    ]
    word = {0: "all valid", 1: "INVALID runs", 2: "UNKNOWN runs (none invalid)"}
    lines.append(
        f"matrix: {word[outcome.exit_code]}; {outcome.ran} run now, {outcome.resumed} done before"
    )
    return "\n".join(lines)


#: Called after each new run is stored and marked: (result, combination, run number).
AfterRun = Callable[[Any, Combination, int], None]


def drive(
    matrix: Matrix,
    *,
    run_fn: RunFn,
    say: Callable[[str], None] = print,
    down: Callable[[str], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """Run every (combination, run number) not done yet; tear the cluster down at the end.

    Only a cluster one of these runs owned (``on_cluster``) is torn down.
    """
    combos, skipped = expand(matrix)
    if not combos:  # bad input, not a bad corner of the grid: one line, nothing started
        reasons = sorted({s.reason for s in skipped})
        if len(reasons) == 1:
            raise UsageError(reasons[0])
        raise UsageError(
            f"no valid combination in the matrix; first: {skipped[0].reason}",
            hint="change the axes so that at least one combination can run",
        )
    for s in skipped:
        say(f"skipping {s.name}: {s.reason}")
    return run_combinations(order(combos), matrix.runs, keep_cluster=matrix.keep_cluster,
                            run_fn=run_fn, say=say, down=down, clock=clock)


def run_combinations(
    combos: Sequence[Combination],
    runs: int,
    *,
    keep_cluster: bool,
    run_fn: RunFn,
    say: Callable[[str], None] = print,
    down: Callable[[str], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
    after: AfterRun | None = None,
    label: str = "matrix",
) -> Outcome:
    """Run ``runs`` runs of each combination (in the order given), skipping those stored
    and complete (the resume rule, ``harness.matrix.resume``); ``after`` sees each new
    run once it is marked. ``insync catalogue`` and ``insync scenario run`` drive their
    runs through here too, so there is one resume machine. The cluster names of the
    runs to run are held (``cluster.lock``) from the plan line to the last teardown;
    with nothing to run, nothing is held.
    """
    outcome = Outcome()
    todo: list[tuple[Combination, int]] = []
    for c in combos:
        tally = outcome.tallies.setdefault(c.name, Tally())
        finished = done_runs(c.opts.results_dir, c)
        changed = changed_runs(c.opts.results_dir, c)
        if changed:
            say(not_reused(c.name, changed))
        for k in range(1, runs + 1):
            if k in finished:
                tally.add(finished[k].verdict)
                outcome.verdicts.setdefault(c.name, {})[k] = finished[k].verdict
                outcome.resumed += 1
                say(f"done before: {c.name} run {k} ({finished[k].path})")
            else:
                todo.append((c, k))
    total = len(combos) * runs
    # Held from here to the last teardown: no other command may use these clusters meanwhile.
    with cluster_locks(c.opts.cluster_name for c, _ in todo):
        say(
            f"{label}: {len(combos)} combination(s) x {runs} run(s) = {total}; "
            f"{outcome.resumed} already done, {len(todo)} to run; "
            f"{rebuilds([c for c, _ in todo])} cluster spec change(s)"
        )
        durations: list[float] = []
        owned: list[str] = []

        def own(name: str) -> None:
            if name not in owned:
                owned.append(name)

        try:
            for i, (c, k) in enumerate(todo, 1):
                say(f"[{i}/{len(todo)}] {c.name} run {k}/{runs}")
                t0 = clock()
                try:
                    result = run_fn(c.opts, say=say, on_cluster=own)
                except NotReady as err:  # owned: the teardown below removes it, unless kept
                    if down is not None and not keep_cluster:
                        err.settle(removed=True)
                    raise
                durations.append(clock() - t0)
                mark(result, c, k)
                stopped = bool(getattr(result, "interrupted", False))
                # A stopped run is not a finished one: resuming runs it again, so it joins
                # neither the tallies nor the table (a catalogue stopped mid-run counted its
                # undrained history, "unseen", as a control that failed).
                if after is not None and not stopped:
                    after(result, c, k)
                if not stopped:
                    outcome.tallies[c.name].add(result.verdict)
                    outcome.verdicts.setdefault(c.name, {})[k] = with_run(result)
                outcome.ran += 1
                word = "interrupted" if stopped else {True: "valid", False: "INVALID"}.get(
                    result.verdict.get("valid"), "unknown")
                say(
                    f"[{i}/{len(todo)}] {c.name} run {k}: {word} "
                    f"({duration(durations[-1])}) -> {result.run_dir.path}"
                )
                say(progress(outcome.resumed + outcome.ran, total, durations))
                if stopped:
                    outcome.interrupted = True
                    say(f"{label} interrupted: the same command resumes it")
                    break
        finally:
            if down is not None and not keep_cluster:
                for name in owned:
                    try:
                        down(name)
                        say(f"removed cluster {name!r}")
                    except InsyncError as err:
                        say(f"could not remove cluster {name!r}: {err.one_line()}")
    return outcome
