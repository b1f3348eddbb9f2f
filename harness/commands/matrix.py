"""``insync matrix``: ``insync run`` over a grid of settings, resumable, one verdict.

Exit status: 0 every run valid, 1 any run invalid, 2 any unknown (none invalid).
The grid, resume rule and ``matrix.toml`` format are in ``harness.matrix``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run import RunOptions, RunResult

EPILOG = """\
axes (comma lists): --acks, --min-insync, --replication-factor,
  --unclean-leader-election, --kafka-version. --nemesis keeps `insync run`'s
  meaning (kill,partition = both faults together); repeat it for several
  values: --nemesis kill,partition --nemesis none. Every other option is one
  value for all runs.

matrix.toml (--config): the axes as arrays, other options as scalars, top
  level or under [matrix]; also runs = N and keep-cluster = true|false:
    [matrix]
    acks = ["1", "all"]
    min-insync = [1, 2]
    nemesis = ["kill,partition", "none"]
    kafka-version = ["3.9.x", "4.1.x"]
    runs = 3
    time-limit = 60

resume: a run is skipped when <results-dir>/<test-name>/*/ holds a test.json
  whose "matrix" block names the same combination, run number and settings,
  and a results.json of a run that was not interrupted; finished runs of other
  settings are not reused, and one line says which settings changed.
"""


def register(sub: Any) -> None:
    from harness.matrix import RUNS
    from harness.run.options import add_arguments

    parser: argparse.ArgumentParser = sub.add_parser(
        "matrix",
        help="run every combination of durability settings x --runs, resumably",
        description="Run `insync run` for every combination of the given axes, --runs "
        "times each, skipping invalid combinations and runs already stored, reusing the "
        "cluster while its spec stays the same, and removing it at the end unless "
        "--keep-cluster. Test names: matrix-acks1-isr2-uncleanfalse-kill+partition-4.1.x. "
        "Exit status: 0 all valid, 1 any invalid, 2 any unknown.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        conflict_handler="resolve",  # --nemesis is redefined below
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="read axes and options from a matrix.toml (flags win)",
    )
    parser.add_argument(
        "--runs", type=RUNS.arg_type(), default=None, metavar=RUNS.metavar, help=RUNS.help
    )
    add_arguments(parser)
    parser.add_argument(  # repeatable: each occurrence is one axis value
        "--nemesis",
        dest="nemesis",
        action="append",
        default=argparse.SUPPRESS,
        metavar="FAULTS",
        help="faults of one run, comma-separated, all together (as `insync run`); "
        "repeat the flag for several axis values",
    )
    parser.set_defaults(handler=_handle)


_NOT_OPTIONS = frozenset({"config", "runs", "handler", "command", "verbose", "teardown"})


def _handle(args: argparse.Namespace) -> int:
    from cluster import provisioner_for
    from harness.matrix import Matrix, drive, merge, read_config, split, summary
    from harness.run import run
    from harness.run.cluster_options import ClusterOptions
    from harness.run.options import BY_NAME

    raw = {k: v for k, v in vars(args).items() if k not in _NOT_OPTIONS}
    base, axes = split(raw, "")
    runs = 1 if args.runs is None else args.runs
    keep_given = hasattr(args, "teardown")  # --keep-cluster is --teardown false
    keep = keep_given and not BY_NAME["teardown"].parse(args.teardown)
    flags = Matrix(base, axes, runs, keep)
    file = read_config(args.config) if args.config else None
    matrix = merge(file, flags, runs_given=args.runs is not None, keep_given=keep_given)

    def say(text: str) -> None:
        print(text, file=sys.stdout, flush=True)

    def run_one(
        opts: RunOptions,
        *,
        say: Callable[[str], None] | None = say,
        on_cluster: Callable[[str], None] | None = None,
    ) -> RunResult:
        return run(opts, say=say, live=False, on_cluster=on_cluster)

    def down(name: str) -> str:
        # The cluster's nodes are where the runs put them: SSH hosts with --hosts.
        where = {k: raw[k] for k in ("hosts", "accept_new_host_keys") if raw.get(k) is not None}
        placement = ClusterOptions(**{k: BY_NAME[k].parse(v) for k, v in where.items()})
        return provisioner_for(placement.placement()).down(name)

    outcome = drive(matrix, run_fn=run_one, say=say, down=down)
    print(summary(outcome), flush=True)
    return outcome.exit_code
