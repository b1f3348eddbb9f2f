"""``insync matrix``: the same test over a grid of durability settings, resumably.

Why: "acks=1 loses data under leader kills, acks=all + min.insync=2 + no
unclean election does not" is a claim about a *grid*, checked every night over
many runs and Kafka versions. This module expands the grid, drops combinations
that cannot work, orders the rest so the cluster is rebuilt as rarely as
possible, skips runs a previous (interrupted) matrix already finished, and
folds the verdicts into one exit status and a summary table.

Axes (each a list; every other ``insync run`` option is one value for all runs):

=========================  ==============================  =====================
axis                       flag (comma list)               TOML key (array)
=========================  ==============================  =====================
acks                       ``--acks 1,all``                ``acks``
min_insync                 ``--min-insync 1,2``            ``min-insync``
replication_factor         ``--replication-factor 2,3``    ``replication-factor``
unclean_leader_election    ``--unclean-leader-election``   ``unclean-leader-election``
kafka_version              ``--kafka-version 3.9.x,4.1.x`` ``kafka-version``
nemesis                    ``--nemesis kill,partition``    ``nemesis``
                           (repeat the flag for several)
=========================  ==============================  =====================

``--nemesis`` keeps ``insync run``'s meaning: ``kill,partition`` is ONE value,
both faults together. Several nemesis values come from repeating the flag
(``--nemesis kill,partition --nemesis none``) or, in TOML, from an array whose
items are fault lists: ``nemesis = ["kill,partition", "none"]`` or
``nemesis = [["kill", "partition"], ["none"]]``.

``matrix.toml``: the axes as arrays and any other ``insync run`` option as a
scalar, top level or under ``[matrix]``; ``runs`` and ``keep-cluster`` too::

    [matrix]
    acks = ["1", "all"]
    min-insync = [1, 2]
    unclean-leader-election = [true, false]
    nemesis = ["kill,partition"]
    kafka-version = ["3.9.x", "4.1.x"]
    runs = 3
    time-limit = 60

Every combination is checked before the first run starts (``setup.preflight``:
values, ranges, Kafka version and mode, files, broker keys): a value no cell
could use (an unknown version, ``nan`` seconds) is one ``UsageError`` line; a
combination that cannot work (``min-insync`` above ``replication-factor``,
ZooKeeper mode on a KRaft-only version) is skipped with its reason, and if
every one is skipped that is the error. The cluster is removed at the end only
if one of this matrix's runs brought it up (the provisioner's ``up`` returned
it): a matrix that fails before that leaves a same-named cluster alone.

Resume rule: run ``k`` of a combination is done when some
``<results-dir>/<test-name>/*/`` holds a ``test.json`` whose optional
``matrix`` block (written here after each run) names the same combination,
the same run number and the same settings (every run option but seed, name,
results dir, cluster name and teardown), and a ``results.json`` of a run
that was not interrupted. Everything else is run (again).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol

from harness.base.errors import InsyncError, UsageError
from harness.base.rundir import RESULTS, TEST, read_json, write_json
from harness.run.options import BY_NAME, RunOptions, convert, read_toml
from harness.run.setup import cluster_spec, preflight
from harness.run.values import Range, Spec, whole

#: Option names that may take several values, in the order test names spell them.
AXES = (
    "acks",
    "min_insync",
    "replication_factor",
    "unclean_leader_election",
    "nemesis",
    "kafka_version",
)
#: Options that do not make two runs different tests (resume ignores them).
NOT_SETTINGS = frozenset({"seed", "name", "results_dir", "cluster_name", "teardown"})
#: ``--runs`` / ``runs =``: runs per combination.
RUNS = Spec("runs", whole, "runs per combination (default: 1)", "N", range=Range(1, 1000))


@dataclass(frozen=True)
class Combination:
    """One point of the grid: its test name, the axis values and the full options."""

    name: str
    values: Mapping[str, Any]
    opts: RunOptions

    @property
    def cluster_key(self) -> str:
        """Runs with equal keys share a cluster (the runner reuses an equal spec)."""
        clock = "clock" in self.opts.faults  # clock faults start brokers under faketime
        return f"{cluster_spec(self.opts).to_json()}|faketime={clock}"

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in self.opts.as_dict().items() if k not in NOT_SETTINGS}


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


@dataclass(frozen=True)
class Matrix:
    """The whole request: base options, axes, runs per combination, keep the cluster."""

    base: Mapping[str, Any]
    axes: Mapping[str, list[Any]]
    runs: int = 1
    keep_cluster: bool = False


# -- input ---------------------------------------------------------------------------------


def axis_values(key: str, raw: Any, origin: str) -> list[Any]:
    """Convert one axis from flag text or a TOML array into option values."""
    spec = BY_NAME[key]
    if key == "nemesis":
        items = raw if isinstance(raw, list) else [raw]
        out = [convert({key: item}, origin)[key] for item in items]
    else:
        items = raw if isinstance(raw, list) else str(raw).split(",")
        items = [i for i in items if str(i).strip() != ""]
        out = [convert({key: item}, origin)[key] for item in items]
    if not out:
        where = f"{origin}: " if origin else ""
        raise UsageError(f"{where}{spec.flag} has no values", hint="give at least one value")
    unique: list[Any] = []
    for value in out:
        if value not in unique:
            unique.append(value)
    return unique


def split(values: Mapping[str, Any], origin: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Split raw option values into one-value options and axes (each checked now)."""
    base: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    for raw_key, raw in values.items():
        key = raw_key.replace("-", "_")
        if key in AXES:
            axes[key] = axis_values(key, raw, origin)
        else:
            base.update(convert({raw_key: raw}, origin))
    return base, axes


