"""``insync run``: one verification run against a real cluster, ending with a verdict.

Exit status is the checker's: 0 valid, 1 invalid, 2 unknown (3 only if the
run's own history were malformed, which would be a bug in insync).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    from harness.run.options import add_arguments

    parser: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run a workload (and faults) against a real cluster, then check the history",
        description="Bring up (or reuse) a Kafka cluster, run producers and consumers while "
        "the nemesis injects faults, drain, and check the history. The run is stored in "
        "<results-dir>/<name>/<timestamp>/ (results/latest points at it). The cluster is kept "
        "for the next run unless --teardown is given. Exit status: 0 valid, 1 invalid, "
        "2 unknown.",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="read options from a TOML file (flags given here win)",
    )
    parser.add_argument(
        "--replay",
        metavar="TEST_JSON",
        default=None,
        help="re-run a stored test (its test.json or run directory) with the "
        "same settings and seed",
    )
    add_arguments(parser)
    parser.set_defaults(handler=_handle)


_NOT_OPTIONS = frozenset({"config", "replay", "handler", "command", "verbose"})


def _handle(args: argparse.Namespace) -> int:
    from harness.run import options_from, run
    from harness.run.summary import render

    flags = {k: v for k, v in vars(args).items() if k not in _NOT_OPTIONS}
    opts = options_from(flags, config=args.config, replay=args.replay)
    result = run(opts)
    print(render(result), file=sys.stdout, flush=True)
    return result.exit_code
