"""The one Docker SDK client, and how its failures become insync's one-line errors.

insync talks to the engine through the Docker SDK for Python (``docker``), in
process: no ``docker`` CLI is spawned per call, which is what made a fault on
five nodes cost seconds. The client is made once, the first time it is
needed, from the environment (``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
``DOCKER_CERT_PATH``, as the CLI reads them), and shared by every thread; a
client that could not reach an engine is not kept, so a later call (after
``engine.ensure_engine`` started ``dockerd``) tries again.

Every call into the SDK goes through :func:`docker_errors`, which turns the
SDK's and ``requests``' exceptions into :class:`DockerError` (the engine said
no, exit 70) or :class:`harness.base.errors.EnvironmentProblem` (no engine
answers, exit 69), each with what was being done.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
import requests.exceptions

from harness.base.errors import ClusterError, EnvironmentProblem, InsyncError

__all__ = [
    "DockerError",
    "docker_available",
    "docker_client",
    "docker_errors",
    "engine_address",
    "inspect_one",
    "reset_client",
    "server_version",
]

_DETAIL_LIMIT = 400
_lock = threading.Lock()
Factory = Callable[[], docker.DockerClient]


def _from_env() -> docker.DockerClient:
    _knock(engine_address())
    # version="auto": ask the engine which API it speaks (Debian's docker.io 20.10
    # speaks 1.41, newer engines more); the SDK's default would be too new for old ones.
    return docker.DockerClient.from_env(version="auto", timeout=120, max_pool_size=32)


def _knock(engine: str) -> None:
    """Raise ``ConnectionError`` if nothing listens on the engine's Unix socket.

    The SDK's Unix-socket transport drops the socket of a failed connect without
    closing it (a ``ResourceWarning`` at some later garbage collection): asking
    first, with a socket that is closed either way, keeps "no engine" clean.
    """
    if not engine.startswith("unix://"):
        return  # tcp:// and ssh:// engines: the SDK's own connect says it
    path = engine[len("unix://"):]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5.0)
        try:
            probe.connect(path)
        except OSError as err:
            raise ConnectionError(f"{path}: {err.strerror or err}") from err


@dataclass
class _Shared:
    """The client every thread uses, and how the next one is made (tests swap both)."""

    client: docker.DockerClient | None = None
    factory: Factory = _from_env


_shared = _Shared()


class DockerError(ClusterError):
    """The engine refused or failed a request: what insync asked, and what it said.

    A ``ClusterError`` (exit 70): whoever keeps going past one node's failure
    (collecting logs, teardown) keeps going past this one too."""

    def __init__(self, what: str, detail: str, hint: str | None = None) -> None:
        text = " ".join(detail.split())
        if len(text) > _DETAIL_LIMIT:
            text = text[:_DETAIL_LIMIT] + "..."
        super().__init__(f"Docker {what} failed: {text or 'no detail'}", hint)
        self.what = what
        self.detail = detail


def engine_address() -> str:
    """Where insync looks for the Docker engine (``DOCKER_HOST``, or the usual socket)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def _unreachable(what: str, err: BaseException) -> EnvironmentProblem:
    return EnvironmentProblem(
        f"no Docker engine answers at {engine_address()} ({what}): {_last(err)}",
        "start one (insync starts dockerd itself when run as root), or set DOCKER_HOST",
    )


def _last(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= _DETAIL_LIMIT else text[:_DETAIL_LIMIT] + "..."


@contextmanager
def docker_errors(what: str) -> Iterator[None]:
    """Map an SDK failure during ``what`` to :class:`DockerError` / ``EnvironmentProblem``.

    ``docker.errors.NotFound`` is a ``DockerError`` too: callers that treat
    "no such object" as an answer catch ``NotFound`` inside the block.
    """
    try:
        yield
    except docker.errors.APIError as err:
        raise DockerError(what, str(err.explanation or err)) from err
    except (docker.errors.BuildError, docker.errors.ContainerError) as err:
        raise DockerError(what, _last(err)) from err
    except (requests.exceptions.ConnectionError, ConnectionError) as err:
        raise _unreachable(what, err) from err
    except (requests.exceptions.Timeout, TimeoutError) as err:
        raise EnvironmentProblem(
            f"Docker {what} did not finish in time: {_last(err)}",
            "check that the Docker engine is responsive (`docker info`)",
        ) from err
    except docker.errors.DockerException as err:
        raise _unreachable(what, err) from err


def docker_client() -> docker.DockerClient:
    """The shared client, made on first use; ``EnvironmentProblem`` if no engine answers."""
    with _lock:
        if _shared.client is None:
            with docker_errors("connect"):
                _shared.client = _shared.factory()
        return _shared.client


def reset_client(factory: Factory | None = None) -> None:
    """Forget the shared client (and use ``factory`` to make the next one: tests)."""
    with _lock:
        if _shared.client is not None:
            _shared.client.close()
        _shared.client = None
        _shared.factory = factory or _from_env


def server_version() -> str | None:
    """The engine's version if one answers now, else ``None`` (never raises)."""
    try:
        with docker_errors("version"):
            version: Any = docker_client().version().get("Version", "")
    except InsyncError:
        reset_client()  # the next try must connect afresh
        return None
    return str(version) or None


def docker_available() -> bool:
    """True if an engine answers."""
    return server_version() is not None


def inspect_one(kind: str, name: str) -> dict[str, Any] | None:
    """The engine's inspect document of one container, image, network or volume;
    ``None`` if it does not exist (any other failure raises)."""
    api = docker_client().api
    inspectors: dict[str, Callable[[str], Any]] = {
        "container": api.inspect_container,
        "image": api.inspect_image,
        "network": api.inspect_network,
        "volume": api.inspect_volume,
    }
    with docker_errors(f"inspect {kind} {name}"):
        try:
            data: dict[str, Any] = inspectors[kind](name)
        except docker.errors.NotFound:
            return None
    return data
