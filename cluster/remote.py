"""How insync reaches a node: the ``Remote`` protocol.

Everything that touches a node (starting Kafka, injecting faults, collecting
logs) goes through an explicit ``Remote`` object instead of a global session,
so the same code drives Docker containers and SSH hosts, and tests can hand in
a fake built from a handler function (``tests/support/fake_remote.py``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from harness.base.errors import ClusterError


@dataclass(frozen=True)
class ExecResult:
    """What a command run on a node did."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class RemoteCommandFailed(ClusterError):
    """A command on a node exited non-zero where success was required."""

    def __init__(self, node: str, result: ExecResult) -> None:
        detail = (result.stderr or result.stdout).strip().splitlines()
        last = detail[-1] if detail else "no output"
        super().__init__(
            f"on {node}: `{shlex.join(result.argv)}` exited {result.exit_code}: {last}"
        )
        self.node = node
        self.result = result


@runtime_checkable
class Remote(Protocol):
    """Run commands on one node and move files to and from it."""

    @property
    def name(self) -> str:
        """The node's name (``n1``), used in every message about it."""
        ...

    def exec(
        self,
        argv: Sequence[str],
        *,
        input: str | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> ExecResult: ...

    def upload(self, local: Path, remote_path: str) -> None: ...

    def download(self, remote_path: str, local: Path) -> None: ...


@runtime_checkable
class Reachable(Protocol):
    """A node whose reachability can be asked cheaply while a run goes on.

    The run's host watch (``harness.run.watch``) asks every few seconds, so a node
    lost to the harness's own host (a container removed from outside, an engine
    restarted, an SSH host gone silent) stops the run with one line instead of
    leaving it to fail op by op. A ``Remote`` without it is simply not watched.
    """

    def unreachable(self, timeout: float) -> str | None:
        """Why the node cannot be reached now (one clause, e.g. "its container
        insync-n2 was removed"), or ``None`` when it answers. Never raises."""
        ...


@runtime_checkable
class TreeUpload(Protocol):
    """A node that takes many files in one transfer (an optional power of a ``Remote``).

    Docker's copy API costs one round trip through the engine per call, so a build of
    60 jars copied file by file takes 15-30 s a node on a loaded host; one archive
    takes one call. ``cluster.ssh.host_setup.sync_jars`` uses it where a node has it.
    """

    def upload_tree(self, root: Path, paths: Sequence[str], remote_dir: str) -> None:
        """Copy each of ``paths`` (relative POSIX paths under ``root``) to the same path
        under ``remote_dir``, whose subdirectories must exist."""
        ...


#: ``$0`` of every ``sh -c`` script insync runs (what ``ps`` and error messages show).
SH_NAME = "insync"


def sh(remote: Remote, script: str, *args: str, timeout: float = 60.0,
       check: bool = True) -> ExecResult:
    """Run a POSIX shell snippet on the node, with ``args`` as its ``"$1"``, ``"$2"``, ...

    ``script`` is insync's own text and never holds a value from outside (an
    inventory, a scenario, a flag): such values travel as ``args``, separate
    argv entries that the ``Remote`` quotes once (SSH: ``shlex.join``; Docker:
    an argv with no shell), so no value is ever parsed as shell syntax.
    """
    return remote.exec(["sh", "-c", script, SH_NAME, *args], timeout=timeout, check=check)


def write_file(remote: Remote, path: str, text: str, *, mode: str = "644") -> None:
    """Write ``text`` to ``path`` on the node, creating parent directories."""
    script = 'mkdir -p "$(dirname "$1")" && cat > "$1" && chmod "$2" "$1"'
    remote.exec(["sh", "-c", script, "write_file", path, mode], input=text)


def read_if_there(remote: Remote, path: str) -> str:
    """The text of ``path`` on the node, or ``""`` when it is missing or unreadable."""
    return sh(remote, 'cat -- "$1" 2>/dev/null', path, check=False).stdout
