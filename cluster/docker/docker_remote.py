"""``Remote`` for a Docker container: ``docker exec`` and ``docker cp``."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cluster.docker.docker_cli import run_docker
from cluster.remote import ExecResult, RemoteCommandFailed
from harness.base.errors import ClusterError, EnvironmentProblem


@dataclass(frozen=True)
class DockerRemote:
    """Reach node ``name`` through its container ``container``."""

    name: str
    container: str

    def exec(
        self,
        argv: Sequence[str],
        *,
        input: str | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> ExecResult:
        flags = ["-i"] if input is not None else []
        try:
            proc = run_docker(
                ["exec", *flags, self.container, *argv], input=input, timeout=timeout, check=False
            )
        except EnvironmentProblem as err:  # a timeout inside the node is the node's fault
            raise ClusterError(f"on {self.name}: {err.message}") from err
        result = ExecResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
        if check and not result.ok:
            raise RemoteCommandFailed(self.name, result)
        return result

    def upload(self, local: Path, remote_path: str) -> None:
        run_docker(["cp", str(local), f"{self.container}:{remote_path}"])

    def download(self, remote_path: str, local: Path) -> None:
        local.parent.mkdir(parents=True, exist_ok=True)
        try:
            run_docker(["cp", f"{self.container}:{remote_path}", str(local)])
        except subprocess.SubprocessError as err:  # pragma: no cover - run_docker wraps these
            raise ClusterError(f"on {self.name}: cannot copy {remote_path}: {err}") from err
