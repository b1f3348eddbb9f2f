"""The ``insync`` command line.

Each subcommand lives in its own module under ``harness.commands`` and exposes
``register(subparsers)``; this module only wires them together and turns
deliberate errors (``harness.errors.InsyncError``) into one-line messages.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence

from harness.errors import InsyncError

#: Subcommand modules, in the order ``insync --help`` lists them.
COMMAND_MODULES = ("cluster", "run", "check", "report", "serve", "analyze", "bench", "matrix")

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="insync",
        description="Jepsen-style verification of Apache Kafka: run real clusters, "
        "inject faults, check what happened to the data.",
    )
    parser.add_argument("--version", action="version", version=f"insync {_version()}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log progress (-vv: debug detail)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"harness.commands.{name}")
        module.register(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("insync")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
