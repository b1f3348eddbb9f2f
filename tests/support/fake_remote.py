"""``FakeRemote``: a ``cluster.remote.Remote`` whose commands a handler function answers.

It lives with the tests because nothing in the product runs against it: unit
tests hand it to ``KafkaNode``s and fake provisioners so that every command a
real node would get reaches the handler, recorded in ``calls``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cluster.remote import ExecResult, RemoteCommandFailed
from harness.base.errors import ClusterError

Handler = Callable[[tuple[str, ...], str | None], tuple[int, str, str]]


@dataclass
class FakeRemote:
    """A ``Remote`` whose commands are answered by a handler function.

    The handler gets ``(argv, stdin)`` and returns ``(exit_code, stdout, stderr)``;
    every call is recorded in ``calls`` so tests can assert on what was run.
    """

    name: str
    handler: Handler
    calls: list[tuple[str, ...]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)

    def exec(
        self,
        argv: Sequence[str],
        *,
        input: str | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> ExecResult:
        args = tuple(argv)
        self.calls.append(args)
        code, out, err = self.handler(args, input)
        result = ExecResult(args, code, out, err)
        if check and code != 0:
            raise RemoteCommandFailed(self.name, result)
        return result

    def upload(self, local: Path, remote_path: str) -> None:
        self.files[remote_path] = local.read_bytes()

    def download(self, remote_path: str, local: Path) -> None:
        if remote_path not in self.files:
            raise ClusterError(f"on {self.name}: no file {remote_path}")
        local.write_bytes(self.files[remote_path])
