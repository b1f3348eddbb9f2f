"""An argument parser whose every complaint is a one-line ``UsageError`` (exit 64).

It lives on the ground floor because two floors parse arguments: the CLI
(every command and subcommand) and the runner, which re-parses the ``argv`` a
stored test.json recorded (``--replay``). argparse's own errors exit 2, which
is also the checker's "unknown" verdict: a script could not tell a mistyped
flag from a run that proved nothing.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from harness.base.errors import UsageError


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are ``UsageError``: one line, exit 64.

    ``add_subparsers`` makes every subparser of the same class, so each command
    and subcommand gets this without doing anything. ``--help`` and
    ``--version`` still print and exit 0.
    """

    def error(self, message: str) -> NoReturn:
        message = re.sub(r"^argument ([^:]+): ", r"\1: ", message)
        raise UsageError(message, hint=f"see `{self.prog} --help`")

    # One signature for typeshed's three overloads (it accepts what each of them does).
    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        """Refuse unknown arguments in the (sub)parser that saw them, so the hint
        names that command's ``--help`` rather than the top level's."""
        ns, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns, extras
