"""``insync matrix``: the same test over a grid of durability settings, resumably.

Why: "acks=1 loses data under leader kills, acks=all + min.insync=2 + no
unclean election does not" is a claim about a *grid*, checked every night over
many runs and Kafka versions. The package, by job: ``axes`` (what is asked:
axes, one-value options, ``matrix.toml``), ``grid`` (the combinations, those
that cannot work dropped with their reason, ordered so the cluster is rebuilt
as rarely as possible), ``resume`` (runs a previous, interrupted matrix
already finished) and ``drive`` (run the rest, fold the verdicts into one exit
status and a summary table).
"""

from harness.matrix.axes import AXES, RUNS, Matrix, axis_values, merge, read_config, split
from harness.matrix.drive import (
    AfterRun,
    Outcome,
    RunFn,
    Tally,
    drive,
    duration,
    lost_writes,
    progress,
    run_combinations,
    summary,
    with_run,
)
from harness.matrix.grid import (
    NOT_SETTINGS,
    Combination,
    Skipped,
    expand,
    order,
    rebuilds,
    test_name,
)
from harness.matrix.resume import Done, done_runs, mark, matrix_block

_mark = mark  # the name tests knew

__all__ = [
    "AXES",
    "NOT_SETTINGS",
    "RUNS",
    "AfterRun",
    "Combination",
    "Done",
    "Matrix",
    "Outcome",
    "RunFn",
    "Skipped",
    "Tally",
    "axis_values",
    "done_runs",
    "drive",
    "duration",
    "expand",
    "lost_writes",
    "mark",
    "matrix_block",
    "merge",
    "order",
    "progress",
    "read_config",
    "rebuilds",
    "run_combinations",
    "split",
    "summary",
    "test_name",
    "with_run",
]
