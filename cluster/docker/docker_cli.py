"""A thin, typed wrapper around the ``docker`` command-line client.

insync talks to Docker through the CLI rather than the Docker SDK: the CLI is
the one thing every machine (and CI) is guaranteed to have, it follows the
user's own context/``DOCKER_HOST`` settings, and its failures are plain text we
can put in a one-line error. Every module that needs Docker goes through
:func:`run_docker` so that timeouts and error messages are handled in one place.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from harness.base.errors import EnvironmentProblem, InsyncError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DockerError",
    "docker_available",
    "inspect",
    "inspect_one",
    "run_docker",
]

DEFAULT_TIMEOUT_S = 120.0
_STDERR_LIMIT = 400


class DockerError(InsyncError):
    """A ``docker`` command exited non-zero; carries the command and docker's stderr."""

    exit_code = 70

    def __init__(
        self, args: Sequence[str], returncode: int, stderr: str, hint: str | None = None
    ) -> None:
        self.args_run = list(args)
        self.returncode = returncode
        self.stderr = stderr
        detail = " ".join(stderr.split())
        if len(detail) > _STDERR_LIMIT:
            detail = detail[:_STDERR_LIMIT] + "..."
        super().__init__(
            f"`docker {_short(args)}` failed (exit {returncode}): {detail or 'no output'}",
            hint,
        )


def _short(args: Sequence[str]) -> str:
    text = " ".join(args)
    return text if len(text) <= 80 else text[:77] + "..."


def run_docker(
    args: Sequence[str],
    *,
    input: str | bytes | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    check: bool = True,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """Run ``docker <args>`` and capture its output.

    With ``check`` a non-zero exit raises :class:`DockerError` holding docker's
    stderr; a missing client or a timeout raise :class:`EnvironmentProblem`, so
    callers never see a raw ``subprocess`` exception. ``text=False`` returns
    bytes (for ``docker export`` and friends); ``input`` must then be bytes.
    """
    cmd = ["docker", *args]
    if text and isinstance(input, bytes):
        input = input.decode()
    elif not text and isinstance(input, str):
        input = input.encode()
    try:
        proc = subprocess.run(
            cmd, input=input, capture_output=True, timeout=timeout, check=False, text=text
        )
    except FileNotFoundError as exc:
        raise EnvironmentProblem(
            "the `docker` client is not installed",
            "install the Docker CLI (Debian: apt-get install docker.io) and retry",
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentProblem(
            f"`docker {_short(args)}` did not finish within {timeout:g}s",
            "check that the Docker engine is responsive (`docker info`)",
        ) from exc
    if check and proc.returncode != 0:
        stderr = proc.stderr if text else proc.stderr.decode(errors="replace")
        raise DockerError(args, proc.returncode, stderr)
    return proc


def docker_available(timeout: float = 20.0) -> bool:
    """True if the client exists and an engine answers ``docker info``."""
    try:
        proc = run_docker(["info", "--format", "{{.ServerVersion}}"], timeout=timeout, check=False)
    except EnvironmentProblem:
        return False
    return proc.returncode == 0 and bool(proc.stdout.strip())


def inspect(kind: str, names: Sequence[str], *, timeout: float = 30.0) -> list[dict[str, Any]]:
    """``docker <kind> inspect`` parsed as JSON (kind: image, container, network, volume).

    Raises :class:`DockerError` if any of ``names`` does not exist.
    """
    proc = run_docker([kind, "inspect", "--format", "{{json .}}", *names], timeout=timeout)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def inspect_one(kind: str, name: str, *, timeout: float = 30.0) -> dict[str, Any] | None:
    """Inspect one object; ``None`` if it does not exist (any other failure raises)."""
    proc = run_docker(
        [kind, "inspect", "--format", "{{json .}}", name], timeout=timeout, check=False
    )
    if proc.returncode != 0:
        err = proc.stderr.lower()
        if "no such" in err or "not found" in err:
            return None
        raise DockerError([kind, "inspect", name], proc.returncode, proc.stderr)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data
