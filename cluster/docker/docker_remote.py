"""``Remote`` for a Docker container, through the Docker SDK: exec, put/get archive.

An exec the engine refuses (no such container, not running) is a command that
exited 1 with the engine's message, as with ``docker exec``, so ``check=False``
callers (log collection, probes) get a result, not an exception. An exec is
three requests to the engine on the shared client (create, start
with the connection handed over as a socket, inspect for the exit code) and no
process of ours: a fault on five nodes is five of these in parallel. Reading
the socket ourselves, not with the SDK's helpers, is what gives an exec a
deadline (the SDK's reader blocks in ``poll`` without one) and lets it feed
``input`` on stdin and then half-close it, so ``cat > file`` sees its end.
"""

from __future__ import annotations

import io
import socket
import struct
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cluster.docker.client import DockerError, docker_client, docker_errors, engine_address
from cluster.remote import ExecResult, RemoteCommandFailed
from harness.base.errors import ClusterError, EnvironmentProblem, InsyncError

#: Docker's multiplexed stream: a frame header is (stream, 3 pad bytes, big-endian length).
_HEADER = struct.Struct(">BxxxL")
_STDOUT, _STDERR = 1, 2
#: How long the engine may take to record an exec's exit code once its output ended.
_EXIT_CODE_WAIT_S = 5.0


def _socket_of(handed: Any) -> socket.socket:
    """The ``socket.socket`` under what ``exec_start(socket=True)`` hands back."""
    raw = getattr(handed, "_sock", handed)
    if not isinstance(raw, socket.socket):
        raise ClusterError(f"the Docker SDK handed back a {type(raw).__name__}, not a socket")
    return raw


def _reader(handed: Any, sock: socket.socket) -> Callable[[int], bytes]:
    """How to read the stream: through the HTTP response's buffer when there is one.

    The response headers were read through a buffer that may already hold the
    first frames (a fast command answers in the same packet); reading the bare
    socket would lose them. ``read1`` hands out what is buffered, then reads the
    socket, whose timeout still applies.
    """
    response = getattr(handed, "_response", None)
    buffered = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    read1 = getattr(buffered, "read1", None)
    return read1 if callable(read1) else sock.recv


def demultiplex(data: bytes) -> tuple[bytes, bytes]:
    """Split Docker's multiplexed exec output into (stdout, stderr)."""
    out, err = bytearray(), bytearray()
    pos = 0
    while pos + _HEADER.size <= len(data):
        stream, length = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        chunk = data[pos:pos + length]
        pos += length
        (err if stream == _STDERR else out).extend(chunk)
    return bytes(out), bytes(err)


def _converse(
    sock: socket.socket, read: Callable[[int], bytes], stdin: bytes | None, deadline: float
) -> bytes:
    """Send ``stdin`` (then half-close), read until the engine closes the stream."""
    if stdin is not None:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            sock.sendall(stdin)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the command ended without reading it all: its output and exit code tell
    received = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = read(65536)
        if not chunk:
            return bytes(received)
        received.extend(chunk)


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
        args = tuple(argv)
        deadline = time.monotonic() + timeout
        api = docker_client().api
        try:
            with docker_errors(f"exec on {self.name}"):
                exec_id = api.exec_create(self.container, list(args),
                                          stdin=input is not None)["Id"]
                handed = api.exec_start(exec_id, socket=True)
        except DockerError as refused:  # no such container, not running: as `docker exec`
            return self._checked(ExecResult(args, 1, "", refused.detail), check)
        with docker_errors(f"exec on {self.name}"):
            sock = _socket_of(handed)
            try:
                stdin = None if input is None else input.encode()
                data = _converse(sock, _reader(handed, sock), stdin, deadline)
            except TimeoutError as late:
                raise ClusterError(
                    f"on {self.name}: `{' '.join(args)[:80]}` did not finish within {timeout:g}s"
                ) from late
            finally:  # the connection was handed over: it is ours to close
                handed.close()
                sock.close()
            code = self._exit_code(api, exec_id)
        out, err = demultiplex(data)
        result = ExecResult(args, code, out.decode(errors="replace"), err.decode(errors="replace"))
        return self._checked(result, check)

    def unreachable(self, timeout: float) -> str | None:
        """One inspect of the container (``cluster.remote.Reachable``): no exec, so
        asking every few seconds costs the engine next to nothing. The nemesis never
        stops or pauses a container (its faults act on processes inside), so a
        container that is not running was stopped from outside."""
        from cluster.docker.client import inspect_one

        try:
            found = inspect_one("container", self.container)
        except EnvironmentProblem:
            # No node's name in it: an engine gone loses every node for this one reason,
            # and the run's stop line says it once for all of them.
            return f"the Docker engine at {engine_address()} does not answer"
        except InsyncError as err:
            return f"its container {self.container} cannot be inspected ({err.message})"
        if found is None:
            return f"its container {self.container} was removed"
        state = found.get("State") or {}
        if not state.get("Running") or state.get("Paused"):
            return f"its container {self.container} is {state.get('Status') or 'not running'}"
        return None

    def _checked(self, result: ExecResult, check: bool) -> ExecResult:
        if check and not result.ok:
            raise RemoteCommandFailed(self.name, result)
        return result

    def _exit_code(self, api: Any, exec_id: str) -> int:
        """The exec's exit code; the engine may record it a moment after the stream ends."""
        give_up = time.monotonic() + _EXIT_CODE_WAIT_S
        pause = 0.001
        while True:
            info = api.exec_inspect(exec_id)
            if not info.get("Running") and info.get("ExitCode") is not None:
                return int(info["ExitCode"])
            if time.monotonic() > give_up:
                raise ClusterError(f"on {self.name}: the engine never reported an exit code")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def upload(self, local: Path, remote_path: str) -> None:
        """Copy the file ``local`` to ``remote_path`` (its directory must exist)."""
        target = PurePosixPath(remote_path)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(str(local), arcname=target.name)
        with docker_errors(f"copy {local} to {self.name}:{remote_path}"):
            docker_client().api.put_archive(self.container, str(target.parent), buf.getvalue())

    def upload_tree(self, root: Path, paths: Sequence[str], remote_dir: str) -> None:
        """Copy ``paths`` under ``root`` to the same paths under ``remote_dir``, in one
        archive (``cluster.remote.TreeUpload``)."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for rel in paths:
                tar.add(str(root / rel), arcname=rel)
        with docker_errors(f"copy {len(paths)} files to {self.name}:{remote_dir}"):
            docker_client().api.put_archive(self.container, remote_dir, buf.getvalue())

    def download(self, remote_path: str, local: Path) -> None:
        """Copy the file ``remote_path`` on the node to ``local``."""
        local.parent.mkdir(parents=True, exist_ok=True)
        with docker_errors(f"copy {self.name}:{remote_path}"):
            stream, _stat = docker_client().api.get_archive(self.container, remote_path)
            data = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = next((m for m in tar.getmembers() if m.isfile()), None)
            extracted = tar.extractfile(member) if member is not None else None
            if extracted is None:
                raise ClusterError(f"on {self.name}: {remote_path} is not a regular file")
            local.write_bytes(extracted.read())
