"""The small protocols a fault or a runner needs from a node's database process.

As in Jepsen, optional powers are separate protocols: a nemesis that kills
asks for ``Killable``, one that pauses asks for ``Pausable``; anything that
has log files worth collecting is ``LogFiles``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Killable(Protocol):
    def start(self) -> int:
        """Start the process if it is not running; return its pid."""
        ...

    def kill(self) -> int | None:
        """SIGKILL the process and wait until it is gone; return the pid hit."""
        ...


@runtime_checkable
class Pausable(Protocol):
    def pause(self) -> int | None:
        """SIGSTOP the process; return the pid hit."""
        ...

    def resume(self) -> int | None:
        """SIGCONT the process; return the pid hit."""
        ...


@runtime_checkable
class LogFiles(Protocol):
    def log_files(self) -> list[str]:
        """Paths, on the node, of every log file worth keeping after a run."""
        ...
