"""The exceptions insync raises on purpose, and what the CLI does with them.

Hierarchy::

    InsyncError                 one-line message + what to do; never a traceback
    ├── UsageError              bad options, bad config file, bad combination   (exit 64)
    ├── EnvironmentProblem      no Docker engine, Maven/Debian unreachable, ... (exit 69)
    ├── ClusterError            a node that never became ready, a dead cluster  (exit 70)
    └── HistoryError            an unreadable or malformed history              (exit 3)

Every error a user can cause or meet is one of these, raised with a message that
says *what* is wrong and a ``hint`` that says *what to do*. The CLI prints
``insync: <message> (<hint>)`` on one line and exits with ``exit_code``.
Anything else escaping to the CLI is a bug in insync, and is reported as such.

Kafka client errors are *not* here: whether an operation definitely failed or
may have happened is decided in one place, ``workloads.outcomes``.
"""

from __future__ import annotations


class InsyncError(Exception):
    """Base of every deliberate insync error."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        return " ".join(text.split())


class UsageError(InsyncError):
    """The user asked for something that cannot work: fix the options or config."""

    exit_code = 64


class EnvironmentProblem(InsyncError):
    """Something outside insync is missing or unreachable (Docker, Maven, apt)."""

    exit_code = 69


class ClusterError(InsyncError):
    """The Kafka cluster could not be brought up, reached or torn down."""

    exit_code = 70


class HistoryError(InsyncError):
    """A history file is unreadable or does not follow docs/HISTORY.md."""

    exit_code = 3

    def __init__(self, message: str, line: int | None = None, hint: str | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}", hint)
        self.line = line