def read_config(path: str | Path) -> Matrix:
    """A ``matrix.toml`` (module docstring) as a :class:`Matrix`."""
    origin = f"--config {path}"
    data = read_toml(path, "matrix")
    runs = RUNS.parse(data.pop("runs", 1), f"{origin}: ")
    keep = data.pop("keep-cluster", data.pop("keep_cluster", False))
    if not isinstance(keep, bool):
        raise UsageError(
            f"{origin}: keep-cluster must be true or false, got {keep!r}", hint="fix the file"
        )
    base, axes = split(data, origin)
    return Matrix(base, axes, runs, keep)


def merge(file: Matrix | None, flags: Matrix, *, runs_given: bool, keep_given: bool) -> Matrix:
    """Flags win over the config file, axis by axis and option by option."""
    if file is None:
        return flags
    return Matrix(
        {**file.base, **flags.base},
        {**file.axes, **flags.axes},
        flags.runs if runs_given else file.runs,
        flags.keep_cluster if keep_given else file.keep_cluster,
    )


# -- the grid ------------------------------------------------------------------------------


def _word(key: str, value: Any) -> str:
    if key == "acks":
        return f"acks{value}"
    if key == "min_insync":
        return f"isr{value}"
    if key == "replication_factor":
        return f"rf{value}"
    if key == "unclean_leader_election":
        return f"unclean{str(value).lower()}"
    if key == "nemesis":
        faults = [f for f in value if f != "none"]
        return "+".join(faults) if faults else "none"
    return str(value)


def test_name(values: Mapping[str, Any], shown: Iterable[str], prefix: str = "matrix") -> str:
    """``matrix-acks1-isr2-uncleanfalse-kill+partition-4.1.x`` (only the ``shown`` axes)."""
    keep = set(shown)
    return "-".join([prefix] + [_word(k, values[k]) for k in AXES if k in keep])


def expand(matrix: Matrix) -> tuple[list[Combination], list[Skipped]]:
    """Every combination of the axes, minus the ones ``insync run`` would reject.

    Each is checked as ``insync run`` checks before it creates anything
    (``setup.preflight``), so no run of the grid can fail on its input.
    """
    base_fields = {f.name for f in fields(RunOptions)}
    base = {k: v for k, v in matrix.base.items() if k in base_fields}
    # Axes the user did not give still name the test, so the names say what ran.
    shown = [k for k in AXES if k in matrix.axes or k in ("acks", "min_insync")]
    shown += [] if "unclean_leader_election" in shown else ["unclean_leader_election"]
    shown += [] if "nemesis" in shown else ["nemesis"]
    shown += [] if "kafka_version" in shown else ["kafka_version"]
    keys = list(matrix.axes)
    good: list[Combination] = []
    skipped: list[Skipped] = []
    for combo in itertools.product(*(matrix.axes[k] for k in keys)):
        chosen = dict(zip(keys, combo, strict=True))
        opts = RunOptions(**{**base, **chosen})
        values = {k: getattr(opts, k) if k != "nemesis" else opts.nemesis or ["none"] for k in AXES}
        name = test_name(values, shown, base.get("name") or "matrix")
        opts = replace(opts, name=name, teardown=False)
        try:
            preflight(opts)
        except UsageError as err:
            skipped.append(Skipped(name, err.one_line()))
            continue
        good.append(Combination(name, values, opts))
    return good, skipped


