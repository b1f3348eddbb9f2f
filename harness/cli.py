"""The ``insync`` command line.

Each subcommand lives in its own module under ``harness.commands`` and exposes
``register(subparsers)``; this module only wires them together and turns
deliberate errors (``harness.base.errors.InsyncError``) into one-line messages.

Usage errors of every command and subcommand (unknown flag, missing argument,
bad choice, bad type) go through :class:`Parser`, which every subparser
inherits: one line and exit 64, never argparse's usage block and exit 2,
because 2 is the checker's "unknown" verdict and a script must tell them apart.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import sys
from collections.abc import Callable, Sequence

from harness.base.args import Parser
from harness.base.errors import EnvironmentProblem, InsyncError, UsageError
from harness.base.version import insync_version

#: Subcommand modules, in the order ``insync --help`` lists them.
COMMAND_MODULES = (
    "cluster", "run", "check", "report", "serve", "analyze", "bench", "matrix", "scenario",
    "catalogue", "versions",
)

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="insync",
        description="Jepsen-style verification of Apache Kafka: run real clusters, "
        "inject faults, check what happened to the data.",
    )
    parser.add_argument("--version", action="version", version=f"insync {insync_version()}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log progress (-vv: debug detail)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"harness.commands.{name}")
        module.register(sub)
    return parser



#: A file system that takes no more: a condition of the machine, not a bug of insync.
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        print(f"insync: {err.one_line()}", file=sys.stderr)
        return err.exit_code
    if args.verbose:
        logging.basicConfig(
            level=logging.DEBUG if args.verbose > 1 else logging.INFO,
            format="%(asctime)s %(name)s %(message)s",
        )
    handler: Handler = args.handler
    try:
        return handler(args)
    except InsyncError as err:
        print(f"insync: {err.one_line()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("insync: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:
        if err.errno not in FULL:
            raise
        where = f" writing {err.filename}" if err.filename else ""
        print(f"insync: {err.strerror}{where} (free some space, or pass --results-dir "
              "on another file system; what was written so far is kept)", file=sys.stderr)
        return EnvironmentProblem.exit_code