def order(combos: Sequence[Combination]) -> list[Combination]:
    """Group by cluster spec (first appearance order) so each cluster is built once."""
    groups: dict[str, list[Combination]] = {}
    for c in combos:
        groups.setdefault(c.cluster_key, []).append(c)
    return [c for group in groups.values() for c in group]


def rebuilds(combos: Sequence[Combination]) -> int:
    """How many times the sequence changes cluster spec (the first build counts)."""
    keys = [c.cluster_key for c in combos]
    return sum(1 for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k)


# -- resume --------------------------------------------------------------------------------


def matrix_block(combo: Combination, run_no: int) -> dict[str, Any]:
    return {"combination": combo.name, "run": run_no, "settings": combo.settings()}


@dataclass(frozen=True)
class Done:
    """A finished run found on disk: where it is and its verdict."""

    path: Path
    verdict: dict[str, Any]


def done_runs(results_dir: str | Path, combo: Combination) -> dict[int, Done]:
    """Run number -> the finished stored run of ``combo`` (the resume rule)."""
    settings = combo.settings()
    out: dict[int, Done] = {}
    folder = Path(results_dir) / combo.name
    if not folder.is_dir():
        return out
    for run_dir in sorted(folder.iterdir()):
        try:
            test = read_json(run_dir / TEST)
            results = read_json(run_dir / RESULTS)
        except (OSError, ValueError):
            continue
        block = test.get("matrix")
        if not isinstance(block, dict) or block.get("combination") != combo.name:
            continue
        if block.get("settings") != settings or not isinstance(block.get("run"), int):
            continue
        if (results.get("run") or {}).get("interrupted"):
            continue
        out[block["run"]] = Done(run_dir, results)
    return out


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
    combos = order(combos)
    outcome = Outcome()
    todo: list[tuple[Combination, int]] = []
    for c in combos:
        tally = outcome.tallies.setdefault(c.name, Tally())
        finished = done_runs(c.opts.results_dir, c)
        for k in range(1, matrix.runs + 1):
            if k in finished:
                tally.add(finished[k].verdict)
                outcome.resumed += 1
                say(f"done before: {c.name} run {k} ({finished[k].path})")
            else:
                todo.append((c, k))
    total = len(combos) * matrix.runs
    say(
        f"matrix: {len(combos)} combination(s) x {matrix.runs} run(s) = {total}; "
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
            say(f"[{i}/{len(todo)}] {c.name} run {k}/{matrix.runs}")
            t0 = clock()
            result = run_fn(c.opts, say=say, on_cluster=own)
            durations.append(clock() - t0)
            _mark(result, c, k)
            outcome.tallies[c.name].add(result.verdict)
            outcome.ran += 1
            word = {True: "valid", False: "INVALID"}.get(result.verdict.get("valid"), "unknown")
            say(
                f"[{i}/{len(todo)}] {c.name} run {k}: {word} "
                f"({duration(durations[-1])}) -> {result.run_dir.path}"
            )
            say(progress(outcome.resumed + outcome.ran, total, durations))
            if getattr(result, "interrupted", False):
                say("matrix interrupted: the same command resumes it")
                break
    finally:
        if down is not None and not matrix.keep_cluster:
            for name in owned:
                try:
                    down(name)
                    say(f"removed cluster {name!r}")
                except InsyncError as err:
                    say(f"could not remove cluster {name!r}: {err.one_line()}")
    return outcome


def _mark(result: Any, combo: Combination, run_no: int) -> None:
    """Add the optional ``matrix`` block to the run's test.json (resume reads it)."""
    path = Path(result.run_dir.path) / TEST
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return  # the run never wrote test.json: it will count as not done
    data["matrix"] = matrix_block(combo, run_no)
    write_json(path, data)
